package kube

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func (g *gen) sandboxURL(agent string) string {
	return "http://sandbox-" + agent + "." + g.o.SandboxNamespace + ".svc:" + strconv.Itoa(sandboxPort)
}

// publicURL is the vessel's --public-url: "" when [vessel] public_url is
// written (the vessel advertises it), else the vessel Service's in-cluster
// name. spec fills an unset public_url with the Compose front address,
// which means nothing on a cluster, so that value counts as unset. The
// vessel derives the cards' gRPC address from --public-url too (its host,
// the gRPC port, which the Service keeps), so an explicit
// grpc_public_address without public_url is refused rather than replaced.
func (g *gen) publicURL() (string, error) {
	v := g.d.Vessel
	if v.PublicURL != "http://"+net.JoinHostPort(v.FrontAddress, strconv.Itoa(v.Port)) {
		return "", nil
	}
	if v.GRPCPublicAddress != net.JoinHostPort(v.FrontAddress, strconv.Itoa(v.GRPCPort)) {
		return "", fmt.Errorf("kube: [vessel] grpc_public_address is set but public_url is not: set public_url too " +
			"(the address callers reach the vessel at), or the cards would mix it with the in-cluster name")
	}
	return "http://" + net.JoinHostPort(g.vesselHost(), strconv.Itoa(v.Port)), nil
}

// vesselHost is the vessel Service's name inside the cluster.
func (g *gen) vesselHost() string { return "vessel." + g.o.Namespace + ".svc" }

func (g *gen) postgres() bool {
	s := g.d.Vessel.TaskStore
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") || g.o.Postgres == PostgresCNPG
}

func (g *gen) vessel() error {
	d := g.d
	s := g.svcs["vessel"]
	port, grpcPort := d.Vessel.Port, d.Vessel.GRPCPort
	// Every address of the pod: the Service and the NetworkPolicy decide
	// who reaches it, as the front network does on Compose.
	s.Command = argValue(s.Command, "--listen", "0.0.0.0:"+strconv.Itoa(port))
	s.Command = argValue(s.Command, "--grpc-listen", "0.0.0.0:"+strconv.Itoa(grpcPort))
	for _, a := range d.Agents {
		s.Command = append(s.Command, "--sandbox-url", a.ID+"="+g.sandboxURL(a.ID))
	}
	s.Command = append(s.Command, "--metrics-listen", "0.0.0.0:"+strconv.Itoa(int(g.o.MetricsPort)))
	pub, err := g.publicURL()
	if err != nil {
		return err
	}
	if pub != "" {
		s.Command = append(s.Command, "--public-url", pub)
	}
	s.Health = []string{s.Health[0], "health", "http://127.0.0.1:" + strconv.Itoa(port) + "/health"}
	replicas := g.o.Replicas
	p := pod{name: "vessel", ns: g.o.Namespace, component: "vessel", svc: s, noLiveness: true,
		ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}, {Name: "grpc", ContainerPort: int32(grpcPort)},
			{Name: "metrics", ContainerPort: g.o.MetricsPort}}}
	strategy := appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromInt32(1))}}
	if g.postgres() {
		if replicas == 0 {
			replicas = 2
		}
		// The store is shared: /data holds nothing another replica needs.
		p.data = &corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		if g.o.Postgres == PostgresCNPG {
			if err := g.cnpg(&p); err != nil {
				return err
			}
		}
	} else {
		if replicas == 0 {
			replicas = 1
		}
		if replicas != 1 {
			return fmt.Errorf("kube: %d vessel replicas need a shared task store: set [vessel] task_store to PostgreSQL (or --postgres cnpg)", replicas)
		}
		// SQLite on a volume of its own; one writer, so the old pod
		// stops before the new one starts.
		p.data = &corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "vessel-data"}}
		g.add(&corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: meta("vessel-data", g.o.Namespace, g.labels("vessel", "")),
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		})
		strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	if err := g.workload(p, replicas, strategy); err != nil {
		return err
	}
	g.service("vessel", g.o.Namespace, "vessel", "", []corev1.ServicePort{
		{Name: "http", Port: int32(port), TargetPort: intstr.FromString("http")},
		{Name: "grpc", Port: int32(grpcPort), TargetPort: intstr.FromString("grpc")}})
	g.service("vessel-metrics", g.o.Namespace, "vessel", "", []corev1.ServicePort{
		{Name: "metrics", Port: g.o.MetricsPort, TargetPort: intstr.FromString("metrics")}})
	if g.o.ServiceMonitor {
		g.add(g.serviceMonitor())
	}
	return nil
}

