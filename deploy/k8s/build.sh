#!/usr/bin/env bash
# Builds a single-node Kubernetes from the Go module proxy and Debian's
# packages alone, into .cache/k8s/<version>/bin (kept between runs):
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and
# kube-proxy from the k8s.io/kubernetes module, kube-router (the
# NetworkPolicy engine), CoreDNS (the cluster DNS, with only the plugins
# the test cluster uses) and avk8s-tools (pause and the probes). The
# module's zip has no staging/ tree, so its ./staging replaces are dropped
# and the published k8s.io/* modules of the same release are required.
#
# CPU-heavy (about 16 CPU-minutes cold): run it as
#   flock /tmp/heavy.lock nice -n 19 deploy/k8s/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
K8S_VERSION=${K8S_VERSION:-v1.34.4}
STAGING_VERSION=v0${K8S_VERSION#v1}
KUBE_ROUTER_VERSION=${KUBE_ROUTER_VERSION:-v2.1.0}
# The newest CoreDNS on this release's client-go (v0.34.x).
COREDNS_VERSION=${COREDNS_VERSION:-v1.14.1}
# K8S_CACHE: where the binaries are kept (default .cache/k8s), e.g. a folder
# shared by several clones of the repository.
CACHE=${K8S_CACHE:-$ROOT/.cache/k8s}/$K8S_VERSION
BIN=$CACHE/bin
mkdir -p "$BIN"
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

need_debian() {
  local missing=()
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v etcdctl >/dev/null || missing+=(etcd-client)
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  command -v ipset >/dev/null || missing+=(ipset)
  command -v iptables >/dev/null || missing+=(iptables)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}
need_debian

components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
todo=()
for c in "${components[@]}"; do [ -x "$BIN/$c" ] || todo+=("./cmd/$c"); done
if [ ${#todo[@]} -gt 0 ]; then
  echo "== k8s.io/kubernetes@$K8S_VERSION: ${todo[*]}"
  dir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  src=$CACHE/src
  if [ ! -f "$src/.prepared" ]; then
    rm -rf "$src"
    cp -r "$dir" "$src"
    chmod -R u+w "$src"
    (cd "$src"
     # Each ./staging replace names a published module of this release.
     for m in $(grep -o 'k8s.io/[A-Za-z0-9._/-]* => ./staging/' go.mod | cut -d' ' -f1 | sort -u); do
       go mod edit -dropreplace="$m" -require="$m@$STAGING_VERSION"
     done
     touch .prepared)
  fi
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$src" && go build -trimpath -ldflags "$ld" -o "$BIN/" "${todo[@]}")
fi

if [ ! -x "$BIN/kube-router" ]; then
  echo "== kube-router $KUBE_ROUTER_VERSION"
  GOBIN=$BIN go install -trimpath -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION"
fi

if [ ! -x "$BIN/coredns" ]; then
  echo "== coredns $COREDNS_VERSION"
  # CoreDNS's own main pulls in every plugin (cloud DNS providers and all);
  # the cluster needs the kubernetes plugin and a few others, so a main of
  # its own imports just those (the Corefile in cluster.sh uses them).
  src=$CACHE/coredns-src
  rm -rf "$src"
  mkdir -p "$src"
  cat >"$src/main.go" <<'EOF'
package main

import (
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"

	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
EOF
  (cd "$src" && go mod init avk8s/coredns >/dev/null 2>&1 &&
    go mod edit -require="github.com/coredns/coredns@$COREDNS_VERSION" &&
    go build -trimpath -ldflags "-s -w" -o "$BIN/coredns" .)
fi

# The cluster's own image: pause (the CRI sandbox) and the probes.
go build -trimpath -ldflags "-s -w" -o "$BIN/avk8s-tools" "$ROOT/deploy/k8s/tools/tools.go"
ls -la "$BIN"
