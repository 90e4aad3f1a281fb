package spec

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/issuers"
)

// vessel checks [vessel] and fills its defaults, one step per group of
// fields, in the order the problems are reported.
func (v *validator) vessel() {
	ves := &v.d.Vessel
	v.vesselProject()
	if ves.FrontSubnet == "" {
		ves.FrontSubnet = DefaultFrontSubnet
	}
	if ves.FrontAddress == "" {
		ves.FrontAddress = DefaultFrontAddress
	}
	v.intSetting("vessel.port", &ves.Port, DefaultPort, 1, 65535)
	v.frontNetwork()
	v.publicURL()
	v.grpcBinding()
	v.intSetting("vessel.task_ttl_hours", &ves.TaskTTLHours, DefaultTaskTTLHours, 1, 24*365)
	v.intSetting("vessel.request_body_timeout_seconds", &ves.RequestBodyTimeoutSecs, DefaultRequestBodyTimeout, 1, 3600)
	v.intSetting("vessel.shutdown_grace_seconds", &ves.ShutdownGraceSecs, DefaultShutdownGrace, 0, 3600)
	v.taskStore()
}

// intSetting gives an unset integer field its default, or reports it out
// of [lo, hi].
func (v *validator) intSetting(field string, p *int, def, lo, hi int) {
	if !v.c.set(field) {
		*p = def
	} else if *p < lo || *p > hi {
		v.c.add(field, "%d is out of range; allowed %d to %d", *p, lo, hi)
	}
}

func (v *validator) vesselProject() {
	ves := &v.d.Vessel
	if !v.c.set("vessel.project") {
		ves.Project = DefaultProject
	} else if !issuers.ValidID(ves.Project) {
		v.c.add("vessel.project", "invalid project %q; allowed: lowercase letters, digits and -, starting with a letter or digit", ves.Project)
	}
}

// frontNetwork checks the front subnet and the vessel's address in it.
func (v *validator) frontNetwork() {
	c, ves := v.c, &v.d.Vessel
	prefix, err := netip.ParsePrefix(ves.FrontSubnet)
	switch {
	case err != nil || !prefix.Addr().Is4():
		c.add("vessel.front_subnet", "invalid subnet %q; want an IPv4 CIDR such as %s", ves.FrontSubnet, DefaultFrontSubnet)
		return
	case prefix.Bits() > 29:
		c.add("vessel.front_subnet", "subnet %s is too small; allowed prefix lengths 8 to 29", ves.FrontSubnet)
		return
	case prefix.Masked() != prefix:
		c.add("vessel.front_subnet", "%s has host bits set; did you mean %s?", ves.FrontSubnet, prefix.Masked())
		return
	}
	addr, err := netip.ParseAddr(ves.FrontAddress)
	if err != nil || !addr.Is4() {
		c.add("vessel.front_address", "invalid address %q; want an IPv4 address inside front_subnet", ves.FrontAddress)
		return
	}
	first := prefix.Addr()
	if !prefix.Contains(addr) || addr == first || addr == first.Next() || addr == lastAddr(prefix) {
		c.add("vessel.front_address", "%s must be inside %s and not its network, gateway (first host) or broadcast address", addr, prefix)
	}
}

// publicURL defaults the URL callers reach the vessel at to its front
// address, or checks the one given.
func (v *validator) publicURL() {
	ves := &v.d.Vessel
	if ves.PublicURL == "" {
		ves.PublicURL = fmt.Sprintf("http://%s:%d", ves.FrontAddress, ves.Port)
	} else if msg := checkURL(ves.PublicURL, false); msg != "" {
		v.c.add("vessel.public_url", "%s", msg)
	} else {
		ves.PublicURL = strings.TrimRight(ves.PublicURL, "/")
	}
}

// grpcBinding checks the gRPC port (its own, not the HTTP one) and the
// address the agent card advertises for it (from public_url by default).
func (v *validator) grpcBinding() {
	c, ves := v.c, &v.d.Vessel
	v.intSetting("vessel.grpc_port", &ves.GRPCPort, DefaultGRPCPort, 1, 65535)
	if ves.GRPCPort == ves.Port {
		c.add("vessel.grpc_port", "%d is also vessel.port; the gRPC binding needs a port of its own", ves.GRPCPort)
	}
	if ves.GRPCPublicAddress == "" {
		if u, err := url.Parse(ves.PublicURL); err == nil && u.Hostname() != "" {
			ves.GRPCPublicAddress = net.JoinHostPort(u.Hostname(), strconv.Itoa(ves.GRPCPort))
		}
	} else if host, port, err := net.SplitHostPort(ves.GRPCPublicAddress); err != nil || host == "" || !validPort(port) {
		c.add("vessel.grpc_public_address", "%q: want host:port, for example vessel.example.org:%d", ves.GRPCPublicAddress, DefaultGRPCPort)
	}
}

func (v *validator) taskStore() {
	ves := &v.d.Vessel
	if ves.TaskStore != "" && v.resolve("vessel.task_store", &ves.TaskStore) {
		u, err := url.Parse(ves.TaskStore)
		if err != nil || (u.Scheme != "sqlite" && u.Scheme != "postgres" && u.Scheme != "postgresql") {
			v.c.add("vessel.task_store", "want sqlite:///path/tasks.sqlite or postgres://user@host/db (env: allowed); leave it out for SQLite in the vessel's data folder")
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= (1 << (32 - p.Bits())) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
