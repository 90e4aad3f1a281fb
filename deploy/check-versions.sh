#!/usr/bin/env bash
# check-versions.sh MODULE...: fails when a module path is required at two
# different versions by the go.mod files of the given modules. Each module
# builds alone (GOWORK=off), so without this check a shared dependency can
# drift apart between modules and the binaries of one repository link two
# versions of it. third_party/a2a-go is upstream's go.mod and stays out.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 MODULE..." >&2; exit 2; }
for m in "$@"; do
  [ -f "$m/go.mod" ] || { echo "check-versions: $m/go.mod not found" >&2; exit 2; }
  # require lines, in a block or alone: "<path> <version> <module>"
  awk -v m="$m" '
    /^require[ \t]*\(/ { inblock = 1; next }
    inblock && /^\)/   { inblock = 0; next }
    inblock && NF >= 2 && $1 !~ /^\/\// { print $1, $2, m }
    /^require[ \t]+[^( \t]/ { print $2, $3, m }
  ' "$m/go.mod"
done | sort -k1,1 -k2,2 | awk '
  { seen[$1] = seen[$1] "\n  " $2 " in " $3 }
  $1 != path { path = $1; first = $2 }
  $1 == path && $2 != first { drift[$1] = 1 }
  END {
    n = 0
    for (p in drift) { print "versions of " p " disagree:" seen[p]; n++ }
    if (n > 0) { print n " module path(s) required at different versions; make them agree" > "/dev/stderr"; exit 1 }
  }'
