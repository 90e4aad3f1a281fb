#!/usr/bin/env bash
# plain-upstream.sh: the modules that use the patched copy (a replace in
# their go.mod) build, tests included (go vet type-checks them), against
# plain upstream a2a-go v2.4.0: the patches are an optimisation only
# (PATCHES.md says what each one's absence costs), so no code may name
# anything that exists only in them. Each module is built alone
# (GOWORK=off) from a temporary copy of its go.mod without the replace
# (-modfile); its go.sum gains upstream's checksums from vessel/client's,
# which uses plain upstream. Nothing in the repository is changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
mod=github.com/a2aproject/a2a-go/v2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for m in "$@"; do
  (
    cd "$root/$m"
    [ -n "$(GOWORK=off go list -m -f '{{.Replace}}' "$mod" 2>/dev/null | grep -v '^<nil>$')" ] || exit 0
    f="$work/$(echo "$m" | tr / _)"
    cp go.mod "$f.mod"
    { cat go.sum; grep "^$mod v2.4.0[ /]" "$root/vessel/client/go.sum"; } >"$f.sum"
    go mod edit -modfile="$f.mod" -dropreplace="$mod"
    echo "== $m against plain upstream a2a-go v2.4.0"
    GOWORK=off go vet -modfile="$f.mod" ./...
  )
done
