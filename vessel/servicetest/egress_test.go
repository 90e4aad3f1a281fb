package servicetest

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// recorder is a stand-in for the egress: it notes every request and
// refuses them all, the way the egress refuses a destination, so nothing
// the vessel asks for ever leaves this machine.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.mu.Unlock()
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// TestVesselReachesOutOnlyThroughTheEgress runs the real vessel binary and
// shows three promises of its wiring: web tools go through
// VESSEL_EGRESS_PROXY, issuer key sets are fetched through it too, and model
// calls carry the egress token even when the real model key is in the
// vessel's environment.
func TestVesselReachesOutOnlyThroughTheEgress(t *testing.T) {
	proxied := &recorder{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() && r.Method != http.MethodConnect && r.URL.Path == "/health" {
			// The vessel's health check of the egress itself, not a
			// request through it.
			_, _ = w.Write([]byte("ok"))
			return
		}
		proxied.add(r.Method + " " + r.Host)
		w.Header().Set("X-Egress-Denied", "stand-in egress refuses everything")
		w.WriteHeader(http.StatusForbidden)
	}))
	defer proxy.Close()
	modelAuth := &recorder{}
	const realKey = "real-model-key-that-only-the-egress-may-hold"

	s := startStackWith(t, stackConfig{
		tools: `["bash", "read", "webfetch"]`,
		deployment: `
[[issuers]]
id = "idp"
issuer = "https://iam.example.test/realms/test"
audience = "vessel"
jwks_url = "https://iam.example.test/certs"
agents = ["guide"]
`,
		env: []string{"VESSEL_EGRESS_PROXY=" + proxy.URL, "VESSEL_UPSTREAM_MODEL_KEY=" + realKey},
		model: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				modelAuth.add(r.Header.Get("Authorization"))
				h.ServeHTTP(w, r)
			})
		},
	})

	// webfetch: the request goes to the egress proxy, and its refusal
	// reaches the model as a failed tool call.
	var fetched map[string]any
	for ev, err := range s.client().SendStreamingMessage(alice(), &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("#script:web"))}) {
		if err != nil {
			t.Fatal(err)
		}
		if d := dataOf(ev); d["type"] == "tool.finished" && d["name"] == "webfetch" {
			fetched = d
		}
	}
	if fetched == nil || fetched["ok"] != false || !strings.Contains(fetched["preview"].(string)+" "+stringOf(fetched["error"]), "refuses everything") {
		t.Fatalf("webfetch did not report the egress refusal: %v", fetched)
	}
	if !slices.Contains(proxied.all(), "GET docs.example.test") {
		t.Fatalf("the egress proxy never saw the fetch: %v", proxied.all())
	}

	// Model calls: only the egress token, never the real key.
	auths := modelAuth.all()
	if len(auths) == 0 {
		t.Fatal("the model was never called")
	}
	for _, a := range auths {
		if a != "Bearer egress-token" {
			t.Fatalf("a model call carried %q, not the egress token", a)
		}
	}

	// A token naming a key the vessel lacks: the key set is asked of the
	// issuer through the egress, and the refused fetch leaves the caller out.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jk, err := jwk.Import(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := jk.Set(jwk.KeyIDKey, "k1"); err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.NewBuilder().Issuer("https://iam.example.test/realms/test").Audience([]string{"vessel"}).
		Subject("bob").IssuedAt(time.Now()).Expiration(time.Now().Add(5 * time.Minute)).Build()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), jk))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.vesselURL+"/agents/guide",
		strings.NewReader(`{"jsonrpc":"2.0","id":"1","method":"GetTask","params":{"id":"t1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+string(signed))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a token whose key could not be fetched got HTTP %d, want 401", resp.StatusCode)
	}
	if !slices.Contains(proxied.all(), "CONNECT iam.example.test:443") {
		t.Fatalf("the key set was not fetched through the egress: %v", proxied.all())
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}