// cnpg asks CloudNativePG for a Cluster and gives the vessel the DSN the
// operator writes into the Cluster's app Secret.
func (g *gen) cnpg(p *pod) error {
	ref, ok := g.d.EnvRefs["vessel.task_store"]
	if !ok {
		return fmt.Errorf("kube: --postgres %s: write [vessel] task_store as env:NAME, so the vessel takes the DSN CloudNativePG creates", PostgresCNPG)
	}
	name := ""
	for k, v := range p.svc.Environment {
		if v == "${"+ref+"}" {
			name = k
		}
	}
	if name == "" {
		return fmt.Errorf("kube: the vessel is not given %s", ref)
	}
	p.env = map[string]*corev1.EnvVarSource{name: {SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: cnpgName + "-app"}, Key: "uri"}}}
	g.add(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "postgresql.cnpg.io/v1",
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": cnpgName, "namespace": g.o.Namespace, "labels": toAny(g.labels("postgres", ""))},
		"spec": map[string]any{
			"instances": int64(g.o.CNPGInstances),
			"storage":   map[string]any{"size": g.o.CNPGStorage},
			"bootstrap": map[string]any{"initdb": map[string]any{"database": "vessel", "owner": "vessel"}},
		},
	}})
	return nil
}

func (g *gen) serviceMonitor() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "ServiceMonitor",
		"metadata":   map[string]any{"name": "vessel", "namespace": g.o.Namespace, "labels": toAny(g.labels("vessel", ""))},
		"spec": map[string]any{
			"selector":  map[string]any{"matchLabels": toAny(g.selector("vessel", ""))},
			"endpoints": []any{map[string]any{"port": "metrics", "path": "/metrics"}},
		},
	}}
}

func (g *gen) egress() error {
	s := g.svcs["egress"]
	p := pod{name: "egress", ns: g.o.Namespace, component: "egress", svc: s,
		ports: []corev1.ContainerPort{{Name: "model", ContainerPort: egressModelPort}, {Name: "proxy", ContainerPort: egressProxyPort}}}
	if err := g.workload(p, 1, appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}); err != nil {
		return err
	}
	g.service("egress", g.o.Namespace, "egress", "", []corev1.ServicePort{
		{Name: "model", Port: egressModelPort, TargetPort: intstr.FromString("model")},
		{Name: "proxy", Port: egressProxyPort, TargetPort: intstr.FromString("proxy")}})
	return nil
}

func (g *gen) search() error {
	p := pod{name: "search", ns: g.o.Namespace, component: "search", svc: g.svcs["search"],
		ports: []corev1.ContainerPort{{Name: "http", ContainerPort: searchPort}}}
	if err := g.workload(p, 1, appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}); err != nil {
		return err
	}
	g.service("search", g.o.Namespace, "search", "", []corev1.ServicePort{
		{Name: "http", Port: searchPort, TargetPort: intstr.FromString("http")}})
	return nil
}

func (g *gen) sandbox(agent string) error {
	name := "sandbox-" + agent
	s, ok := g.svcs[name]
	if !ok {
		return fmt.Errorf("kube: no sandbox for agent %s", agent)
	}
	var a *spec.Agent
	for i := range g.d.Agents {
		if g.d.Agents[i].ID == agent {
			a = &g.d.Agents[i]
		}
	}
	if a == nil {
		return fmt.Errorf("kube: no agent %s", agent)
	}
	p := pod{name: name, ns: g.o.SandboxNamespace, component: "sandbox", agent: agent, svc: s, sandbox: true,
		ports: []corev1.ContainerPort{{Name: "grpc", ContainerPort: sandboxPort}, {Name: "http", ContainerPort: sandboxHTTPPort}},
		// The scratch is memory of the size [agents.sandbox] scratch
		// gives, as Compose's tmpfs. Kubernetes creates it mode 0777;
		// sandboxd narrows the root to 0711 at start.
		extraVolumes: []corev1.Volume{emptyDir("scratch", int64(a.Sandbox.Scratch))},
		extraMounts:  []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
	}
	if a.Sandbox.Tier() == spec.RuntimeGVisor {
		g.gvisor(&p)
	}
	// Turns live in the scratch of one sandboxd: never two at once.
	if err := g.workload(p, 1, appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}); err != nil {
		return err
	}
	g.service(name, g.o.SandboxNamespace, "sandbox", agent, []corev1.ServicePort{
		{Name: "grpc", Port: sandboxPort, TargetPort: intstr.FromString("grpc")},
		{Name: "http", Port: sandboxHTTPPort, TargetPort: intstr.FromString("http")}})
	return nil
}

