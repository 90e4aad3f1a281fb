#!/usr/bin/env bash
# A local stack's load beside a running Compose deployment on the same host (issue 31: two
# deployments on one host). Called by e2e.sh while its stack is up:
#
#   BESIDE_APP_KEY=... deploy/beside-load.sh PROJECT PROBE_CONTAINER VESSEL_URL AGENT...
#
# 1. starts the load scenario (make load, LOAD_ARGS from BESIDE_LOAD_ARGS; default the Makefile's) on a
#    local stack of its own project in a loopback-only network namespace, report in .cache/load-beside;
# 2. while it runs, and once after, runs the conformance checks against each AGENT of the Compose
#    deployment from PROBE_CONTAINER (the e2e's client on the front network);
# 3. checks: the load ended with 0 failed turns, 0 scratch left and 0 shell commands killed from
#    outside their turn (make load fails otherwise); every conformance run passed; no sandbox
#    container of PROJECT restarted, stopped, or logged a call ended by a signal nobody asked for,
#    a sweep killed by another process, or a start refused over foreign processes.
# Sends nothing beyond loopback and the project's own containers.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
[[ $# -ge 4 ]] || { echo "usage: BESIDE_APP_KEY=... $0 PROJECT PROBE_CONTAINER VESSEL_URL AGENT..." >&2; exit 2; }
project="$1" probe="$2" url="$3"
shift 3
agents=("$@")
: "${BESIDE_APP_KEY:?set BESIDE_APP_KEY to the app key of the Compose deployment}"
# Without BESIDE_LOAD_ARGS, make's own LOAD_ARGS default applies (not restated here).
loadvars=()
args="the Makefile's LOAD_ARGS"
if [[ -n ${BESIDE_LOAD_ARGS:-} ]]; then
	loadvars=(LOAD_ARGS="$BESIDE_LOAD_ARGS")
	args=$BESIDE_LOAD_ARGS
fi
out="$root/.cache/load-beside"
log="$root/.cache/load-beside.log"
mkdir -p "$root/.cache"
failed=0
say() { printf 'beside-load: %s\n' "$*"; }

sandboxes=()
for c in $(docker ps -q --filter "label=com.docker.compose.project=$project"); do
	svc="$(docker inspect -f '{{index .Config.Labels "com.docker.compose.service"}}' "$c")"
	[[ $svc == sandbox-* ]] && sandboxes+=("$c")
done
[[ ${#sandboxes[@]} -gt 0 ]] || { say "no sandbox container of project $project runs"; exit 1; }
restarts() { docker inspect -f '{{.Name}} {{.State.Running}} {{.RestartCount}} {{.State.StartedAt}}' "${sandboxes[@]}"; }
before="$(restarts)"
since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

conformance() { # one run of the conformance checks for every agent; non-zero if any failed
	local a rc=0
	for a in "${agents[@]}"; do
		docker exec "$probe" /e2e/conformance "$url" "$BESIDE_APP_KEY" "$a" >>"$root/.cache/beside-conformance.log" 2>&1 || {
			say "FAIL conformance of $a (see .cache/beside-conformance.log)"
			rc=1
		}
	done
	return $rc
}
: >"$root/.cache/beside-conformance.log"

say "local load ($args) beside project $project; log in .cache/load-beside.log"
s=$SECONDS
env -u LOAD_ARGS make -C "$root" --no-print-directory load "${loadvars[@]}" LOAD_OUT="$out" >"$log" 2>&1 &
load_pid=$!
rounds=0
while kill -0 "$load_pid" 2>/dev/null; do
	conformance || failed=1
	rounds=$((rounds + 1))
done
load_rc=0
wait "$load_pid" || load_rc=$?
say "local load ended (exit $load_rc) after $((SECONDS - s))s; $rounds conformance rounds ran meanwhile"
sed -n '/^| Measure/,/^$/p' "$log"
if [[ $load_rc != 0 ]]; then
	tail -n 30 "$log"
	say "FAIL the local load (a failed turn, scratch left, or a shell command killed from outside its turn)"
	failed=1
fi
[[ $rounds -gt 0 ]] || { say "FAIL no conformance round ran while the load did"; failed=1; }
conformance || failed=1

after="$(restarts)"
if [[ $before != "$after" ]]; then
	printf 'before:\n%s\nafter:\n%s\n' "$before" "$after"
	say "FAIL a sandbox container of $project stopped or restarted during the load"
	failed=1
fi
for c in "${sandboxes[@]}"; do
	name="$(docker inspect -f '{{.Name}}' "$c")"
	docker logs --since "$since" "$c" 2>&1 | python3 -c '
import json, re, sys
name, bad, calls = sys.argv[1], 0, 0
foreign = re.compile(r"sweeper was killed|did not start already run|overlapping --uid-range")
for line in sys.stdin:
    if foreign.search(line):
        bad += 1
        print("FAIL %s: %s" % (name, line.strip()[:300]))
        continue
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("msg") != "call":
        continue
    calls += 1
    code = r.get("code", 0)
    # -1: the command was ended by a signal; 129..192: a shell reporting its child ended by one.
    # Either counts only without a stop or an error (a timeout stops a call with a signal too).
    # Nothing in the conformance checks asks for either otherwise.
    if (code == -1 or 128 < code <= 192) and not r.get("stopped") and not r.get("error"):
        bad += 1
        print("FAIL %s: a call ended by a signal nobody asked for: %s" % (name, line.strip()[:300]))
print("beside-load: %s logged %d calls since the load began, %d killed from outside" % (name, calls, bad))
sys.exit(1 if bad else 0)' "$name" || failed=1
done
if [[ $failed != 0 ]]; then
	say "FAILED"
	exit 1
fi
say "passed: the local load and the Compose deployment ($project) ran side by side, neither harmed"
