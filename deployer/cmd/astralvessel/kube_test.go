package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/kube"
)

func TestDeployExampleKubernetes(t *testing.T) {
	setExampleEnv(t)
	t.Setenv("VESSEL_MODEL_KEY", "sk-kube-test-key-value")
	out := t.TempDir()
	args := []string{"deploy", exampleDeployment, "--target", "kubernetes", "--out", out, "--seccomp", "../../../deploy/seccomp/sandbox.json"}
	// The egress's policy needs the cluster's ranges.
	if code, _, errOut := run(args...); code != 1 || !strings.Contains(errOut, "--pod-cidr") {
		t.Fatalf("without the ranges: exit %d %s", code, errOut)
	}
	args = append(args, "--pod-cidr", "10.244.0.0/16", "--service-cidr", "10.96.0.0/12", "--node-cidr", "10.0.0.0/24",
		"--namespace", "av1")
	code, stdout, errOut := run(args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, errOut)
	}
	man, err := os.ReadFile(filepath.Join(out, kube.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: sandbox-field-guide\n", "name: sandbox-field-guide-reader\n", "namespace: av1-sandboxes\n",
		"pod-security.kubernetes.io/enforce: baseline", "type: Localhost", "kind: NetworkPolicy"} {
		if !strings.Contains(string(man), want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if strings.Contains(string(man), "sk-kube-test-key-value") {
		t.Error("the model key is in the manifests")
	}
	st, err := os.Stat(filepath.Join(out, kube.SecretsFileName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("secrets file mode %v", st.Mode())
	}
	sec, _ := os.ReadFile(filepath.Join(out, kube.SecretsFileName))
	if strings.Count(string(sec), "sk-kube-test-key-value") != 1 {
		t.Error("the model key is not in exactly one Secret")
	}
	if code, _, _ := run("deploy", exampleDeployment, "--target", "swarm", "--out", out); code != 2 {
		t.Errorf("unknown target: exit %d", code)
	}
}
