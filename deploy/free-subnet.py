#!/usr/bin/env python3
"""Print a /24 for a deployment's front network that no Docker network and no host route uses.

Usage: free-subnet.py PREFERRED_CIDR

Docker refuses a network whose fixed subnet overlaps another network's pool ("Pool overlaps with
other one on this address space"). The other networks of a deployment take their pools from the
engine's default pools, which on some hosts reach 172.31.0.0/16 (where the example's front subnet
sits). This prints PREFERRED_CIDR when it is free, else the first free /24 among a few fallback
ranges, and exits 1 when none is. It only reads `docker network inspect` and the routing table.
"""
import ipaddress
import json
import subprocess
import sys


def used_networks():
    used = []
    ids = subprocess.run(["docker", "network", "ls", "-q"], check=True, capture_output=True, text=True).stdout.split()
    if ids:
        out = subprocess.run(["docker", "network", "inspect", *ids], check=True, capture_output=True, text=True).stdout
        for net in json.loads(out):
            for cfg in (net.get("IPAM") or {}).get("Config") or []:
                try:
                    used.append((net["Name"], ipaddress.ip_network(cfg.get("Subnet", ""), strict=False)))
                except ValueError:
                    pass
    routes = subprocess.run(["ip", "-4", "route", "show"], check=True, capture_output=True, text=True).stdout
    for line in routes.splitlines():
        dst = (line.split() or ["default"])[0]
        try:
            net = ipaddress.ip_network(dst, strict=False)
        except ValueError:  # "default", "unreachable", ...
            continue
        if net.prefixlen > 0:
            used.append(("route " + dst, net))
    return used


def candidates(preferred):
    yield preferred
    for third in range(247, 256):  # the rest of 172.31.247-255.0/24, near the example's default
        yield ipaddress.ip_network(f"172.31.{third}.0/24")
    for second in range(255, 239, -1):  # then the top of 10/8, rarely used by hosts or Docker
        for third in range(255, 239, -1):
            yield ipaddress.ip_network(f"10.{second}.{third}.0/24")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: free-subnet.py PREFERRED_CIDR")
    preferred = ipaddress.ip_network(sys.argv[1], strict=False)
    used = used_networks()
    for cand in candidates(preferred):
        clash = [name for name, net in used if net.version == cand.version and net.overlaps(cand)]
        if not clash:
            print(cand)
            return
        if cand == preferred:
            print(f"free-subnet: {cand} overlaps {', '.join(clash)}", file=sys.stderr)
    sys.exit("free-subnet: no free /24 found for the front network")


if __name__ == "__main__":
    main()
