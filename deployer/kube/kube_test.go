package kube

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var testEnv = map[string]string{
	"UPSTREAM_URL":     "https://models.example.org/v1",
	"APP_KEY_SHA256":   "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"TASK_STORE":       "postgres://vessel:pw@db:6543/vessel",
	"RECORDS_TOKEN":    "records-token-value",
	"VESSEL_MODEL_KEY": "sk-model-key-value",
}

func lookup(name string) (string, bool) { v, ok := testEnv[name]; return v, ok }

// testdata are the Compose generator's: the same deployments, two targets.
const testdata = "../compose/testdata"

func load(t *testing.T, name string) *spec.Deployment {
	t.Helper()
	d, err := spec.LoadDeployment(filepath.Join(testdata, name, "deploy", "deployment.toml"), lookup)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return d
}

func options(t *testing.T, name string) Options {
	return Options{
		OutDir: t.TempDir(), SourceDir: filepath.Join(testdata, name),
		SeccompProfile: "../../deploy/seccomp/sandbox.json",
		PodCIDRs:       []string{"10.244.0.0/16", "fd00:10:244::/56"}, ServiceCIDRs: []string{"10.96.0.0/12"},
		NodeCIDRs: []string{"192.168.10.0/24"}, PostgresCIDRs: []string{"10.30.0.5/32"},
		Env: lookup,
	}
}

func generate(t *testing.T, d *spec.Deployment, o Options) *Output {
	t.Helper()
	if _, _, err := compose.WriteSecrets(o.OutDir, d); err != nil {
		t.Fatal(err)
	}
	out, err := Generate(d, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var secretsHash = regexp.MustCompile(`(astralvessel/secrets-hash: )sha256:[0-9a-f]+`)

func TestGolden(t *testing.T) {
	for _, name := range []string{"basic", "custom"} {
		t.Run(name, func(t *testing.T) {
			d := load(t, name)
			o := options(t, name)
			if name == "custom" {
				o.ServiceMonitor = true
				o.SeccompInstallerImage = "busybox:stable"
			}
			out := generate(t, d, o)
			// The secrets are random on every deploy; the rest is fixed.
			got := secretsHash.ReplaceAll(out.Manifests, []byte("${1}<secrets>"))
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run go test -update and review the diff):\n%s", golden, got)
			}
			// No secret value in the manifests; each in the secrets file.
			for _, v := range testEnv {
				if strings.Contains(string(out.Manifests), v) && v != testEnv["UPSTREAM_URL"] {
					t.Errorf("manifests hold the value %q", v)
				}
			}
		})
	}
}

// objects decodes a generated stream into typed objects.
func objects(t *testing.T, stream []byte) []any {
	t.Helper()
	var out []any
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		doc = strings.TrimPrefix(doc, "---\n")
		if strings.TrimSpace(doc) == "" || strings.HasPrefix(doc, "#") && !strings.Contains(doc, "kind:") {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		var o any
		switch tm.Kind {
		case "Namespace":
			o = &corev1.Namespace{}
		case "Deployment":
			o = &appsv1.Deployment{}
		case "DaemonSet":
			o = &appsv1.DaemonSet{}
		case "Secret":
			o = &corev1.Secret{}
		case "ConfigMap":
			o = &corev1.ConfigMap{}
		case "NetworkPolicy":
			o = &networkingv1.NetworkPolicy{}
		case "Service":
			o = &corev1.Service{}
		default:
			o = &unstructured.Unstructured{}
		}
		if err := yaml.UnmarshalStrict([]byte(doc), o); err != nil {
			if _, ok := o.(*unstructured.Unstructured); !ok {
				t.Fatalf("%s: %v", tm.Kind, err)
			}
		}
		out = append(out, o)
	}
	return out
}

