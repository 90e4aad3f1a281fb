#!/usr/bin/env bash
# Builds the local Debian base image for the sandbox (astralvessel-base:bookworm by default) from
# Debian's own packages, for machines that cannot pull images from a registry.
#
# debootstrap (minbase) fetches bookworm from the mirror named in this machine's apt configuration,
# the root filesystem is trimmed, cached as a tarball under .cache/base/, and `docker import`ed.
# A re-run is a no-op when the image exists, and only an import when the tarball is cached.
#
# Usage: deploy/base-image.sh [--force]      env: BASE_IMAGE, BASE_SUITE, BASE_MIRROR, BASE_CACHE
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
image="${BASE_IMAGE:-astralvessel-base:bookworm}"
suite="${BASE_SUITE:-bookworm}"
cache="${BASE_CACHE:-$root/.cache/base}"
packages="bash,coreutils,grep,findutils,python3,ca-certificates"
# The cache is keyed by suite and package list, so changing either builds a fresh root filesystem.
tarball="$cache/$suite-$(printf '%s' "$packages" | sha256sum | cut -c1-12)-rootfs.tar.gz"
force=0
[[ "${1:-}" == "--force" ]] && force=1

log() { printf 'base-image: %s\n' "$*" >&2; }

if [[ $force == 0 ]] && docker image inspect "$image" >/dev/null 2>&1; then
	log "$image exists; nothing to do (--force rebuilds)"
	exit 0
fi

# mirror_uri prints the first Debian archive URI from the apt configuration (deb822 .sources files
# first, then one-line .list files), skipping the security archive. It never guesses a host.
mirror_uri() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		# Each stanza: remember its URIs, print it once its Suites line names the plain suite.
		uri="$(awk -v suite="$suite" '
			/^[[:space:]]*$/ { u = "" ; next }
			/^URIs:/ { u = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite && u != "") { print u; exit } }
		' "$f")"
		if [[ -n $uri ]]; then
			echo "$uri"
			return 0
		fi
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r $f ]] || continue
		uri="$(awk -v suite="$suite" '$1 == "deb" {
			for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($(i+1) == suite) { print $i; exit } }
		}' "$f")"
		if [[ -n $uri ]]; then
			echo "$uri"
			return 0
		fi
	done
	return 1
}

if [[ $force == 1 || ! -s $tarball ]]; then
	command -v debootstrap >/dev/null || { log "debootstrap is not installed (apt-get install debootstrap)"; exit 1; }
	[[ $(id -u) == 0 ]] || { log "debootstrap needs root"; exit 1; }
	mirror="${BASE_MIRROR:-}"
	[[ -n $mirror ]] || mirror="$(mirror_uri)" || { log "no Debian mirror for $suite in /etc/apt (set BASE_MIRROR)"; exit 1; }
	log "debootstrap $suite from $mirror (minbase + $packages)"
	mkdir -p "$cache/debs"
	work="$(mktemp -d "$cache/rootfs.XXXXXX")"
	trap 'rm -rf "$work"' EXIT
	start=$SECONDS
	debootstrap --variant=minbase --include="$packages" --cache-dir="$cache/debs" \
		"$suite" "$work/rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$cache/debootstrap.log" >&2; log "debootstrap failed (full log: $cache/debootstrap.log)"; exit 1; }
	r="$work/rootfs"
	# Trim what a sandbox never reads: package caches, docs, manuals, locales, logs.
	rm -rf "$r"/var/cache/apt/* "$r"/var/lib/apt/lists/* "$r"/usr/share/doc/* "$r"/usr/share/man/* \
		"$r"/usr/share/info/* "$r"/var/log/* "$r"/debootstrap
	find "$r/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} + 2>/dev/null || true
	# The tarball is the cache; write it atomically so an interrupted run never leaves half of one.
	tar -C "$r" --numeric-owner -czf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	log "rootfs cached at $tarball ($(du -h "$tarball" | cut -f1)) in $((SECONDS - start))s"
fi

log "importing $tarball as $image"
docker import \
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'ENV LANG=C.UTF-8' \
	--change 'CMD ["/bin/bash"]' \
	"$tarball" "$image" >/dev/null
log "done: $image"
