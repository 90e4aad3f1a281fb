package kube

import (
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pod describes one workload's pod before it is built.
type pod struct {
	name, ns, component, agent string
	svc                        compose.Service
	// sandbox: root with compose.SandboxCaps and the Localhost profile;
	// otherwise the service's own uid with nothing (PodSecurity restricted).
	sandbox bool
	// data is the volume behind Compose's named volume (the vessel's /data).
	data *corev1.VolumeSource
	// env replaces variables by reference (the CloudNativePG DSN).
	env map[string]*corev1.EnvVarSource
	// extraVolumes are mounted as they are (the sandbox's scratch).
	extraVolumes []corev1.Volume
	extraMounts  []corev1.VolumeMount
	ports        []corev1.ContainerPort
	// noLiveness: the health check covers dependencies (the vessel's
	// task store and egress); a restart would not mend them.
	noLiveness bool
	// runtimeClass names the RuntimeClass of the pod ("" the node's
	// default runtime).
	runtimeClass string
	// initContainers run before the container, with its security context
	// (the gvisor tier's permissions on /tmp and /dev/shm).
	initContainers []corev1.Container
}

// PIDsAnnotation on a sandbox pod gives the pid limit Compose sets on its
// container: the least podPidsLimit a node running it must have.
const PIDsAnnotation = "astralvessel/pids-limit"

// GVisorRuntimeClass is the RuntimeClass a gvisor-tier sandbox pod asks
// for. The cluster operator creates it (handler runsc, docs/kubernetes.md):
// it names node configuration the manifests cannot carry.
const GVisorRuntimeClass = "gvisor"

// template builds the pod template of p, adding its ConfigMaps to the
// manifests and its Secrets (files and operator variables) to the secrets.
func (g *gen) template(p pod) (corev1.PodTemplateSpec, error) {
	c := corev1.Container{
		Name:            p.component,
		Image:           g.o.ImagePrefix + p.svc.Image,
		ImagePullPolicy: g.o.PullPolicy,
		Args:            p.svc.Command,
		Ports:           p.ports,
	}
	ann := map[string]string{}
	for _, k := range sortedKeys(p.svc.Labels) {
		ann[annotation(k)] = p.svc.Labels[k]
	}
	env, envData, err := g.env(p)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	c.Env = env
	vols, mounts, files, err := g.volumes(p)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	var secretParts [][]byte
	for _, k := range sortedKeys(files) {
		secretParts = append(secretParts, []byte(k), files[k])
	}
	for _, k := range sortedKeys(envData) {
		secretParts = append(secretParts, []byte(k), []byte(envData[k]))
	}
	// A rotated secret or changed variable rolls the pods, as Compose
	// recreates a container whose environment changed.
	ann["astralvessel/secrets-hash"] = sha(secretParts...)
	if p.sandbox && p.svc.PIDsLimit > 0 {
		// Compose's pids_limit. A pod spec has no such field: the node's
		// kubelet podPidsLimit bounds each pod, and must be at least this
		// on nodes that run the sandbox (docs/kubernetes.md).
		ann[PIDsAnnotation] = strconv.Itoa(p.svc.PIDsLimit)
	}
	if len(envData) > 0 {
		g.secrets = append(g.secrets, g.secret(p.name+"-env", p.ns, p.component, p.agent, nil, envData))
	}
	if len(files) > 0 {
		g.secrets = append(g.secrets, g.secret(p.name+"-files", p.ns, p.component, p.agent, files, nil))
	}
	c.VolumeMounts = append(mounts, p.extraMounts...)
	c.Resources = resources(p.svc.MemLimit)
	if len(p.svc.Health) > 0 {
		probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: p.svc.Health}},
			PeriodSeconds: 15, TimeoutSeconds: 10, FailureThreshold: 3}
		startup := probe.DeepCopy()
		startup.FailureThreshold = 12 // a minute, as Compose's start_period
		startup.PeriodSeconds = 5
		c.StartupProbe, c.LivenessProbe, c.ReadinessProbe = startup, probe, probe.DeepCopy()
		c.ReadinessProbe.PeriodSeconds = 5
		if p.noLiveness {
			c.LivenessProbe = nil
		}
	}
	spec := corev1.PodSpec{
		Containers:                   []corev1.Container{c},
		Volumes:                      append(vols, p.extraVolumes...),
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
	}
	g.secure(&spec, p)
	for _, ic := range p.initContainers {
		ic.SecurityContext = spec.Containers[0].SecurityContext.DeepCopy()
		if ic.SecurityContext == nil {
			ic.SecurityContext = &corev1.SecurityContext{}
		}
		// An init container never gets more than the hardened floor, whatever
		// the main container's context says: no capability added, every one
		// dropped, no privilege escalation, a read-only root.
		ic.SecurityContext.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
		ic.SecurityContext.AllowPrivilegeEscalation = ptr(false)
		ic.SecurityContext.ReadOnlyRootFilesystem = ptr(true)
		ic.SecurityContext.Privileged = nil
		spec.InitContainers = append(spec.InitContainers, ic)
	}
	if p.runtimeClass != "" {
		spec.RuntimeClassName = ptr(p.runtimeClass)
	}
	if p.svc.StopGraceSeconds > 0 {
		spec.TerminationGracePeriodSeconds = ptr(int64(p.svc.StopGraceSeconds))
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: g.labels(p.component, p.agent), Annotations: ann},
		Spec:       spec,
	}, nil
}

