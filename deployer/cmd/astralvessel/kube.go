package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/deployer/kube"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
	corev1 "k8s.io/api/core/v1"
)

// kubeFlags are deploy's flags for --target kubernetes.
type kubeFlags struct {
	namespace, sandboxNS, imagePrefix, pullPolicy, postgres, cnpgStorage string
	podCIDR, serviceCIDR, nodeCIDR, metadataCIDR, postgresCIDR           string
	installer, kubeletRoot, otlpNamespace                                string
	replicas, cnpgInstances, metricsPort                                 int
	serviceMonitor                                                       bool
}

func addKubeFlags(fs *flag.FlagSet) *kubeFlags {
	k := &kubeFlags{}
	fs.StringVar(&k.namespace, "namespace", "", "kubernetes: namespace of the vessel, egress and search (default the project)")
	fs.StringVar(&k.sandboxNS, "sandbox-namespace", "", "kubernetes: namespace of the sandboxes (default NAMESPACE-sandboxes)")
	fs.StringVar(&k.imagePrefix, "image-prefix", "", "kubernetes: put before each image name (a registry path ending in /)")
	fs.StringVar(&k.pullPolicy, "pull-policy", "IfNotPresent", "kubernetes: imagePullPolicy (Always, IfNotPresent or Never)")
	fs.IntVar(&k.replicas, "replicas", 0, "kubernetes: vessel replicas (default 2 on PostgreSQL, 1 on SQLite)")
	fs.StringVar(&k.postgres, "postgres", "", "kubernetes: cnpg for a CloudNativePG Cluster as the task store (default: task_store as written)")
	fs.StringVar(&k.postgresCIDR, "postgres-cidr", "", "kubernetes: where an external PostgreSQL is (comma-separated CIDRs)")
	fs.IntVar(&k.cnpgInstances, "cnpg-instances", 2, "kubernetes: instances of the CloudNativePG Cluster")
	fs.StringVar(&k.cnpgStorage, "cnpg-storage", "1Gi", "kubernetes: storage of each CloudNativePG instance")
	fs.StringVar(&k.podCIDR, "pod-cidr", "", "kubernetes: the cluster's pod ranges, comma-separated (the egress may not reach them)")
	fs.StringVar(&k.serviceCIDR, "service-cidr", "", "kubernetes: the cluster's service ranges")
	fs.StringVar(&k.nodeCIDR, "node-cidr", "", "kubernetes: the nodes' ranges")
	fs.StringVar(&k.metadataCIDR, "metadata-cidr", "169.254.0.0/16", "kubernetes: link-local and cloud metadata ranges")
	fs.IntVar(&k.metricsPort, "metrics-port", kube.DefaultMetricsPort, "kubernetes: the vessel's metrics and operator API port")
	fs.StringVar(&k.otlpNamespace, "otlp-namespace", "", "kubernetes: namespace of the [telemetry] OTLP receiver, which the policies then let traces reach")
	fs.BoolVar(&k.serviceMonitor, "service-monitor", false, "kubernetes: add a Prometheus Operator ServiceMonitor")
	fs.StringVar(&k.installer, "seccomp-installer-image", "", "kubernetes: an image with sh and cp for a DaemonSet that installs the sandbox seccomp profile on every node")
	fs.StringVar(&k.kubeletRoot, "kubelet-root", "/var/lib/kubelet", "kubernetes: the kubelet's root directory on the nodes")
	return k
}

func cidrs(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// deployKube writes the Kubernetes manifests and their Secrets.
func deployKube(d *spec.Deployment, k *kubeFlags, out, source, seccomp, envFile string, stdout io.Writer) error {
	env, _, err := operatorEnv(d.Path, envFile)
	if err != nil {
		return err
	}
	if _, _, err := compose.WriteSecrets(out, d); err != nil {
		return err
	}
	res, err := kube.Generate(d, kube.Options{
		OutDir: out, SourceDir: source, SeccompProfile: seccomp,
		Namespace: k.namespace, SandboxNamespace: k.sandboxNS,
		ImagePrefix: k.imagePrefix, PullPolicy: corev1.PullPolicy(k.pullPolicy),
		Replicas: int32(k.replicas), Postgres: k.postgres, PostgresCIDRs: cidrs(k.postgresCIDR),
		CNPGInstances: int32(k.cnpgInstances), CNPGStorage: k.cnpgStorage,
		PodCIDRs: cidrs(k.podCIDR), ServiceCIDRs: cidrs(k.serviceCIDR), NodeCIDRs: cidrs(k.nodeCIDR),
		MetadataCIDRs: cidrs(k.metadataCIDR), MetricsPort: int32(k.metricsPort), ServiceMonitor: k.serviceMonitor,
		TelemetryNamespace:    k.otlpNamespace,
		SeccompInstallerImage: k.installer, KubeletRoot: k.kubeletRoot, Env: env,
	})
	if err != nil {
		return err
	}
	man := filepath.Join(out, kube.FileName)
	sec := filepath.Join(out, kube.SecretsFileName)
	if err := writeAtomic(man, res.Manifests, 0o644); err != nil {
		return err
	}
	if err := writeAtomic(sec, res.Secrets, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", man, sec)
	if k.installer == "" {
		fmt.Fprintf(stdout, "on every node, install the sandbox seccomp profile as %s:\n  deploy/k8s/install-seccomp.sh %s %s\n",
			res.SeccompProfileName, seccomp, k.kubeletRoot)
	}
	fmt.Fprintf(stdout, "then: kubectl apply -f %s -f %s\n", man, sec)
	return nil
}

func writeAtomic(file string, b []byte, mode os.FileMode) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
