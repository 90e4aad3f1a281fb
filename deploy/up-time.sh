#!/bin/sh
# up-time.sh: how long `astralvessel up` takes to be ready, from the
# command's start to its "is up" line (every agent ready), with prebuilt
# binaries and the shipped deployment's scripted model. Runs it RUNS times
# (default 10) in a fresh state folder each time and prints each figure
# and the median: the figure docs/performance.md states.
#
#   deploy/up-time.sh [RUNS]        (after `make build`; `make up-time` does both)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-10}
bin=${VESSEL_BIN_DIR:-$PWD/.cache/bin}
for b in astralvessel vessel sandboxd egress scripted-model; do
  [ -x "$bin/$b" ] || { echo "up-time: $bin/$b missing: run make build" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
i=0
while [ "$i" -lt "$runs" ]; do
  i=$((i + 1))
  state="$work/state-$i"
  listen="127.0.0.1:$(port)"
  fifo="$work/out-$i"
  mkfifo "$fifo"
  start=$(date +%s%N)
  "$bin/astralvessel" up --bin "$bin" --state "$state" --listen "$listen" --scripted >"$fifo" 2>"$work/err-$i" &
  pid=$!
  # Blocks on the pipe until up prints its first line (no polling).
  exec 3<"$fifo"
  line=
  while IFS= read -r line <&3; do
    case $line in *"is up at"*) break ;; esac
  done
  end=$(date +%s%N)
  case $line in *"is up at"*) ;; *) echo "up-time: astralvessel up exited:" >&2; cat "$work/err-$i" >&2; exit 1 ;; esac
  kill -INT "$pid"
  cat <&3 >/dev/null; exec 3<&-
  wait "$pid" || true
  ms=$(( (end - start) / 1000000 ))
  inside=$(echo "$line" | sed -n 's/.*(ready in \([0-9]*\) ms).*/\1/p')
  echo "run $i: $ms ms to the \"is up\" line ($inside ms inside localstack.Start)"
  echo "$ms" >>"$work/all"
done
median=$(sort -n "$work/all" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo "median of $runs: $median ms ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
