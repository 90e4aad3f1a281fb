#!/usr/bin/env bash
# check.sh: the patches in this folder, applied in order with `git apply` to
# plain upstream a2a-go v2.4.0 (from the module cache, `go mod download`),
# give exactly the vendored tree (upstream's tests included); so each patch
# is the form to send upstream, and nothing is patched that no patch says.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$(dirname "$here")
src=$(cd "$tree" && GOWORK=off GOFLAGS=-mod=mod go mod download -json github.com/a2aproject/a2a-go/v2@v2.4.0 |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "patches/check.sh: upstream a2a-go v2.4.0 not found" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
mkdir -p "$work/up"
# The vendored tree keeps upstream's library packages and their tests only.
(cd "$src" && find . -type f -name '*.go' -not -path './e2e/*' -not -path './cmd/*' \
  -not -path './examples/*' -not -path './tools/*' -print0 | xargs -0 cp --parents -t "$work/up")
for f in LICENSE go.mod go.sum; do cp "$src/$f" "$work/up/"; done
chmod -R u+w "$work/up"
for p in "$here"/[0-9]*.patch; do
  (cd "$work/up" && git apply "$p") || { echo "patches/check.sh: $(basename "$p") does not apply" >&2; exit 1; }
done
if ! diff -r -x patches -x PATCHES.md "$work/up" "$tree" >"$work/diff"; then
  echo "patches/check.sh: upstream v2.4.0 plus patches/*.patch differs from third_party/a2a-go:" >&2
  head -50 "$work/diff" >&2
  exit 1
fi
echo "third_party/a2a-go = upstream v2.4.0 + $(ls "$here"/[0-9]*.patch | wc -l) patches"