// gvisor gives a gvisor-tier sandbox pod what Compose's runsc service has.
// Landlock is missing inside gVisor, so nothing else keeps calls out of
// /tmp and /dev/shm, which every turn would share outside the disk limits:
// both are memory emptyDirs (/dev/shm replacing the runtime's own, 1777)
// made root's and 0755 before sandboxd starts, so only sandboxd, never a
// call, writes there. Kubernetes creates an emptyDir 0777, and the sandbox
// pods have no fsGroup, so the volumes are root's already; an init
// container of the sandbox image (which has coreutils) narrows the mode:
// chmod of its own directory needs root no capability, so it runs with
// none, which PodSecurity baseline admits (a hostPath or privileged
// helper it would not). The pod's pid limit is the kubelet's
// podPidsLimit, a node setting: the annotation says what the node must
// allow (compose.GVisorPIDs, room for gVisor's own host tasks), and
// --owner-procs/--turn-procs (from compose.Services) hold the agent's own
// number inside.
func (g *gen) gvisor(p *pod) {
	p.runtimeClass = GVisorRuntimeClass
	p.extraVolumes = append(p.extraVolumes, emptyDir("shm", shmSize))
	p.extraMounts = append(p.extraMounts, corev1.VolumeMount{Name: "shm", MountPath: "/dev/shm"})
	p.initContainers = append(p.initContainers, corev1.Container{
		Name:            "tmp-mode",
		Image:           g.o.ImagePrefix + p.svc.Image,
		ImagePullPolicy: g.o.PullPolicy,
		Command:         []string{"chmod", "0755", "/tmp", "/dev/shm"},
		VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}, {Name: "shm", MountPath: "/dev/shm"}},
		Resources:       resources(16 << 20),
	})
}

// workload adds the Deployment of p and its PodDisruptionBudget: a drain
// takes one pod at a time, and never blocks on a single-replica workload.
func (g *gen) workload(p pod, replicas int32, strategy appsv1.DeploymentStrategy) error {
	tpl, err := g.template(p)
	if err != nil {
		return err
	}
	sel := &metav1.LabelSelector{MatchLabels: g.selector(p.component, p.agent)}
	g.add(&appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(p.name, p.ns, g.labels(p.component, p.agent)),
		Spec: appsv1.DeploymentSpec{Replicas: ptr(replicas), Selector: sel, Template: tpl, Strategy: strategy,
			RevisionHistoryLimit: ptr(int32(5))},
	}, &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(p.name, p.ns, g.labels(p.component, p.agent)),
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromInt32(1)), Selector: sel},
	})
	return nil
}

func (g *gen) service(name, ns, component, agent string, ports []corev1.ServicePort) {
	g.add(&corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(name, ns, g.labels(component, agent)),
		Spec:       corev1.ServiceSpec{Selector: g.selector(component, agent), Ports: ports},
	})
}

// seccompInstaller adds, when asked, a DaemonSet that copies the sandbox
// profile to every node's kubelet seccomp root, in a namespace of its own
// (it needs a hostPath, which baseline refuses).
func (g *gen) seccompInstaller() {
	if g.o.SeccompInstallerImage == "" {
		return
	}
	ns := g.o.Namespace + "-node-setup"
	labels := g.labels("seccomp-installer", "")
	g.add(namespace(ns, levelPrivileged), &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta("seccomp-profile", ns, labels),
		Data:       map[string]string{"profile.json": string(g.seccomp)},
	})
	file := strings.TrimPrefix(g.profile, seccompDir+"/")
	script := "set -e; cp /profile/profile.json /host/." + file + ".tmp; mv /host/." + file + ".tmp /host/" + file +
		"; exec sleep 2147483647"
	hostDir := g.o.KubeletRoot + "/seccomp/" + seccompDir
	sel := &metav1.LabelSelector{MatchLabels: g.selector("seccomp-installer", "")}
	g.add(&appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: meta("seccomp-installer", ns, labels),
		Spec: appsv1.DaemonSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"astralvessel/profile": g.profile}},
			Spec: corev1.PodSpec{
				AutomountServiceAccountToken: ptr(false),
				Containers: []corev1.Container{{
					Name: "install", Image: g.o.SeccompInstallerImage, ImagePullPolicy: g.o.PullPolicy,
					Command: []string{"sh", "-c", script},
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}, RunAsUser: ptr(int64(0))},
					VolumeMounts: []corev1.VolumeMount{{Name: "profile", MountPath: "/profile", ReadOnly: true}, {Name: "host", MountPath: "/host"}},
					Resources:    resources(16 << 20),
				}},
				Volumes: []corev1.Volume{
					{Name: "profile", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "seccomp-profile"}}}},
					{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
						Path: hostDir, Type: ptr(corev1.HostPathDirectoryOrCreate)}}},
				},
			},
		}},
	})
}

// postgresPort is the port of the external task store, for the vessel's
// NetworkPolicy.
func (g *gen) postgresPort() int32 {
	u, err := url.Parse(g.d.Vessel.TaskStore)
	if err == nil && u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 && p < 65536 {
			return int32(p)
		}
	}
	return 5432
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
