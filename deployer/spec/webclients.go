package spec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// webClient is one entry of the clients file, in the shape the egress
// reads (egress/webproxy.ClientEntry).
type webClient struct {
	Name  string   `json:"name"`
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Mode  string   `json:"mode,omitempty"`
}

// WebClients is the egress's clients file for d: the vessel's own client
// (issuers' key sets, push deliveries) with no names policy, each agent's
// web tools with its [agents.web] table, and, with a search container, the
// search client allowed only the hosts of its engines ([search] engines).
func WebClients(d *Deployment) ([]byte, error) {
	list := []webClient{{Name: VesselWebClient}}
	for _, a := range d.Agents {
		c := webClient{Name: AgentWebClient(a.ID)}
		if a.Web != nil {
			c.Allow, c.Deny = a.Web.Allow, a.Web.Deny
			if a.Web.Mode == WebReport {
				c.Mode = WebReport
			}
		}
		list = append(list, c)
	}
	if d.Search.Provider == DefaultProvider {
		if len(d.Search.Engines) == 0 {
			return nil, fmt.Errorf("[search] engines is empty; the search client would be allowed every name")
		}
		list = append(list, webClient{Name: SearchWebClient, Allow: d.Search.Engines})
	}
	b, err := json.MarshalIndent(struct {
		Clients []webClient `json:"clients"`
	}{list}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("web clients: %w", err)
	}
	return append(b, '\n'), nil
}

// SearchProxyURL is the search container's proxy: proxyBase (such as
// "http://egress:3128") with the search client's name and token.
func SearchProxyURL(egressToken, proxyBase string) string {
	scheme, host, _ := strings.Cut(proxyBase, "://")
	return scheme + "://" + SearchWebClient + ":" + WebClientToken(egressToken, SearchWebClient) + "@" + host
}