// secure sets the security contexts: every container read-only, without
// privilege escalation; services as their own uid with no capability and
// the runtime's default seccomp filter; sandboxd as root with the five
// capabilities and the project's profile (Landlock-capable, no sockets for
// calls).
func (g *gen) secure(spec *corev1.PodSpec, p pod) {
	c := &spec.Containers[0]
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if p.sandbox {
		for _, cp := range compose.SandboxCaps {
			sc.Capabilities.Add = append(sc.Capabilities.Add, corev1.Capability(cp))
		}
		spec.SecurityContext = &corev1.PodSecurityContext{
			RunAsUser: ptr(int64(0)), RunAsGroup: ptr(int64(0)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr(g.profile)},
		}
	} else {
		uid := int64(p.svc.UID)
		spec.SecurityContext = &corev1.PodSecurityContext{
			RunAsNonRoot: ptr(true), RunAsUser: &uid, RunAsGroup: &uid, FSGroup: &uid,
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
	}
	c.SecurityContext = sc
}

// env turns Compose's environment into the container's: literals as they
// are, "${NAME}" from a Secret holding the operator's NAME.
func (g *gen) env(p pod) ([]corev1.EnvVar, map[string]string, error) {
	var out []corev1.EnvVar
	data := map[string]string{}
	for _, k := range sortedKeys(p.svc.Environment) {
		if src, ok := p.env[k]; ok {
			out = append(out, corev1.EnvVar{Name: k, ValueFrom: src})
			continue
		}
		v, ref := compose.Literal(p.svc.Environment[k])
		if strings.HasSuffix(k, "_METRICS_LISTEN") {
			// Compose binds each listener to its fixed address on the
			// metrics network; a pod listens on its own address.
			if _, port, err := net.SplitHostPort(v); err == nil {
				v = net.JoinHostPort("0.0.0.0", port)
			}
		}
		if ref == "" {
			out = append(out, corev1.EnvVar{Name: k, Value: v})
			continue
		}
		val, ok := g.o.Env(ref)
		if !ok {
			return nil, nil, fmt.Errorf("kube: %s needs the variable %s (set it in the environment or the env file)", p.name, ref)
		}
		data[ref] = val
		out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: p.name + "-env"}, Key: ref}}})
	}
	return out, data, nil
}

