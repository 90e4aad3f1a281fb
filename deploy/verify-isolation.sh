#!/usr/bin/env bash
# Isolation probes for a running deployment: one PASS/FAIL line per probe and a final
# "N passed, M failed"; exits non-zero if any probe fails.
#
# Usage (from the folder holding compose.generated.yml, .generated/ and .env):
#   deploy/verify-isolation.sh [--project NAME] [--dir DIR] [--env-file FILE] [--image IMAGE]
# The probes run inside the project's containers (docker exec) or in throwaway probe containers
# built from the sandbox image that share one container's namespaces or sit on the front network.
# They target only the project's own containers and loopback. Needs docker and python3 on the host.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v docker >/dev/null || { echo "verify-isolation: docker not found" >&2; exit 2; }
command -v python3 >/dev/null || { echo "verify-isolation: python3 not found" >&2; exit 2; }
exec python3 "$here/probes/verify.py" "$@"