// The model key reaches the egress's Secret alone; every token lives in a
// Secret of the one workload that reads it.
func TestSecretsGoWhereCompose(t *testing.T) {
	d := load(t, "custom")
	out := generate(t, d, options(t, "custom"))
	holders := map[string]bool{}
	for _, o := range objects(t, out.Secrets) {
		s := o.(*corev1.Secret)
		for k, v := range s.StringData {
			if v == testEnv["VESSEL_MODEL_KEY"] {
				holders[s.Name+"/"+k] = true
			}
		}
		if strings.HasPrefix(s.Name, "sandbox-") && s.Namespace != "second-sandboxes" {
			t.Errorf("%s in %s, not the sandboxes' namespace", s.Name, s.Namespace)
		}
	}
	if len(holders) != 1 || !holders["egress-env/VESSEL_MODEL_KEY"] {
		t.Errorf("model key held by %v, want egress-env alone", holders)
	}
}

// What the issue asks of each sandbox pod.
func TestSandboxPod(t *testing.T) {
	d := load(t, "custom")
	out := generate(t, d, options(t, "custom"))
	found := false
	for _, o := range objects(t, out.Manifests) {
		dep, ok := o.(*appsv1.Deployment)
		if !ok || dep.Name != "sandbox-records" {
			continue
		}
		found = true
		ps := dep.Spec.Template.Spec
		c := ps.Containers[0]
		if ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeLocalhost || *ps.SecurityContext.SeccompProfile.LocalhostProfile != out.SeccompProfileName {
			t.Errorf("seccomp %+v", ps.SecurityContext.SeccompProfile)
		}
		var caps []string
		for _, c := range c.SecurityContext.Capabilities.Add {
			caps = append(caps, string(c))
		}
		if strings.Join(caps, ",") != "CHOWN,DAC_OVERRIDE,KILL,SETGID,SETUID" || c.SecurityContext.Capabilities.Drop[0] != "ALL" {
			t.Errorf("capabilities %v", c.SecurityContext.Capabilities)
		}
		if !*c.SecurityContext.ReadOnlyRootFilesystem || *c.SecurityContext.AllowPrivilegeEscalation {
			t.Error("root filesystem writable or privilege escalation allowed")
		}
		if c.Resources.Limits.Memory().Value() != int64(d.Agents[0].Sandbox.Memory) {
			t.Errorf("memory limit %v", c.Resources.Limits.Memory())
		}
		var scratch *corev1.EmptyDirVolumeSource
		for _, v := range ps.Volumes {
			if v.Name == "scratch" {
				scratch = v.EmptyDir
			}
		}
		if scratch == nil || scratch.Medium != corev1.StorageMediumMemory || scratch.SizeLimit.Value() != int64(d.Agents[0].Sandbox.Scratch) {
			t.Errorf("scratch %+v", scratch)
		}
		// The agent's call uid range as LoadDeployment resolved it
		// ([call_uids], or derived from the project), as Compose has it.
		if !strings.Contains(strings.Join(c.Args, " "), "--uid-range "+d.Agents[0].Sandbox.UIDs.String()) {
			t.Errorf("args %v", c.Args)
		}
	}
	if !found {
		t.Fatal("no sandbox-records Deployment")
	}
}

func TestOptionsRefused(t *testing.T) {
	d := load(t, "custom")
	for name, mod := range map[string]func(*Options){
		"no pod range":          func(o *Options) { o.PodCIDRs = nil },
		"bad node range":        func(o *Options) { o.NodeCIDRs = []string{"10.0.0.300/8"} },
		"one namespace":         func(o *Options) { o.Namespace, o.SandboxNamespace = "x", "x" },
		"external pg, no range": func(o *Options) { o.PostgresCIDRs = nil },
		"unknown postgres":      func(o *Options) { o.Postgres = "homemade" },
		"missing model key":     func(o *Options) { o.Env = func(n string) (string, bool) { return lookupExcept(n, "VESSEL_MODEL_KEY") } },
	} {
		t.Run(name, func(t *testing.T) {
			o := options(t, "custom")
			mod(&o)
			if _, _, err := compose.WriteSecrets(o.OutDir, d); err != nil {
				t.Fatal(err)
			}
			if _, err := Generate(d, o); err == nil {
				t.Error("generated")
			}
		})
	}
	// SQLite allows one replica.
	b := load(t, "basic")
	o := options(t, "basic")
	o.Replicas = 2
	if _, _, err := compose.WriteSecrets(o.OutDir, b); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(b, o); err == nil || !strings.Contains(err.Error(), "shared task store") {
		t.Errorf("two replicas on SQLite: %v", err)
	}
}

