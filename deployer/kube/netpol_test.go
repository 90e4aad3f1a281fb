package kube

import (
	"net/netip"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// endpoint is one end of a connection: a pod (ns and labels set) or an
// address outside any pod.
type endpoint struct {
	ns     string
	labels map[string]string
	ip     string
}

func matches(sel *metav1.LabelSelector, labels map[string]string) bool {
	if sel == nil {
		return true
	}
	for k, v := range sel.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return len(sel.MatchExpressions) == 0
}

// peerMatches says whether e is the peer p of a policy in namespace ns.
func peerMatches(p networkingv1.NetworkPolicyPeer, ns string, e endpoint) bool {
	if p.IPBlock != nil {
		a := netip.MustParseAddr(e.ip)
		if !netip.MustParsePrefix(p.IPBlock.CIDR).Contains(a) {
			return false
		}
		for _, x := range p.IPBlock.Except {
			if netip.MustParsePrefix(x).Contains(a) {
				return false
			}
		}
		return true
	}
	if e.ns == "" {
		return false // selectors pick pods only
	}
	if p.NamespaceSelector == nil && e.ns != ns {
		return false
	}
	if p.NamespaceSelector != nil && !matches(p.NamespaceSelector, map[string]string{"kubernetes.io/metadata.name": e.ns}) {
		return false
	}
	return matches(p.PodSelector, e.labels)
}

func portMatches(ports []networkingv1.NetworkPolicyPort, port int) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Port == nil || p.Port.IntValue() == port {
			return true
		}
	}
	return false
}

// allowed evaluates NetworkPolicy semantics for a TCP connection from src
// to dst:port: each side that a policy isolates must have a rule for it.
func allowed(pols []*networkingv1.NetworkPolicy, src, dst endpoint, port int) bool {
	out, in := src.ns == "", dst.ns == ""
	outIsolated, inIsolated := false, false
	for _, p := range pols {
		sel := p.Spec.PodSelector
		for _, t := range p.Spec.PolicyTypes {
			if t == networkingv1.PolicyTypeEgress && src.ns == p.Namespace && matches(&sel, src.labels) {
				outIsolated = true
				for _, r := range p.Spec.Egress {
					if !portMatches(r.Ports, port) {
						continue
					}
					if len(r.To) == 0 {
						out = true
					}
					for _, peer := range r.To {
						out = out || peerMatches(peer, p.Namespace, dst)
					}
				}
			}
			if t == networkingv1.PolicyTypeIngress && dst.ns == p.Namespace && matches(&sel, dst.labels) {
				inIsolated = true
				for _, r := range p.Spec.Ingress {
					if !portMatches(r.Ports, port) {
						continue
					}
					if len(r.From) == 0 {
						in = true
					}
					for _, peer := range r.From {
						in = in || peerMatches(peer, p.Namespace, src)
					}
				}
			}
		}
	}
	return (out || !outIsolated) && (in || !inIsolated)
}

// The generated policies, evaluated by NetworkPolicy's rules, give the
// Compose networks' reachability (the same table deploy/k8s/e2e.sh probes
// on a real cluster with an engine).
func TestPoliciesPlayComposeNetworks(t *testing.T) {
	d := load(t, "basic")
	out := generate(t, d, options(t, "basic"))
	var pols []*networkingv1.NetworkPolicy
	for _, o := range objects(t, out.Manifests) {
		if p, ok := o.(*networkingv1.NetworkPolicy); ok {
			pols = append(pols, p)
		}
	}
	ns := d.Vessel.Project
	sb := ns + "-sandboxes"
	pod := func(n, comp, agent, ip string) endpoint {
		l := map[string]string{"app.kubernetes.io/instance": d.Vessel.Project, "app.kubernetes.io/component": comp}
		if agent != "" {
			l["astralvessel/agent"] = agent
		}
		return endpoint{ns: n, labels: l, ip: ip}
	}
	vessel := pod(ns, "vessel", "", "10.244.0.10")
	egress := pod(ns, "egress", "", "10.244.0.11")
	search := pod(ns, "search", "", "10.244.0.12")
	other := pod(ns, "intruder", "", "10.244.0.13")
	guide := pod(sb, "sandbox", "guide", "10.244.0.20")
	stranger := endpoint{ns: "default", labels: map[string]string{"app": "x"}, ip: "10.244.0.30"}
	node := endpoint{ip: "192.168.10.5"}
	service := endpoint{ip: "10.96.0.1"}
	metadata := endpoint{ip: "169.254.169.254"}
	outside := endpoint{ip: "203.0.113.5"}
	dns := endpoint{ns: "kube-system", labels: map[string]string{"k8s-app": "kube-dns"}, ip: "10.244.0.2"}
	for _, c := range []struct {
		what     string
		src, dst endpoint
		port     int
		want     bool
	}{
		{"vessel to its sandbox", vessel, guide, 8600, true},
		{"vessel to egress model", vessel, egress, 8080, true},
		{"vessel to egress proxy", vessel, egress, 3128, true},
		{"vessel to search", vessel, search, 8080, true},
		{"vessel to DNS", vessel, dns, 53, true},
		{"vessel to other pods", vessel, stranger, 8080, false},
		{"vessel to the outside", vessel, outside, 443, false},
		{"anyone to the vessel's API", stranger, vessel, 8700, true},
		{"anyone to the vessel's gRPC", stranger, vessel, 8701, true},
		{"anyone to another vessel port", stranger, vessel, 8080, false},
		{"search to egress proxy", search, egress, 3128, true},
		{"search to egress model port", search, egress, 8080, false},
		{"search to the outside", search, outside, 443, false},
		{"egress to the outside", egress, outside, 443, true},
		{"egress to other pods", egress, stranger, 8080, false},
		{"egress to the node", egress, node, 10250, false},
		{"egress to a Service address", egress, service, 443, false},
		{"egress to metadata", egress, metadata, 80, false},
		{"egress to a sandbox", egress, guide, 8600, false},
		{"another pod to a sandbox", other, guide, 8600, false},
		{"a pod elsewhere to a sandbox", stranger, guide, 8600, false},
		{"another pod to the egress proxy", other, egress, 3128, false},
		{"sandbox to the vessel", guide, vessel, 8700, false},
		{"sandbox to the egress", guide, egress, 3128, false},
		{"sandbox to DNS", guide, dns, 53, false},
		{"sandbox to the node", guide, node, 6443, false},
		{"sandbox to the outside", guide, outside, 443, false},
		{"sandbox to metadata", guide, metadata, 80, false},
	} {
		if got := allowed(pols, c.src, c.dst, c.port); got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.what, got, c.want)
		}
	}
	// An external PostgreSQL: the vessel reaches its address and port only.
	c := load(t, "custom")
	out = generate(t, c, options(t, "custom"))
	pols = pols[:0]
	for _, o := range objects(t, out.Manifests) {
		if p, ok := o.(*networkingv1.NetworkPolicy); ok {
			pols = append(pols, p)
		}
	}
	cv := endpoint{ns: c.Vessel.Project, labels: map[string]string{"app.kubernetes.io/instance": c.Vessel.Project, "app.kubernetes.io/component": "vessel"}, ip: "10.244.0.10"}
	pg := endpoint{ip: "10.30.0.5"}
	if !allowed(pols, cv, pg, 6543) || allowed(pols, cv, pg, 5432) || allowed(pols, cv, endpoint{ip: "10.30.0.6"}, 6543) {
		t.Error("the vessel's way to PostgreSQL is not exactly its address and port")
	}
}