// volumes maps Compose's volumes: generated secret files into one Secret
// mounted at /run/secrets, host folders and files into ConfigMaps, the
// named volume into p.data; and /tmp as memory of a bounded size.
func (g *gen) volumes(p pod) ([]corev1.Volume, []corev1.VolumeMount, map[string][]byte, error) {
	files := map[string][]byte{}
	vols := []corev1.Volume{emptyDir("tmp", tmpSize)}
	mounts := []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
	genPrefix := "./" + compose.GeneratedDir + "/"
	n := 0
	for _, v := range p.svc.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			return nil, nil, nil, fmt.Errorf("kube: %s: volume %q", p.name, v)
		}
		src, target := parts[0], parts[1]
		switch {
		case strings.HasPrefix(src, genPrefix):
			name := strings.TrimPrefix(src, genPrefix)
			b, err := os.ReadFile(filepath.Join(g.o.OutDir, compose.GeneratedDir, name))
			if err != nil {
				return nil, nil, nil, fmt.Errorf("kube: %s: generated secret: %w", p.name, err)
			}
			if target != secretsDir+"/"+name {
				return nil, nil, nil, fmt.Errorf("kube: %s: secret %s mounted at %s, not under %s", p.name, name, target, secretsDir)
			}
			files[name] = b
		case !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/"):
			if p.data == nil {
				return nil, nil, nil, fmt.Errorf("kube: %s: named volume %s has no counterpart", p.name, src)
			}
			vols = append(vols, corev1.Volume{Name: "data", VolumeSource: *p.data})
			mounts = append(mounts, corev1.VolumeMount{Name: "data", MountPath: target})
		case target == compose.RecordsMount && strings.HasPrefix(src, "./"+compose.RecordsDir+"/"):
			// The usage log and audit streams: a node-disk volume of the
			// pod's own (Kubernetes has no host folder a restricted pod may
			// write); a log shipper collects them (docs/kubernetes.md).
			vols = append(vols, corev1.Volume{Name: "records", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				SizeLimit: resource.NewQuantity(recordsSize, resource.BinarySI)}}})
			mounts = append(mounts, corev1.VolumeMount{Name: "records", MountPath: target})
		case src == compose.UIDLockDir && target == compose.UIDLockDir:
			// sandboxd's uid range reservation: a hostPath is refused at
			// PodSecurity baseline, so the reservation is the pod's own;
			// ranges differ per deployment (derived from the project) and
			// a turn's processes are ended by its cgroup (docs/kubernetes.md).
			// The volume is the folder above: an emptyDir is created mode
			// 1777, which sandboxd refuses for the registry (anyone could
			// forge a reservation), so sandboxd makes the registry itself,
			// root's and 0700, inside it.
			vols = append(vols, emptyDir("uids", 1<<20))
			mounts = append(mounts, corev1.VolumeMount{Name: "uids", MountPath: path.Dir(target)})
		default:
			host := src
			if !filepath.IsAbs(host) {
				host = filepath.Join(g.o.OutDir, filepath.FromSlash(src))
			}
			cm, vol, mount, err := hostFiles(p.name+"-files-"+strconv.Itoa(n), p.ns, g.labels(p.component, p.agent), host, target)
			if err != nil {
				return nil, nil, nil, err
			}
			n++
			g.add(cm)
			vols, mounts = append(vols, vol), append(mounts, mount)
		}
	}
	if len(files) > 0 {
		mode := int32(0o400)
		if !p.sandbox {
			mode = 0o440 // root:<fsGroup>, the service's own gid
		}
		vols = append(vols, corev1.Volume{Name: "secrets", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: p.name + "-files", DefaultMode: &mode}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "secrets", MountPath: secretsDir, ReadOnly: true})
	}
	return vols, mounts, files, nil
}

func (g *gen) secret(name, ns, component, agent string, files map[string][]byte, vars map[string]string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(name, ns, g.labels(component, agent)),
		Type:       corev1.SecretTypeOpaque,
		Data:       files,
		StringData: vars,
	}
}

// resources gives memory its Compose limit, requested in full so the
// scheduler never places more than a node holds.
func resources(mem int64) corev1.ResourceRequirements {
	if mem <= 0 {
		return corev1.ResourceRequirements{}
	}
	q := *resource.NewQuantity(mem, resource.BinarySI)
	return corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: q},
		Requests: corev1.ResourceList{corev1.ResourceMemory: q, corev1.ResourceCPU: resource.MustParse("50m")},
	}
}

// recordsSize bounds a pod's records volume (usage log, audit streams; rotated
// by the services themselves).
const recordsSize = 1 << 30

func emptyDir(name string, size int64) corev1.Volume {
	q := resource.NewQuantity(size, resource.BinarySI)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium: corev1.StorageMediumMemory, SizeLimit: q}}}
}

// argValue replaces the value after flag in args.
func argValue(args []string, flag, value string) []string {
	out := slices.Clone(args)
	for i := range out[:max(len(out)-1, 0)] {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