func lookupExcept(name, except string) (string, bool) {
	if name == except {
		return "", false
	}
	return lookup(name)
}

// With CloudNativePG the vessel takes the DSN from the Cluster's Secret.
func TestCNPG(t *testing.T) {
	d := load(t, "custom")
	o := options(t, "custom")
	o.Postgres, o.PostgresCIDRs = PostgresCNPG, nil
	out := generate(t, d, o)
	var cluster, dsn bool
	for _, obj := range objects(t, out.Manifests) {
		switch x := obj.(type) {
		case *unstructured.Unstructured:
			cluster = cluster || x.GetKind() == "Cluster" && x.GetAPIVersion() == "postgresql.cnpg.io/v1"
		case *appsv1.Deployment:
			if x.Name != "vessel" {
				continue
			}
			if *x.Spec.Replicas != 2 {
				t.Errorf("replicas %d", *x.Spec.Replicas)
			}
			for _, e := range x.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "TASK_STORE" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef.Name == "vessel-pg-app" {
					dsn = true
				}
			}
		}
	}
	if !cluster || !dsn {
		t.Errorf("cluster %v, dsn from its secret %v", cluster, dsn)
	}
}

// [telemetry] reaches every workload as on Compose, and with a telemetry
// namespace the policies let the traces out to the receiver's port alone.
func TestTelemetryPassedThrough(t *testing.T) {
	d := load(t, "custom")
	ratio := 0.25
	d.Telemetry = spec.Telemetry{OTLPEndpoint: "http://otel-collector.observability:4317", OTLPProtocol: "grpc", SampleRatio: &ratio}
	o := options(t, "custom")
	o.TelemetryNamespace = "observability"
	out := generate(t, d, o)
	services := map[string]string{}
	reach := map[string]bool{}
	for _, obj := range objects(t, out.Manifests) {
		switch x := obj.(type) {
		case *appsv1.Deployment:
			env := map[string]string{}
			for _, e := range x.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			if env["OTEL_EXPORTER_OTLP_ENDPOINT"] != d.Telemetry.OTLPEndpoint || env["OTEL_TRACES_SAMPLER_ARG"] != "0.25" {
				t.Errorf("%s: OTEL env %v", x.Name, env)
			}
			services[x.Name] = env["OTEL_SERVICE_NAME"]
		case *networkingv1.NetworkPolicy:
			for _, r := range x.Spec.Egress {
				for _, p := range r.To {
					if p.NamespaceSelector != nil && p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] == "observability" &&
						len(r.Ports) == 1 && r.Ports[0].Port.IntValue() == 4317 {
						reach[x.Name] = true
					}
				}
			}
		}
	}
	if services["vessel"] != "vessel" || services["egress"] != "egress" || services["sandbox-records"] != "sandboxd" {
		t.Errorf("service names %v", services)
	}
	if !reach["vessel"] || !reach["egress"] || !reach["sandbox"] {
		t.Errorf("policies reaching the receiver: %v", reach)
	}
}

// deployment returns the Deployment named name.
func deployment(t *testing.T, out *Output, name string) *appsv1.Deployment {
	t.Helper()
	for _, o := range objects(t, out.Manifests) {
		if dep, ok := o.(*appsv1.Deployment); ok && dep.Name == name {
			return dep
		}
	}
	t.Fatalf("no Deployment %s", name)
	return nil
}

// vesselArgs returns the vessel container's arguments.
func vesselArgs(t *testing.T, out *Output) []string {
	t.Helper()
	return deployment(t, out, "vessel").Spec.Template.Spec.Containers[0].Args
}

