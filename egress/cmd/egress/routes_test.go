package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestRoutesFromEnv: VESSEL_EGRESS_ROUTES names each key's variable; the
// key is read from the egress's own environment, and a route whose key is
// not set stops the start with the route and variable named (never a key).
func TestRoutesFromEnv(t *testing.T) {
	routes := `{"azure":{"url":"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21","key_env":"AZ_KEY","auth":"api-key"},` +
		`"local":{"url":"http://127.0.0.1:11434/v1","allow_http":true}}`
	base := map[string]string{"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1", "VESSEL_EGRESS_TOKEN": "t", "VESSEL_EGRESS_ROUTES": routes, "AZ_KEY": "az-secret"}
	c, err := loadConfig(nil, env(base))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.routes) != 2 || c.routes[0].Name != "azure" || c.routes[0].Key != "az-secret" || c.routes[1].Key != "" {
		t.Fatalf("routes %+v", c.routes)
	}
	delete(base, "AZ_KEY")
	err = run(context.Background(), []string{"--model-listen", "127.0.0.1:0", "--proxy-listen", "127.0.0.1:0"}, env(base), zap.NewNop(), nil)
	if err == nil || !strings.Contains(err.Error(), "route azure") || !strings.Contains(err.Error(), "AZ_KEY is empty") {
		t.Fatalf("missing key: %v", err)
	}
	base["VESSEL_EGRESS_ROUTES"] = `{"azure":{"url":"https://a.test/v1","key":"literal"}}`
	if _, err := loadConfig(nil, env(base)); err == nil || !strings.Contains(err.Error(), "VESSEL_EGRESS_ROUTES") {
		t.Fatalf("unknown field: %v", err)
	}
}
