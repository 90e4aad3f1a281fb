#!/usr/bin/env bash
# make e2e-k8s: on the single-node cluster of cluster.sh (built by build.sh,
# cached), with manifests that `astralvessel deploy --target kubernetes`
# writes for deploy/deployment.toml:
#  1. the API server's own PodSecurity admission takes every generated
#     object at the level its namespace claims (server-side dry run);
#  2. the generated NetworkPolicies, around probe pods that carry the
#     workloads' labels, allow what the Compose networks allow and refuse
#     the rest, with kube-router enforcing them;
#  3. the example deployed for real (example.sh): the project's images, the
#     generated manifests, CoreDNS as the cluster DNS, the scripted model as
#     the provider; isolation probes from the running pods and the
#     conformance suite on every binding the cards declare;
#  4. with the engine stopped, the refused probes of 2 connect: the probes
#     test the policies, not something else.
# Env: E2E_SKIP_IMAGES=1 reuses the avk8s-*:local images of an earlier run.
# The cluster is taken down at the end, pass or fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
C=deploy/k8s/cluster.sh
K8S_VERSION=${K8S_VERSION:-v1.34.4}
BIN=${K8S_CACHE:-$ROOT/.cache/k8s}/$K8S_VERSION/bin
WORK=$(mktemp -d)
NS=avprobe
SB=$NS-sandboxes
OUTSIDE_IP=192.0.2.10 # an "outside" address: not in the pod, service, node or metadata ranges

cleanup() {
  [ -f "$WORK/outside.pid" ] && kill "$(cat "$WORK/outside.pid")" 2>/dev/null || true
  [ "${KEEP_CLUSTER:-}" = 1 ] || $C down || true
  rm -rf "$WORK"
}
trap cleanup EXIT

deploy/k8s/build.sh
if [ -z "${E2E_SKIP_IMAGES:-}" ]; then
  deploy/images.sh --project avk8s vessel sandboxd egress scripted-model searxng
fi
mkdir -p .cache/images/bin
(cd conformance && CGO_ENABLED=0 go build -ldflags '-s -w' -o "$ROOT/.cache/images/bin/conformance" .)
$C up
kc() { $C kubectl "$@"; }

echo "== generate"
(cd deployer && go build -o "$WORK/astralvessel" ./cmd/astralvessel)
VESSEL_UPSTREAM_MODEL_URL=https://models.example.org/v1 \
VESSEL_APP_KEY_SHA256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 \
VESSEL_MODEL_KEY=e2e-k8s-model-key-not-real \
  "$WORK/astralvessel" deploy deploy/deployment.toml --target kubernetes --out "$WORK/out" --env-file /dev/null \
  --namespace "$NS" --pod-cidr 10.215.0.0/24 --service-cidr 10.214.0.0/24 --node-cidr 10.213.0.0/24 \
  --pull-policy Never >/dev/null
man=$WORK/out/kubernetes.generated.yaml
pick() { awk -v RS='---\n' -v ORS='' -v want="$1" '$0 ~ ("\nkind: (" want ")\n") {print "---\n" $0}' "$man"; }

echo "== PodSecurity: server-side dry run of every generated object"
pick Namespace | kc apply -f - >/dev/null
kc apply --dry-run=server -f "$man" -f "$WORK/out/kubernetes.secrets.generated.yaml" >"$WORK/dry.log" 2>&1 || {
  cat "$WORK/dry.log"; echo "FAIL: the API server refused generated objects"; exit 1; }
if grep -i 'warning\|violate' "$WORK/dry.log"; then echo "FAIL: PodSecurity warnings"; exit 1; fi
echo "ok: $(grep -c . "$WORK/dry.log") objects admitted"
# PodSecurity enforces on pods and warns on workloads (the namespaces
# claim the same level for both): a sandbox Deployment moved into the
# services' namespace draws the warning, so the levels bite.
pick Deployment | awk -v RS='---\n' -v ORS='' '/\n  name: sandbox-field-guide\n/ {print "---\n" $0}' |
  sed "s/namespace: $SB/namespace: $NS/" | kc apply --dry-run=server -f - >"$WORK/sb.log" 2>&1 || true
if ! grep -q 'would violate PodSecurity "restricted' "$WORK/sb.log"; then
  cat "$WORK/sb.log"; echo "FAIL: a sandbox Deployment passed restricted"; exit 1
fi
echo "ok: a sandbox pod violates restricted"

echo "== NetworkPolicy probes"
pick NetworkPolicy | kc apply -f - >/dev/null
probe_pod() { # namespace name component agent ports...
  local ns=$1 name=$2 comp=$3 agent=$4; shift 4
  local args="" p
  for p in "$@"; do args+=", \"$p\""; done
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
  labels: {app.kubernetes.io/instance: astralvessel, app.kubernetes.io/component: $comp, astralvessel/agent: "$agent"}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 61010, runAsGroup: 61010, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: probe
    image: avk8s/tools:local
    imagePullPolicy: Never
    command: ["/probe", "serve"$args]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
EOF
}
kc create namespace avprobe-other >/dev/null
probe_pod "$NS" vessel vessel "" 8700 8701 9464
probe_pod "$NS" egress egress "" 8080 3128
probe_pod "$NS" search search "" 8080
probe_pod "$NS" intruder intruder "" 8080
probe_pod "$SB" sb-guide sandbox field-guide 8600 8601
probe_pod "$SB" sb-reader sandbox field-guide-reader 8600 8601
probe_pod avprobe-other outsider outsider "" 8080
for p in "$NS/vessel" "$NS/egress" "$NS/search" "$NS/intruder" "$SB/sb-guide" "$SB/sb-reader" avprobe-other/outsider; do
  kc -n "${p%/*}" wait --for=condition=Ready "pod/${p#*/}" --timeout=90s >/dev/null
