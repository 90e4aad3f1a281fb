#!/usr/bin/env bash
# Installs the machine packages AstralVessel's build, tests and local stack need
# (Debian/Ubuntu, as root), and starts PostgreSQL for the store tests when asked.
# Safe to run again: it installs only what is missing.
set -euo pipefail

pkgs=(libseccomp-dev pkg-config protobuf-compiler python3 bash coreutils grep findutils
      ca-certificates iproute2 bubblewrap tinyproxy debootstrap postgresql-15 curl prometheus)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts tinyproxy as a service on install; the benchmark runs its own.
  (command -v service >/dev/null && service tinyproxy stop >/dev/null 2>&1) || true
  pkill -x tinyproxy 2>/dev/null || true
  # Likewise Prometheus: make e2e starts its own against the deployment.
  (command -v service >/dev/null && service prometheus stop >/dev/null 2>&1) || true
fi
command -v go >/dev/null || { echo "setup: Go 1.26 is required (go not found)" >&2; exit 1; }
