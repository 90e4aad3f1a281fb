#!/usr/bin/env bash
# `make images`: builds every service binary on the host, then one image per service.
#
# No registry is needed: the Go binaries are built here (static; sandboxd links libseccomp statically)
# and copied into images on `scratch`; the sandbox image builds on a local Debian base made by
# deploy/base-image.sh unless BASE names another image (for example debian:bookworm-slim where a
# registry is reachable). Each image is tagged <project>-<service>:local, the names the generated
# Compose file uses.
#
# Usage: deploy/images.sh [--project NAME] [--no-build-binaries] [service ...]
#   services: vessel sandboxd egress deployer scripted-model searxng (default: all)
#   env: BASE (sandbox base image; default astralvessel-base:bookworm, built when missing)
#        SEARXNG_IMAGE (tag this SearXNG image as <project>-searxng:local instead of building the
#        offline stand-in from deploy/images/searxng)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
project=astralvessel
build_bins=1
services=()
while (($#)); do
	case "$1" in
	--project) project="$2"; shift 2 ;;
	--project=*) project="${1#*=}"; shift ;;
	--no-build-binaries) build_bins=0; shift ;;
	-h | --help) sed -n '2,13p' "$0"; exit 0 ;;
	-*) echo "images: unknown flag $1" >&2; exit 2 ;;
	*) services+=("$1"); shift ;;
	esac
done
((${#services[@]})) || services=(vessel sandboxd egress deployer scripted-model searxng)
base="${BASE:-astralvessel-base:bookworm}"
out="$root/.cache/images"
bin="$out/bin"
mkdir -p "$bin"

log() { printf 'images: %s\n' "$*" >&2; }

# Per service: Go module dir, main package, binary name, Dockerfile.
module_of() { case "$1" in vessel | scripted-model) echo vessel ;; *) echo "$1" ;; esac; }
pkg_of() {
	case "$1" in
	deployer) echo ./cmd/astralvessel ;;
	*) echo "./cmd/$1" ;;
	esac
}
binary_of() { case "$1" in deployer) echo astralvessel ;; searxng) echo searxng-stub ;; *) echo "$1" ;; esac; }
dockerfile_of() {
	case "$1" in
	scripted-model) echo "$root/vessel/Dockerfile.scripted-model" ;;
	searxng) echo "$here/images/searxng/Dockerfile" ;;
	*) echo "$root/$1/Dockerfile" ;;
	esac
}

build_binary() {
	local svc="$1" mod pkg name
	mod="$(module_of "$svc")"
	pkg="$(pkg_of "$svc")"
	name="$(binary_of "$svc")"
	log "go build $svc -> .cache/images/bin/$name"
	if [[ $svc == searxng ]]; then
		# Not a module: one stdlib-only file, built outside the workspace.
		(cd "$here/images/searxng" && GOWORK=off CGO_ENABLED=0 go build -ldflags '-s -w' -o "$bin/$name" main.go)
	elif [[ $svc == sandboxd ]]; then
		# cgo for libseccomp-golang, linked fully static so the binary runs on any base image.
		(cd "$root/$mod" && CGO_ENABLED=1 go build -tags 'netgo osusergo static_build' \
			-ldflags '-s -w -linkmode external -extldflags -static' -o "$bin/$name" "$pkg")
	else
		(cd "$root/$mod" && CGO_ENABLED=0 go build -ldflags '-s -w' -o "$bin/$name" "$pkg")
	fi
}

# check_static fails unless the binary exists and is statically linked: the scratch images have no
# libc, and the sandbox image must not depend on its base's. ldd (always there with glibc) says so
# for static and static-pie binaries alike; it exits 1 for them, so its output is what counts.
check_static() {
	local f="$1" linked
	[[ -x $f ]] || { log "missing binary $f"; exit 1; }
	linked="$(LC_ALL=C ldd "$f" 2>&1 || true)"
	if ! grep -q 'not a dynamic executable\|statically linked' <<<"$linked"; then
		log "$f is not statically linked: $(head -n 3 <<<"$linked")"
		exit 1
	fi
}

# The tiny userland every scratch image carries: CA bundle, a passwd naming the service users (each
# service runs as its own uid, deployer/compose ServiceUIDs; 65532 is the deployer CLI's), /tmp.
make_rootfs() {
	local r="$1"
	local ca=/etc/ssl/certs/ca-certificates.crt
	[[ -r $ca ]] || { log "no CA bundle at $ca (apt-get install ca-certificates)"; exit 1; }
	rm -rf "$r"
	mkdir -p "$r/etc/ssl/certs" "$r/tmp"
	chmod 1777 "$r/tmp"
	cp "$ca" "$r/etc/ssl/certs/ca-certificates.crt"
	local users=(vessel:61001 egress:61002 search:61003 scripted-model:61004 nonroot:65532) u
	printf 'root:x:0:0:root:/root:/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\n' >"$r/etc/group"
	for u in "${users[@]}"; do
		printf '%s:x:%s:%s:%s:/nonexistent:/sbin/nologin\n' "${u%%:*}" "${u#*:}" "${u#*:}" "${u%%:*}" >>"$r/etc/passwd"
		printf '%s:x:%s:\n' "${u%%:*}" "${u#*:}" >>"$r/etc/group"
	done
}

# Without buildx the CLI falls back to the classic builder anyway; saying so keeps its output quiet.
if ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi

start=$SECONDS
# The local base (debootstrap: mostly download time) is made while the Go binaries compile, and the
# sandbox image is built last so it waits for it as little as possible.
base_pid=""
ordered=()
for svc in "${services[@]}"; do [[ $svc == sandboxd ]] || ordered+=("$svc"); done
for svc in "${services[@]}"; do [[ $svc != sandboxd ]] || ordered+=("$svc"); done
services=("${ordered[@]}")
if [[ " ${services[*]} " == *" sandboxd "* && $base == astralvessel-base:* ]]; then
	BASE_IMAGE="$base" "$here/base-image.sh" &
	base_pid=$!
fi
for svc in "${services[@]}"; do
	case "$svc" in vessel | sandboxd | egress | deployer | scripted-model | searxng) ;; *)
		log "unknown service $svc"
		exit 2
		;;
	esac
	tag="$project-$svc:local"
	if [[ $svc == searxng && -n ${SEARXNG_IMAGE:-} ]]; then
		log "tagging $SEARXNG_IMAGE as $tag"
		docker tag "$SEARXNG_IMAGE" "$tag"
		continue
	fi
	[[ $build_bins == 0 ]] || build_binary "$svc"
	name="$(binary_of "$svc")"
	check_static "$bin/$name"
	ctx="$out/ctx/$svc"
	rm -rf "$ctx"
	mkdir -p "$ctx"
	cp "$bin/$name" "$ctx/$name"
	build_args=()
	if [[ $svc == sandboxd ]]; then
		if [[ -n $base_pid ]]; then
			wait "$base_pid" || { log "the local base image failed"; exit 1; }
		fi
		build_args=(--build-arg "BASE=$base")
	else
		make_rootfs "$ctx/rootfs"
		[[ $svc != vessel ]] || mkdir -p "$ctx/data"
	fi
	log "docker build $tag"
	docker build -q "${build_args[@]}" --label "org.astralvessel.service=$svc" \
		-t "$tag" -f "$(dockerfile_of "$svc")" "$ctx" 2> >(grep -v 'legacy builder is deprecated\|BuildKit is currently disabled\|environment-variable\|^ *$' >&2) >/dev/null
done
log "built ${services[*]} for project $project in $((SECONDS - start))s"
