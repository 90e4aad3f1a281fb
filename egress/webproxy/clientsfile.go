package webproxy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/astraldeep/astralvessel-go/runtime/domains"
	"github.com/astraldeep/astralvessel-go/runtime/redact"
	"github.com/astraldeep/astralvessel-go/runtime/webclients"
)

// ClientsFile is the JSON document VESSEL_EGRESS_WEB_CLIENTS_FILE holds:
// every client of the web proxy and its domain policy. It holds no
// secret: each client's token is webclients.Token of the egress token.
type ClientsFile struct {
	Clients []ClientEntry `json:"clients"`
}

// ClientEntry is one client in a ClientsFile.
type ClientEntry struct {
	Name  string   `json:"name"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Mode is webclients.Enforce (default) or webclients.Report.
	Mode string `json:"mode,omitempty"`
}

// LoadClients parses a ClientsFile strictly (unknown fields refused) and
// derives each client's token from egressToken.
func LoadClients(b []byte, egressToken string) (*Clients, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f ClientsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("web clients: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("web clients: more than one JSON document")
	}
	if len(f.Clients) == 0 {
		return nil, fmt.Errorf("web clients: the file lists no client")
	}
	list := make([]Client, 0, len(f.Clients))
	for _, e := range f.Clients {
		pol, err := domains.NewPolicy(e.Allow, e.Deny)
		if err != nil {
			return nil, fmt.Errorf("web clients: %s: %w", e.Name, err)
		}
		var report bool
		switch e.Mode {
		case "", webclients.Enforce:
		case webclients.Report:
			report = true
		default:
			return nil, fmt.Errorf("web clients: %s: unknown mode %q; want %s or %s", e.Name, e.Mode, webclients.Enforce, webclients.Report)
		}
		list = append(list, Client{Name: e.Name, Token: redact.Secret(webclients.Token(egressToken, e.Name)), Names: pol, Report: report})
	}
	return NewClients(list)
}
