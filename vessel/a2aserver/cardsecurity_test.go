package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

// TestCardSecuritySchemes: the served card declares the bearer scheme and
// the user header scheme, and its first security requirement holds both.
func TestCardSecuritySchemes(t *testing.T) {
	h := newHarness(t)
	status, _, body := h.get("/agents/field-guide/.well-known/agent-card.json", nil)
	if status != 200 {
		t.Fatalf("card: %d %s", status, body)
	}
	var card struct {
		Schemes map[string]map[string]map[string]any `json:"securitySchemes"`
		Reqs    []map[string]map[string][]string     `json:"securityRequirements"`
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	if s := card.Schemes["bearer"]["httpAuthSecurityScheme"]; s["scheme"] != "Bearer" {
		t.Errorf("bearer scheme: %v", card.Schemes["bearer"])
	}
	if s := card.Schemes["user"]["apiKeySecurityScheme"]; s["location"] != "header" || s["name"] != "X-Vessel-User" {
		t.Errorf("user scheme: %v", card.Schemes["user"])
	}
	if len(card.Reqs) == 0 || len(card.Reqs[0]["schemes"]) != 2 {
		t.Fatalf("securityRequirements: %s", body)
	}
	for _, name := range []string{"bearer", "user"} {
		if _, ok := card.Reqs[0]["schemes"][name]; !ok {
			t.Errorf("the first requirement lacks %s: %v", name, card.Reqs[0])
		}
	}
	// The 0.3 card declares them too.
	status, _, body = h.get("/agents/field-guide/a2a/.well-known/agent-card.json", nil)
	var v03 map[string]any
	if status != 200 || json.Unmarshal(body, &v03) != nil || v03["securitySchemes"] == nil || v03["security"] == nil {
		t.Errorf("0.3 card: %d %s", status, body)
	}
}

// credentialsFor is an a2a-go AuthInterceptor holding one scheme's
// credential: a2a-go's interceptor sends one credential per call, so a
// requirement of two schemes takes one interceptor each.
func credentialsFor(sid a2aclient.SessionID, scheme a2a.SecuritySchemeName, cred string) a2aclient.CallInterceptor {
	st := a2aclient.NewInMemoryCredentialsStore()
	st.Set(sid, scheme, a2aclient.AuthCredential(cred))
	return &a2aclient.AuthInterceptor{Service: st}
}

// TestCardSecurityHonoured: on each binding, a2a-go's client given
// credentials by scheme name applies them as the card declares them (the
// key as a bearer token, the user in its header) and is let in; without
// them it is refused as unauthenticated.
func TestCardSecurityHonoured(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	card, err := agentcard.NewResolver(h.httpc).Resolve(context.Background(), h.url+"/agents/field-guide")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			const sid = "s1"
			cl := h.cardClientWith(card, b,
				credentialsFor(sid, a2aserver.SchemeBearer, h.keyApp1),
				credentialsFor(sid, a2aserver.SchemeUser, "alice"))
			ctx := a2aclient.AttachSessionID(context.Background(), sid)
			if _, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil {
				t.Fatalf("with the card's schemes: %v", err)
			}
			_, err := cl.ListTasks(context.Background(), &a2a.ListTasksRequest{})
			// a2a-go's JSON-RPC transport reads no body of an HTTP 401.
			if err == nil || (b != a2a.TransportProtocolJSONRPC && !errors.Is(err, a2a.ErrUnauthenticated)) {
				t.Fatalf("without credentials: %v, want unauthenticated", err)
			}
		})
	}
}
