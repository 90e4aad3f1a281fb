#!/usr/bin/env bash
# Makes Docker's `runsc` runtime usable for the gvisor tier (docs/sandbox.md, "The gvisor tier"),
# as root, on the machine that runs the Compose file. Safe to run again.
#
#   1. a runsc binary: $RUNSC when set; else gVisor's runsc built from its Go module at the pinned
#      GVISOR_VERSION (through the Go module proxy, like every Go dependency) with the go.mod and
#      go.sum committed in deploy/gvisor and -mod=readonly, cached in .cache/gvisor/ with its sha256
#      (checked before each install) and installed as /usr/local/lib/astralvessel/runsc. Debian's runsc
#      (0.0~20221219) refuses every container with a network on kernels since about 6.8, where
#      /proc/sys/net/core/rmem_default exists in every network namespace: "cannot run with network
#      enabled in root network namespace" (gVisor issue 10704, fixed in 2024)
#   2. registers it with dockerd as the runtime `runsc` (the name the generated Compose file uses):
#      merges /etc/docker/daemon.json ($DOCKER_DAEMON_JSON) through deploy/gvisor/daemon-json.py,
#      keeping every other key, the file's mode and owner (a symlink is followed), and saying so when
#      it replaces a runsc entry that pointed elsewhere; then SIGHUP, on which dockerd reloads its
#      runtimes without restarting anything. Nothing is written or signalled when daemon.json
#      already holds this runsc entry
#   3. checks that `docker run --runtime=runsc` on a network answers with gVisor's kernel, in the
#      image given (default astralvessel-sandboxd:local; never pulled; skipped while it is not built)
#
# Usage: deploy/gvisor-runtime.sh [--check-only] [IMAGE]
#   --check-only: only step 3 (exit 1 when Docker has no working runsc runtime)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
# gVisor publishes its Go-buildable tree as pseudo-versions of gvisor.dev/gvisor.
GVISOR_VERSION="${GVISOR_VERSION:-v0.0.0-20260905035102-160fafc42237}"
installed=/usr/local/lib/astralvessel/runsc
daemon_json="${DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}"
# No --oci-seccomp: runsc would apply the container's profile inside gVisor, but answers every refused
# system call with EPERM whatever the profile's errnoRet, so clone3 (the profile's ENOSYS) fails and
# sandboxd cannot start a thread. The boundary is gVisor's kernel; each call gets sandboxd's filter.
runtime_args='[]'
check_only=0
image=""
while (($#)); do
	case "$1" in
	--check-only) check_only=1; shift ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	-*) echo "gvisor-runtime: unknown flag $1" >&2; exit 2 ;;
	*) image="$1"; shift ;;
	esac
done
image="${image:-astralvessel-sandboxd:local}"
log() { printf 'gvisor-runtime: %s\n' "$*" >&2; }

# check: a container under runsc on a user-defined bridge network (as a sandbox sits on its tools
# network) reports gVisor's kernel build line.
check() {
	local net="astralvessel-gvisor-check-$$" out rc=0
	docker network create --internal "$net" >/dev/null
	out="$(timeout 120 docker run --rm --pull never --runtime=runsc --network "$net" --entrypoint cat "$image" /proc/version 2>&1)" || rc=$?
	docker network rm "$net" >/dev/null 2>&1 || true
	if [[ $rc == 0 && $out == *"#1 SMP Sun Jan 10 15:06:54 PST 2016"* ]]; then
		log "docker run --runtime=runsc answers from gVisor's kernel ($image)"
		return 0
	fi
	log "docker run --runtime=runsc failed (exit $rc): ${out:0:400}"
	return 1
}

if ((check_only)); then
	check
	exit
fi
[[ $(id -u) == 0 ]] || { log "run as root (it writes $daemon_json and signals dockerd)"; exit 1; }

# 1. the binary
bin="${RUNSC:-}"
if [[ -z $bin ]]; then
	cache="$root/.cache/gvisor/$GVISOR_VERSION"
	# The build module (deploy/gvisor: go.mod and go.sum, outside go.work) fixes every dependency's
	# hash in the repo; -mod=readonly refuses to build when they do not match. GVISOR_VERSION must be
	# the version its require line (alone or in a block) names.
	[[ $(awk '$1 == "require" && $2 == "gvisor.dev/gvisor" { print $3 } $1 == "gvisor.dev/gvisor" { print $2 }' \
		"$here/gvisor/go.mod") == "$GVISOR_VERSION" ]] ||
		{ log "GVISOR_VERSION $GVISOR_VERSION is not the one deploy/gvisor/go.mod requires: update that module"; exit 1; }
	if [[ ! -x $cache/runsc || ! -f $cache/runsc.sha256 ]]; then
		log "building runsc $GVISOR_VERSION from gvisor.dev/gvisor (a few CPU-minutes, cached in $cache)"
		mkdir -p "$cache"
		(cd "$here/gvisor" && GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
			go build -trimpath -ldflags '-s -w' -o "$cache/runsc.tmp" gvisor.dev/gvisor/runsc)
		(cd "$cache" && sha256sum runsc.tmp | sed 's/runsc\.tmp$/runsc/' >runsc.sha256.tmp)
		mv "$cache/runsc.tmp" "$cache/runsc"
		mv "$cache/runsc.sha256.tmp" "$cache/runsc.sha256"
	fi
	# The sum sits beside the binary in the same cache folder, so this check catches a binary
	# corrupted or replaced on its own since the build (a truncated write, a stray copy); it is no
	# defence against whoever may write the cache, who can rewrite both. The cache is trusted as
	# much as the clone it is in: run this script as root from a clone only root may write.
	(cd "$cache" && sha256sum --quiet --strict -c runsc.sha256) ||
		{ log "$cache/runsc does not match the sha256 recorded when it was built: remove $cache and run again"; exit 1; }
	bin="$cache/runsc"
fi
"$bin" --version >/dev/null || { log "$bin does not run"; exit 1; }
if [[ $bin != "$installed" ]] && ! cmp -s "$bin" "$installed"; then
	install -D -m 0755 "$bin" "$installed.new"
	mv "$installed.new" "$installed"
fi
log "runsc: $installed ($("$installed" --version | head -n1))"

# 2. the runtime
mkdir -p "$(dirname "$daemon_json")"
changed="$(python3 "$here/gvisor/daemon-json.py" "$daemon_json" "$installed" "$runtime_args")"
if [[ $changed == changed ]]; then
	pid="$(cat /var/run/docker.pid 2>/dev/null || pgrep -o -x dockerd)"
	[[ -n $pid ]] || { log "no dockerd to reload"; exit 1; }
	kill -HUP "$pid"
	for _ in $(seq 1 20); do
		docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q "\"path\":\"$installed\"" && break
		sleep 0.5
	done
	log "registered runsc in $daemon_json; dockerd (pid $pid) reloaded it"
fi
docker info --format '{{json .Runtimes}}' | grep -q "\"path\":\"$installed\"" ||
	{ log "dockerd does not list $installed as a runtime after the reload"; exit 1; }

# 3. the check, when the image is built (make e2e checks again once it has built it)
if docker image inspect "$image" >/dev/null 2>&1; then
	check
else
	log "no image $image yet: the runtime is registered, the check is left to make e2e"
fi
