#!/usr/bin/env bash
# End-to-end local demo: build the binaries, start the local stack (vessel,
# one sandbox per agent, egress, scripted model) in the background, ask the
# example agent one question, print the answer, stop the stack.
#
#   deploy/local-demo.sh ["question"]
#
# Env: VESSEL_BIN_DIR (prebuilt binaries, else they are built into .cache/bin),
# VESSEL_DEMO_LISTEN (default 127.0.0.1:8700), VESSEL_DEMO_AGENT (default: the
# first agent), VESSEL_UPSTREAM_MODEL_URL + VESSEL_MODEL_KEY to use a real
# model instead of the scripted one.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
question=${1:-"Which birds in the guide hunt fish?"}
listen=${VESSEL_DEMO_LISTEN:-127.0.0.1:8700}
bin=${VESSEL_BIN_DIR:-}
if [[ -z $bin ]]; then
  bin=$root/.cache/bin
  echo "building astralvessel, vessel, scripted-model, sandboxd and egress into $bin" \
    "(the first build downloads and compiles the dependencies: a few minutes)" >&2
  mkdir -p "$bin"
  ldflags="-X main.version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)"
  ldflags+=" -X main.commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)"
  go build -ldflags "$ldflags" -o "$bin/" ./deployer/cmd/astralvessel ./vessel/cmd/vessel ./vessel/cmd/scripted-model \
    ./sandboxd/cmd/sandboxd ./egress/cmd/egress
fi

state=$(mktemp -d "${TMPDIR:-/tmp}/astralvessel-demo.XXXXXX")
"$bin/astralvessel" up --bin "$bin" --state "$state" --listen "$listen" deploy/deployment.toml \
  >"$state/up.out" 2>"$state/up.err" &
up=$!

stop() {
  if kill -0 "$up" 2>/dev/null; then
    kill -INT "$up" 2>/dev/null || true
    wait "$up" 2>/dev/null || true
  fi
  rm -rf "$state"
}
trap stop EXIT

# Wait for the stack to be ready (it writes stack.json once every agent is).
for _ in $(seq 1 600); do
  [[ -f $state/stack.json ]] && break
  if ! kill -0 "$up" 2>/dev/null; then
    echo "astralvessel up failed:" >&2
    cat "$state/up.err" >&2
    exit 1
  fi
  sleep 0.2
done
if [[ ! -f $state/stack.json ]]; then
  echo "astralvessel up did not get ready in time:" >&2
  cat "$state/up.err" >&2
  exit 1
fi
# The stack's own hints (its temporary state folder, Ctrl-C) do not outlive
# this script; the lines after the answer say how to run a stack by hand.
grep -v -e '^  try:' -e '^  app key:' -e '^  logs:' -e '^Ctrl-C' "$state/up.out" >&2 || true
if grep -q '^  model: *scripted' "$state/up.out"; then
  echo "  (the bundled scripted model answers from a fixed script; set VESSEL_UPSTREAM_MODEL_URL" \
    "and VESSEL_MODEL_KEY for a real OpenAI-compatible model, see README.md)" >&2
fi

args=(--state "$state")
[[ -n ${VESSEL_DEMO_AGENT:-} ]] && args+=(--agent "$VESSEL_DEMO_AGENT")
echo "> $question" >&2
rc=0
"$bin/astralvessel" ask "${args[@]}" "$question" || rc=$?
stop
trap - EXIT

# q quotes a word for the shell, only when it needs it.
q() {
  if [[ $1 =~ ^[A-Za-z0-9_./:@%+=,-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
listen_arg=""
[[ $listen != 127.0.0.1:8700 ]] && listen_arg=" --listen $(q "$listen")"
agent_arg=""
[[ -n ${VESSEL_DEMO_AGENT:-} ]] && agent_arg=" --agent $(q "$VESSEL_DEMO_AGENT")"
cat >&2 <<EOF

The demo's stack has stopped. To run one yourself (as root), from $(q "$root"):
  $(q "$bin/astralvessel") up$listen_arg      # starts the stack and keeps it running; Ctrl-C stops it
then, in another terminal:
  $(q "$bin/astralvessel") ask$agent_arg $(q "$question")
EOF
exit "$rc"