// Without public_url the cards advertise the vessel Service, not the
// Compose front address; a written public_url is the vessel's to read.
func TestPublicURL(t *testing.T) {
	d := load(t, "custom")
	args := strings.Join(vesselArgs(t, generate(t, d, options(t, "custom"))), " ")
	if want := "--public-url http://vessel.second.svc:9000"; !strings.Contains(args, want) {
		t.Errorf("args %q lack %q", args, want)
	}
	if strings.Contains(args, d.Vessel.FrontAddress) {
		t.Errorf("args %q name the Compose front address", args)
	}

	d = load(t, "custom")
	d.Vessel.PublicURL, d.Vessel.GRPCPublicAddress = "https://agents.example.org", "agents.example.org:8701"
	if args := strings.Join(vesselArgs(t, generate(t, d, options(t, "custom"))), " "); strings.Contains(args, "--public-url") {
		t.Errorf("public_url written, yet args %q", args)
	}

	d = load(t, "custom")
	d.Vessel.GRPCPublicAddress = "grpc.example.org:443"
	o := options(t, "custom")
	if _, _, err := compose.WriteSecrets(o.OutDir, d); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(d, o); err == nil || !strings.Contains(err.Error(), "public_url") {
		t.Errorf("grpc_public_address without public_url: %v", err)
	}
}

// A gvisor-tier sandbox has Compose's root-owned 0755 /tmp and /dev/shm
// and says the pid limit its node must allow.
func TestGVisorPod(t *testing.T) {
	d := load(t, "custom")
	out := generate(t, d, options(t, "custom"))
	dep := deployment(t, out, "sandbox-records")
	ps := dep.Spec.Template.Spec
	if ps.RuntimeClassName == nil || *ps.RuntimeClassName != GVisorRuntimeClass {
		t.Errorf("runtimeClassName %v", ps.RuntimeClassName)
	}
	if ps.SecurityContext.FSGroup != nil || *ps.SecurityContext.RunAsUser != 0 {
		t.Errorf("pod security context %+v: the volumes must stay root's", ps.SecurityContext)
	}
	mounts := map[string]string{}
	for _, m := range ps.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for _, v := range ps.Volumes {
		if (v.Name == mounts["/tmp"] || v.Name == mounts["/dev/shm"]) && (v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory) {
			t.Errorf("volume %s: %+v", v.Name, v.VolumeSource)
		}
	}
	if mounts["/tmp"] == "" || mounts["/dev/shm"] == "" {
		t.Errorf("mounts %v", mounts)
	}
	if len(ps.InitContainers) != 1 {
		t.Fatalf("init containers %+v", ps.InitContainers)
	}
	ic := ps.InitContainers[0]
	if strings.Join(ic.Command, " ") != "chmod 0755 /tmp /dev/shm" || len(ic.SecurityContext.Capabilities.Add) != 0 || ic.Image != ps.Containers[0].Image {
		t.Errorf("init container %+v", ic)
	}
	if want := strconv.Itoa(compose.GVisorPIDs(d.Agents[0].Sandbox.PIDs)); dep.Spec.Template.Annotations[PIDsAnnotation] != want {
		t.Errorf("pids annotation %q, want %s", dep.Spec.Template.Annotations[PIDsAnnotation], want)
	}
	half := strconv.Itoa(d.Agents[0].Sandbox.PIDs / 2)
	if args := strings.Join(ps.Containers[0].Args, " "); !strings.Contains(args, "--owner-procs "+half+" --turn-procs "+half) {
		t.Errorf("args %q", args)
	}
	// The confined tier has neither.
	for _, o := range objects(t, generate(t, load(t, "basic"), options(t, "basic")).Manifests) {
		if dep, ok := o.(*appsv1.Deployment); ok && strings.HasPrefix(dep.Name, "sandbox-") {
			if ps := dep.Spec.Template.Spec; len(ps.InitContainers) != 0 || ps.RuntimeClassName != nil {
				t.Errorf("%s: %+v", dep.Name, ps)
			}
		}
	}
}
