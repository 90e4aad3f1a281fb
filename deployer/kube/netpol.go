package kube

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// policies play the Compose networks: a sandbox is reached by the vessel
// alone and reaches nothing (its tools-<agent> network holds only the two);
// the vessel reaches its sandboxes, the egress, search, PostgreSQL and DNS;
// search reaches the egress's proxy; the egress alone reaches the outside,
// and not the cluster's own ranges.
func (g *gen) policies() error {
	ns, sbns := g.o.Namespace, g.o.SandboxNamespace
	vesselPeer := g.peer(ns, "vessel")
	dns := g.dnsRule()
	vesselOut := []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{g.peer(sbns, "sandbox")}, Ports: tcp(sandboxPort)},
		{To: []networkingv1.NetworkPolicyPeer{g.peer(ns, "egress")}, Ports: tcp(egressModelPort, egressProxyPort)},
		dns,
	}
	if _, ok := g.svcs["search"]; ok {
		vesselOut = append(vesselOut, networkingv1.NetworkPolicyEgressRule{
			To: []networkingv1.NetworkPolicyPeer{g.peer(ns, "search")}, Ports: tcp(searchPort)})
	}
	pg, err := g.postgresRule()
	if err != nil {
		return err
	}
	if pg != nil {
		vesselOut = append(vesselOut, *pg)
	}
	otlp := g.telemetryRules()
	vesselOut = append(vesselOut, otlp...)
	g.add(g.policy("vessel", ns, "vessel",
		[]networkingv1.NetworkPolicyIngressRule{{Ports: tcp(int32(g.d.Vessel.Port), int32(g.d.Vessel.GRPCPort), g.o.MetricsPort)}},
		vesselOut))

	egressIn := []networkingv1.NetworkPolicyIngressRule{
		{From: []networkingv1.NetworkPolicyPeer{vesselPeer}, Ports: tcp(egressModelPort, egressProxyPort)}}
	if _, ok := g.svcs["search"]; ok {
		egressIn = append(egressIn, networkingv1.NetworkPolicyIngressRule{
			From: []networkingv1.NetworkPolicyPeer{g.peer(ns, "search")}, Ports: tcp(egressProxyPort)})
		g.add(g.policy("search", ns, "search",
			[]networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{vesselPeer}, Ports: tcp(searchPort)}},
			[]networkingv1.NetworkPolicyEgressRule{
				{To: []networkingv1.NetworkPolicyPeer{g.peer(ns, "egress")}, Ports: tcp(egressProxyPort)}, dns}))
	}
	g.add(g.policy("egress", ns, "egress", egressIn, append([]networkingv1.NetworkPolicyEgressRule{{To: g.outside()}, dns}, otlp...)))

	// The sandboxes' namespace refuses everything it does not name.
	g.add(&networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta("default-deny", sbns, map[string]string{"app.kubernetes.io/part-of": partOf}),
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}},
	})
	g.add(g.policy("sandbox", sbns, "sandbox",
		[]networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{vesselPeer}, Ports: tcp(sandboxPort, sandboxHTTPPort)}},
		otlp))
	return nil
}

// telemetryRules let a workload send its traces to the OTLP receiver's
// port in the operator's telemetry namespace (none without one).
func (g *gen) telemetryRules() []networkingv1.NetworkPolicyEgressRule {
	t := g.d.Telemetry
	if t.OTLPEndpoint == "" || g.o.TelemetryNamespace == "" {
		return nil
	}
	port := int32(4318)
	if t.OTLPProtocol == "grpc" {
		port = 4317
	}
	if u, err := url.Parse(t.OTLPEndpoint); err == nil && u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 && p < 65536 {
			port = int32(p)
		}
	}
	return []networkingv1.NetworkPolicyEgressRule{{
		To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"kubernetes.io/metadata.name": g.o.TelemetryNamespace}}}},
		Ports: tcp(port),
	}}
}

func (g *gen) policy(name, ns, component string, in []networkingv1.NetworkPolicyIngressRule, out []networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(name, ns, g.labels(component, "")),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: g.selector(component, "")},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     in,
			Egress:      out,
		},
	}
}

// peer selects a component's pods in namespace ns.
func (g *gen) peer(ns, component string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: g.selector(component, "")},
	}
}

func (g *gen) dnsRule() networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": g.o.DNSNamespace}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: g.o.DNSLabels},
		}},
		Ports: []networkingv1.NetworkPolicyPort{
			{Protocol: ptr(corev1.ProtocolUDP), Port: ptr(intstr.FromInt32(53))},
			{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt32(53))},
		},
	}
}

// postgresRule lets the vessel reach its task store: the CloudNativePG
// Cluster's pods, or the external server's ranges (needed, or the vessel
// could not reach it); nil on SQLite.
func (g *gen) postgresRule() (*networkingv1.NetworkPolicyEgressRule, error) {
	if !g.postgres() {
		return nil, nil
	}
	if g.o.Postgres == PostgresCNPG {
		return &networkingv1.NetworkPolicyEgressRule{
			To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"cnpg.io/cluster": cnpgName}}}},
			Ports: tcp(5432)}, nil
	}
	if len(g.o.PostgresCIDRs) == 0 {
		return nil, fmt.Errorf("kube: the task store is an external PostgreSQL: say where it is (--postgres-cidr) so the vessel's policy lets it through")
	}
	r := &networkingv1.NetworkPolicyEgressRule{Ports: tcp(g.postgresPort())}
	for _, c := range g.o.PostgresCIDRs {
		r.To = append(r.To, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	return r, nil
}

// outside is every address but the cluster's pod, service, node and
// metadata ranges, per family; plus the ranges [egress] allow_cidrs opens
// on purpose (an intranet site), which may lie inside them.
func (g *gen) outside() []networkingv1.NetworkPolicyPeer {
	var v4, v6 []string
	for _, list := range [][]string{g.o.PodCIDRs, g.o.ServiceCIDRs, g.o.NodeCIDRs, g.o.MetadataCIDRs} {
		for _, c := range list {
			p := netip.MustParsePrefix(c).Masked()
			if p.Addr().Is4() {
				v4 = append(v4, p.String())
			} else {
				v6 = append(v6, p.String())
			}
		}
	}
	peers := []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: v4}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: v6}},
	}
	for _, c := range g.d.Egress.AllowCIDRs {
		peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	return peers
}

func tcp(ports ...int32) []networkingv1.NetworkPolicyPort {
	out := make([]networkingv1.NetworkPolicyPort, len(ports))
	for i, p := range ports {
		out[i] = networkingv1.NetworkPolicyPort{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt32(p))}
	}
	return out
}
