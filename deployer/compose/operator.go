package compose

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// The operator's side of a generated deployment (docs/operations.md,
// "Operating a generated deployment"): every service's metrics listener on an
// internal metrics network only the host reaches, the vessel's operator API
// among them, and the records (usage log, audit streams) in host folders an
// operator group reads.
const (
	// OperatorGroup and OperatorGID own the records folders: a host user in
	// this group reads the usage log and the audit streams without root.
	OperatorGroup = "astralvessel-operators"
	OperatorGID   = 61020
	// OperatorURLFile, beside the Compose file, holds the operator API's
	// base URL; `astralvessel turns` and `cancel` read it.
	OperatorURLFile = "operator.url"
	// MetricsTargetsFile, beside the Compose file, lists every metrics
	// listener for Prometheus's file_sd_configs.
	MetricsTargetsFile = "metrics-targets.json"
	// RecordsDir, beside the Compose file, holds one folder per service
	// writing records, mounted at /records.
	RecordsDir = "records"
	// RecordsMount is where a service sees its records folder.
	RecordsMount = "/records"

	VesselMetricsPort  = 9700
	EgressMetricsPort  = 9701
	SandboxMetricsPort = 9702
	recordsMount       = RecordsMount
)

// MetricsSubnet derives a deployment's metrics subnet from its project
// name: one /24 of 10.254.0.0/16 (outside Docker's default address pools,
// 172.17-31.x and 192.168.x, so no network the engine makes later overlaps
// it), so two deployments on one host (which need
// different project names anyway) get different subnets but for a 1-in-254
// chance, which deploy --metrics-subnet settles.
func MetricsSubnet(project string) string {
	sum := sha256.Sum256([]byte("astralvessel-metrics/" + project))
	return fmt.Sprintf("10.254.%d.0/24", 1+int(sum[0])%254)
}

// metricsAddrs are the fixed addresses on the metrics network: the vessel
// .2, the egress .3, the sandboxes .10 on in deployment order.
type metricsAddrs struct {
	vessel, egress string
	sandbox        map[string]string // agent id -> address
}

func (g *gen) metricsAddrs() (metricsAddrs, error) {
	subnet := g.o.MetricsSubnet
	if subnet == "" {
		subnet = MetricsSubnet(g.d.Vessel.Project)
	}
	p, err := netip.ParsePrefix(subnet)
	if err != nil || !p.Addr().Is4() || p.Bits() != 24 || p.Masked() != p {
		return metricsAddrs{}, fmt.Errorf("compose: metrics subnet %q: want an IPv4 /24 such as 10.254.7.0/24", subnet)
	}
	if len(g.d.Agents) > 200 {
		return metricsAddrs{}, fmt.Errorf("compose: %d agents do not fit the metrics subnet's 200 sandbox addresses", len(g.d.Agents))
	}
	b := p.Addr().As4()
	at := func(n int) string { b[3] = byte(n); return netip.AddrFrom4(b).String() }
	m := metricsAddrs{vessel: at(2), egress: at(3), sandbox: map[string]string{}}
	for i, a := range g.d.Agents {
		m.sandbox[a.ID] = at(10 + i)
	}
	g.metricsSubnet = p.String()
	return m, nil
}

// operate wires f for operators: the metrics network and each listener on
// its service's address there, and the records folders.
func (g *gen) operate(f *composeFile) error {
	m, err := g.metricsAddrs()
	if err != nil {
		return err
	}
	f.Networks["metrics"] = &network{Name: g.d.Vessel.Project + "_metrics", Driver: "bridge", Internal: true,
		IPAM: &ipam{Config: []ipamConfig{{Subnet: g.metricsSubnet}}}}
	listen := func(svc, env, addr string, port int) {
		s := f.Services[svc]
		s.Networks["metrics"] = &netAttach{IPv4Address: addr}
		s.Environment[env] = addr + ":" + strconv.Itoa(port)
	}
	listen("vessel", "VESSEL_METRICS_LISTEN", m.vessel, VesselMetricsPort)
	listen("egress", "VESSEL_EGRESS_METRICS_LISTEN", m.egress, EgressMetricsPort)
	for _, a := range g.d.Agents {
		listen("sandbox-"+a.ID, "VESSEL_SANDBOX_METRICS_LISTEN", m.sandbox[a.ID], SandboxMetricsPort)
	}
	records := func(svc string, env map[string]string) {
		s := f.Services[svc]
		s.Volumes = append(s.Volumes, "./"+RecordsDir+"/"+svc+":"+recordsMount)
		for k, v := range env {
			s.Environment[k] = recordsMount + "/" + v
		}
	}
	records("vessel", map[string]string{"VESSEL_USAGE_LOG": "usage.jsonl", "VESSEL_AUDIT_LOG": "audit.jsonl"})
	records("egress", map[string]string{"VESSEL_EGRESS_AUDIT_LOG": "audit.jsonl"})
	for _, a := range g.d.Agents {
		records("sandbox-"+a.ID, map[string]string{"VESSEL_SANDBOX_AUDIT_LOG": "audit.jsonl"})
	}
	return nil
}

