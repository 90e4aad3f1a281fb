#!/usr/bin/env bash
# Installs the sandbox seccomp profile on this node where the kubelet finds
# Localhost profiles: <kubelet root>/seccomp/astralvessel/sandbox-<sha>.json,
# the name `astralvessel deploy --target kubernetes` prints and writes into
# the sandbox pods (named by content, so deployments with different
# profiles share a node). Run it as root on every node, or deploy with
# --seccomp-installer-image to have a DaemonSet do it.
#   deploy/k8s/install-seccomp.sh [PROFILE] [KUBELET_ROOT]
set -euo pipefail
profile=${1:-$(dirname "$0")/../seccomp/sandbox.json}
root=${2:-/var/lib/kubelet}
sum=$(sha256sum "$profile" | cut -c1-12)
dir=$root/seccomp/astralvessel
install -d -m 0755 "$dir"
install -m 0644 "$profile" "$dir/.sandbox-$sum.json.tmp"
mv "$dir/.sandbox-$sum.json.tmp" "$dir/sandbox-$sum.json"
echo "installed $dir/sandbox-$sum.json"
