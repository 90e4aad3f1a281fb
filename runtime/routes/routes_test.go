package routes

import "testing"

// FuzzResolveRoute: any route the check accepts has a base URL without a
// query, credentials or fragment, an auth style, and only headers a route
// may set; nothing panics.
func FuzzResolveRoute(f *testing.F) {
	f.Add("https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "api-key", "env:K", "api-version", "1", "X-Team", "a", false)
	f.Add("http://127.0.0.1:11434/v1", "", "", "", "", "Connection", "close", true)
	f.Add("https://u:p@h/v1#f", "bearer", "literal", "a", "b", "Authorization", "x\r\ny", false)
	f.Fuzz(func(t *testing.T, u, auth, key, qk, qv, hk, hv string, allowHTTP bool) {
		r := ModelRoute{URL: u, Auth: auth, Key: key, Query: map[string]string{qk: qv}, Headers: map[string]string{hk: hv}, AllowHTTP: allowHTTP}
		rr, ps := ResolveRoute("x", r, key != "")
		if len(ps) > 0 {
			return
		}
		if rr.Base == nil || rr.Base.RawQuery != "" || rr.Base.User != nil || rr.Base.Fragment != "" || (rr.Base.Scheme == "http" && !allowHTTP) {
			t.Fatalf("accepted base %v", rr.Base)
		}
		if rr.Auth != AuthBearer && rr.Auth != AuthAPIKey && rr.Auth != AuthNone {
			t.Fatalf("auth %q", rr.Auth)
		}
		for h, vs := range rr.Headers {
			for _, v := range vs {
				if RouteHeaderProblem(h, v) != "" {
					t.Fatalf("accepted header %q: %q", h, v)
				}
			}
		}
	})
}