done
podip() { kc -n "$1" get pod "$2" -o jsonpath='{.status.podIP}'; }
V=$(podip "$NS" vessel); E=$(podip "$NS" egress); S=$(podip "$NS" search)
G=$(podip "$SB" sb-guide); R=$(podip "$SB" sb-reader); O=$(podip avprobe-other outsider)
# An address outside the cluster's ranges, served from the node.
nsenter --net=/run/netns/avk8s ip addr add "$OUTSIDE_IP/32" dev avnode
nsenter --net=/run/netns/avk8s "$BIN/avk8s-tools" serve 8081 & echo $! >"$WORK/outside.pid"

# from-namespace from-pod target expectation(allow|refuse) what
PROBES=(
  "$NS vessel $G:8600 allow vessel reaches its sandbox"
  "$NS vessel $R:8600 allow vessel reaches the other sandbox"
  "$NS vessel $E:8080 allow vessel reaches the egress's model port"
  "$NS vessel $E:3128 allow vessel reaches the egress's proxy"
  "$NS vessel $S:8080 allow vessel reaches search"
  "$NS vessel $O:8080 refuse vessel cannot reach other pods"
  "$NS vessel $OUTSIDE_IP:8081 refuse vessel has no way out"
  "$NS search $E:3128 allow search reaches the egress's proxy"
  "$NS search $G:8600 refuse search cannot reach a sandbox"
  "$NS search $OUTSIDE_IP:8081 refuse search has no way out but the proxy"
  "$NS egress $OUTSIDE_IP:8081 allow egress reaches the outside"
  "$NS egress $O:8080 refuse egress cannot reach the pod range"
  "$NS egress $G:8600 refuse egress cannot reach a sandbox"
  "$NS egress 10.213.0.1:6443 refuse egress cannot reach the node (API server)"
  "$NS egress 10.214.0.1:443 refuse egress cannot reach the kubernetes Service"
  "$NS intruder $V:8700 allow any pod reaches the vessel's API"
  "$NS intruder 10.214.0.1:443 allow a pod no policy selects reaches the kubernetes Service (control)"
  "$NS intruder $G:8600 refuse another pod cannot reach a sandbox"
  "$NS intruder $E:3128 refuse another pod cannot reach the egress's proxy"
  "avprobe-other outsider $G:8600 refuse a pod of another namespace cannot reach a sandbox"
  "$SB sb-guide $V:8700 refuse a sandbox cannot reach the vessel"
  "$SB sb-guide $E:3128 refuse a sandbox cannot reach the egress"
  "$SB sb-guide $R:8600 refuse a sandbox cannot reach another sandbox"
  "$SB sb-guide $O:8080 refuse a sandbox cannot reach other pods"
  "$SB sb-guide 10.213.0.1:6443 refuse a sandbox cannot reach the node (API server)"
  "$SB sb-guide 10.214.0.1:443 refuse a sandbox cannot reach the kubernetes Service"
  "$SB sb-guide $OUTSIDE_IP:8081 refuse a sandbox has no way out"
)

# dial says allow or refuse, and stops the run when the probe itself did
# not run (an exec failure is neither).
dial() {
  local out
  # The probe's own line; kubectl may add stream warnings on stderr.
  out=$(kc -n "$1" exec "$2" -- /probe dial "$3" 2>/dev/null || true)
  if grep -q '^connected' <<<"$out"; then echo allow
  elif grep -q '^refused:' <<<"$out"; then echo refuse
  else echo "FAIL: probe from $1/$2 to $3 did not run: $out" >&2; exit 1
  fi
}

# run_probes MODE: MODE policy checks every expectation; MODE open
# counts the refusals that connect once the engine is gone.
run_probes() {
  local fails=0 opened=0 refusals=0 line ns pod target want what got
  for line in "${PROBES[@]}"; do
    read -r ns pod target want what <<<"$line"
    got=$(dial "$ns" "$pod" "$target") || exit 1
    if [ "$1" = policy ]; then
      if [ "$got" = "$want" ]; then echo "ok   $what ($got)"; else echo "FAIL $what: $got, want $want"; fails=$((fails + 1)); fi
    elif [ "$want" = refuse ]; then
      refusals=$((refusals + 1))
      if [ "$got" = allow ]; then opened=$((opened + 1)); else echo "     still refused without the engine: $what"; fi
    fi
  done
  if [ "$1" = policy ]; then return "$fails"; fi
  echo "without the engine $opened of $refusals refused probes connect"
  [ "$opened" -eq "$refusals" ]
}

# kube-router enforces within seconds of seeing the policies.
for _ in $(seq 30); do [ "$(dial "$SB" sb-guide "$E:3128")" = allow ] || break; sleep 1; done
run_probes policy || { echo "FAIL: NetworkPolicy probes"; exit 1; }
deploy/k8s/example.sh "$WORK"
echo "== the same probes with the policy engine stopped"
$C engine off
sleep 2
run_probes open || { echo "FAIL: some refusals do not come from the policies"; exit 1; }
echo "PASS e2e-k8s in ${SECONDS}s"