// RecordOwners maps each records folder (a service's name) of d to the uid
// that writes it; the group is OperatorGID for all.
func RecordOwners(d *spec.Deployment) map[string]int {
	owners := map[string]int{"vessel": VesselUID, "egress": EgressUID}
	for _, a := range d.Agents {
		owners["sandbox-"+a.ID] = 0 // sandboxd runs as root in its container
	}
	return owners
}

// OperatorFiles are the files deploy writes beside the Compose file for the
// operator (none of them secret).
type OperatorFiles struct {
	URL     string // the operator API's base URL
	Targets []byte // Prometheus file_sd targets
}

// Operator returns d's operator files as Generate wires the listeners.
func Operator(d *spec.Deployment, opts Options) (*OperatorFiles, error) {
	g, err := newGen(d, opts)
	if err != nil {
		return nil, err
	}
	m, err := g.metricsAddrs()
	if err != nil {
		return nil, err
	}
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	p := d.Vessel.Project
	groups := []group{
		{[]string{m.vessel + ":" + strconv.Itoa(VesselMetricsPort)}, map[string]string{"job": "vessel", "project": p}},
		{[]string{m.egress + ":" + strconv.Itoa(EgressMetricsPort)}, map[string]string{"job": "egress", "project": p}},
	}
	for _, a := range d.Agents {
		groups = append(groups, group{[]string{m.sandbox[a.ID] + ":" + strconv.Itoa(SandboxMetricsPort)},
			map[string]string{"job": "sandboxd", "project": p, "agent": a.ID}})
	}
	b, err := json.MarshalIndent(groups, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("compose: metrics targets: %w", err)
	}
	return &OperatorFiles{URL: "http://" + m.vessel + ":" + strconv.Itoa(VesselMetricsPort), Targets: append(b, '\n')}, nil
}

// WriteOperator writes the operator files into outDir and makes the records
// folders: each its service's, group OperatorGID, mode 2750 (setgid, so
// every record file is the group's too; the files are 0640). Run as root it
// sets the owners and reports true; otherwise ChownCommands lists what to run.
func WriteOperator(outDir string, d *spec.Deployment, opts Options) (bool, error) {
	of, err := Operator(d, opts)
	if err != nil {
		return false, err
	}
	for name, b := range map[string][]byte{OperatorURLFile: []byte(of.URL + "\n"), MetricsTargetsFile: of.Targets} {
		if err := writeFile(filepath.Join(outDir, name), b, 0o644); err != nil {
			return false, err
		}
	}
	root := os.Geteuid() == 0
	top := filepath.Join(outDir, RecordsDir)
	if err := os.MkdirAll(top, 0o755); err != nil {
		return false, fmt.Errorf("records: %w", err)
	}
	owners := RecordOwners(d)
	names := make([]string, 0, len(owners))
	for n := range owners {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		dir := filepath.Join(top, n)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return false, fmt.Errorf("records: %w", err)
		}
		if root {
			if err := os.Chown(dir, owners[n], OperatorGID); err != nil {
				return false, fmt.Errorf("records: give %s to %d:%d: %w", dir, owners[n], OperatorGID, err)
			}
		}
		if err := os.Chmod(dir, 0o750|os.ModeSetgid); err != nil {
			return false, fmt.Errorf("records: %w", err)
		}
	}
	return root, nil
}

func writeFile(p string, b []byte, mode os.FileMode) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	return nil
}
