#!/usr/bin/env bash
# The example deployment for real on the cluster of cluster.sh (called by
# e2e.sh once the cluster is up): deploy/deployment.toml with the
# generated manifests and the project's own images, the scripted model as
# the model provider, then the isolation probes from the running pods and
# the conformance suite from a client pod, on every binding the cards
# declare. Prints PASS/FAIL lines and exits non-zero when anything failed.
#
#   deploy/k8s/example.sh WORKDIR
#
# Images: <project>-*:local from deploy/images.sh --project avk8s (built by
# e2e.sh), imported into the cluster's containerd. The test copy of the
# deployment differs from the example only where the Compose e2e's does:
# its project name, the scripted model as the upstream (plain HTTP, so
# allow_http_upstream), a second model route for one agent, a second app
# granted one agent (the 403 check), and public_url, the vessel Service's
# name (the cards' address).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
C=deploy/k8s/cluster.sh
WORK=$1
PROJECT=avk8s
NS=avk8s
SB=$NS-sandboxes
MODEL_NS=avk8s-model
CLIENT_NS=avk8s-client
DOMAIN=cluster.local
K8S_VERSION=${K8S_VERSION:-v1.34.4}
KUBELET_ROOT=$ROOT/.cache/k8s/run/kubelet/root
IMAGES_BIN=$ROOT/.cache/images/bin
CLIENT_IMAGE=docker.io/avk8s/client:local
start=$SECONDS
failed=0
kc() { $C kubectl "$@"; }
step() { printf '\n== example [%ds] %s\n' "$((SECONDS - start))" "$*"; }
rand() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

step "images into the cluster's containerd"
for svc in vessel sandboxd egress scripted-model searxng; do
  docker image inspect "$PROJECT-$svc:local" >/dev/null 2>&1 ||
    { echo "example: image $PROJECT-$svc:local missing: deploy/images.sh --project $PROJECT" >&2; exit 1; }
done
ctx=$(mktemp -d)
cp "$IMAGES_BIN/conformance" "$ctx/conformance"
cp deploy/probes/inside.py "$ctx/inside.py"
# The client: where an application sits. The sandbox image, for its
# python3 (the probes), plus the conformance binary.
printf 'FROM %s\nCOPY conformance /e2e/conformance\nCOPY inside.py /probes/inside.py\nUSER 61010:61010\nENTRYPOINT ["sleep"]\n' \
  "$PROJECT-sandboxd:local" >"$ctx/Dockerfile"
docker build -q -t "$CLIENT_IMAGE" "$ctx" >/dev/null
rm -rf "$ctx"
$C import "$PROJECT-vessel:local" "$PROJECT-sandboxd:local" "$PROJECT-egress:local" \
  "$PROJECT-scripted-model:local" "$PROJECT-searxng:local" "$CLIENT_IMAGE"
deploy/k8s/install-seccomp.sh deploy/seccomp/sandbox.json "$KUBELET_ROOT" >/dev/null

step "the scripted model (namespace $MODEL_NS)"
kc create namespace "$MODEL_NS" >/dev/null
kc -n "$MODEL_NS" create configmap script --from-file=e2e-script.json=conformance/testdata/local-script.json >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: scripted-model, namespace: $MODEL_NS, labels: {app: scripted-model}}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 61004, runAsGroup: 61004, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: model
    image: $PROJECT-scripted-model:local
    imagePullPolicy: Never
    args: ["--listen", "0.0.0.0:8080", "--script", "/script/e2e-script.json"]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
    resources: {limits: {memory: 256Mi}}
    volumeMounts: [{name: script, mountPath: /script, readOnly: true}]
  volumes: [{name: script, configMap: {name: script}}]
---
apiVersion: v1
kind: Service
metadata: {name: scripted-model, namespace: $MODEL_NS}
spec:
  selector: {app: scripted-model}
  ports: [{port: 8080, targetPort: 8080}]
EOF
kc -n "$MODEL_NS" wait --for=condition=Ready pod/scripted-model --timeout=90s >/dev/null
MODEL_IP=$(kc -n "$MODEL_NS" get pod scripted-model -o jsonpath='{.status.podIP}')

step "generate (test copy in $WORK/dep)"
dep=$WORK/dep
mkdir -p "$dep"
cp -a deploy/deployment.toml deploy/seccomp "$dep/"
cp -a examples "$WORK/examples"
app_key=e2e-$(rand) narrow_key=e2e-$(rand)
{
  echo "VESSEL_UPSTREAM_MODEL_URL=http://scripted-model.$MODEL_NS.svc.$DOMAIN:8080/v1"
  echo "VESSEL_MODEL_KEY=e2e-model-$(rand)"
  echo "VESSEL_APP_KEY=$app_key"
  echo "VESSEL_APP_KEY_SHA256=$(sha "$app_key")"
  echo "E2E_NARROW_APP_KEY_SHA256=$(sha "$narrow_key")"
} >"$dep/.env"
chmod 600 "$dep/.env"
t=$dep/deployment.toml
sed -i -E "s/^(project *= *).*/\1\"$PROJECT\"/" "$t"
sed -i -E "s|^(port *= *8700)$|\1\npublic_url = \"http://vessel.$NS.svc.$DOMAIN:8700\"|" "$t"
# The model provider is a pod: the egress's policy opens it as an
# operator opens a provider on a private network ([egress] allow_cidrs).
sed -i -E "s|^(upstream_url *=.*)$|\1\nallow_http_upstream = true\nallow_cidrs = [\"$MODEL_IP/32\"]|" "$t"
narrow_agent=field-guide-reader
printf '%s\n' "" "[[apps]]" 'id = "e2e-narrow"' 'key_sha256 = "env:E2E_NARROW_APP_KEY_SHA256"' "agents = [\"$narrow_agent\"]" >>"$t"
# A second model route, Azure classic in shape (api-version query, key in
# an api-key header), served by the scripted model as well: the narrow
# agent's turns take it, as in the Compose e2e (docs/models.md).
sed -i -E '0,/^id = "field-guide-reader"$/s//&\nmodel_route = "classic"/' "$t"
printf '%s\n' "" "[models.classic]" "url = \"http://scripted-model.$MODEL_NS.svc.$DOMAIN:8080/v1?api-version=2024-10-21\"" \
  'key = "env:E2E_CLASSIC_MODEL_KEY"' 'auth = "api-key"' 'allow_http = true' >>"$t"
echo "E2E_CLASSIC_MODEL_KEY=e2e-classic-$(rand)" >>"$dep/.env"
grep -q "^public_url = " "$t" && grep -q '^allow_cidrs = ' "$t" && grep -q '^model_route = "classic"$' "$t" ||
  { echo "example: could not edit the test deployment.toml" >&2; exit 1; }
"$WORK/astralvessel" deploy "$t" --target kubernetes --source "$ROOT" --out "$dep/out" --env-file "$dep/.env" \
  --namespace "$NS" --pod-cidr 10.215.0.0/24 --service-cidr 10.214.0.0/24 --node-cidr 10.213.0.0/24 \
  --pull-policy Never >/dev/null

step "apply and wait for the rollout"
# The vessel on SQLite claims a volume (vessel-data). A real cluster's
# default StorageClass provisions one; this one has no provisioner, so a
# node-folder volume is offered for the claim to bind. The vessel (uid
# 61001) must own it: a hostPath volume takes no fsGroup.
pv=$ROOT/.cache/k8s/run/pv/vessel-data
rm -rf "$pv"
install -d -m 0700 -o 61001 -g 61001 "$pv"
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $NS-vessel-data}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  claimRef: {namespace: $NS, name: vessel-data}
  hostPath: {path: "$pv", type: Directory}
EOF
kc apply -f "$dep/out/kubernetes.generated.yaml" -f "$dep/out/kubernetes.secrets.generated.yaml" >/dev/null
agents=()
for d in $(kc -n "$SB" get deploy -o name); do agents+=("${d#deployment.apps/sandbox-}"); done
rollout_ok=1
workloads=()
for a in "${agents[@]}"; do workloads+=("$SB/sandbox-$a"); done
for d in "${workloads[@]}" "$NS/egress" "$NS/search" "$NS/vessel"; do
  if ! kc -n "${d%%/*}" rollout status "deploy/${d#*/}" --timeout=180s >/dev/null; then
    echo "FAIL deployment $d not rolled out"
    rollout_ok=0
  fi
done
if [ "$rollout_ok" = 0 ]; then
  kc get pods -A -o wide || true
  for ns in "$NS" "$SB"; do
    for p in $(kc -n "$ns" get pods -o name); do
      echo "--- $ns $p"; kc -n "$ns" describe "$p" | tail -n 15 || true; kc -n "$ns" logs "$p" --tail 30 || true
    done
  done
  exit 1
fi
echo "rolled out: vessel, egress, search, sandboxes ${agents[*]}"

kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $CLIENT_NS}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: $CLIENT_NS}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 61010, runAsGroup: 61010, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: client
    image: $CLIENT_IMAGE
    imagePullPolicy: Never
    args: ["7200"]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
    resources: {limits: {memory: 256Mi}}
EOF
kc -n "$CLIENT_NS" wait --for=condition=Ready pod/client --timeout=90s >/dev/null

# checks NS POD CONTAINER JSON: inside.py in that container, PASS/FAIL lines.
inside=$(cat deploy/probes/inside.py)
checks() {
  kc -n "$1" exec -i "$2" -c "$3" -- python3 -c "$inside" <<<"$4" | python3 -c '
import json, sys
bad = 0
for line in sys.stdin:
    r = json.loads(line)
    bad += not r["ok"]
    print(("PASS " if r["ok"] else "FAIL ") + r["name"] + " (" + r["detail"] + ")")
sys.exit(1 if bad else 0)'
}
url=http://vessel.$NS.svc.$DOMAIN:8700
health='{'
for a in "${agents[@]}"; do health+="\"$a\": true, "; done
health="${health%, }}"

step "wait for health (through the cluster DNS, from the client)"
checks "$CLIENT_NS" client client "[{\"name\": \"vessel healthy with every agent ready, by its Service name\", \"kind\": \"wait_health\",
  \"wait_s\": 150, \"url\": \"$url/health\", \"expect\": $health}]" || { failed=1; kc -n "$NS" logs deploy/vessel --tail 40 || true; }

step "isolation probes, from the running pods"
podip() { kc -n "$1" get pod -l "$2" -o jsonpath='{.items[0].status.podIP}'; }
podname() { kc -n "$1" get pod -l "$2" -o jsonpath='{.items[0].metadata.name}'; }
comp=app.kubernetes.io/component
V=$(podip "$NS" "$comp=vessel") E=$(podip "$NS" "$comp=egress") S=$(podip "$NS" "$comp=search")
declare -A sbip sbpod
for a in "${agents[@]}"; do
  sbip[$a]=$(podip "$SB" "astralvessel/agent=$a")
  sbpod[$a]=$(podname "$SB" "astralvessel/agent=$a")
done
blocked() { printf '{"name": "%s", "kind": "tcp_blocked", "host": "%s", "port": %s},' "$1" "$2" "$3"; }
opened() { printf '{"name": "%s", "kind": "tcp_open", "host": "%s", "port": %s},' "$1" "$2" "$3"; }
for a in "${agents[@]}"; do
  j="[{\"name\": \"$a: capabilities exactly CHOWN DAC_OVERRIDE KILL SETGID SETUID\", \"kind\": \"caps\",
       \"expect\": [\"CHOWN\", \"DAC_OVERRIDE\", \"KILL\", \"SETGID\", \"SETUID\"]},
      {\"name\": \"$a: no-new-privileges in force\", \"kind\": \"status\", \"field\": \"NoNewPrivs\", \"expect\": \"1\"},
      {\"name\": \"$a: seccomp filter in force\", \"kind\": \"status\", \"field\": \"Seccomp\", \"expect\": \"2\"},
      {\"name\": \"$a: root filesystem read-only\", \"kind\": \"rootfs_ro\"},
      {\"name\": \"$a: the uid registry /run/astralvessel/uids is root's, mode 0700\", \"kind\": \"stat\",
       \"path\": \"/run/astralvessel/uids\", \"uid\": 0, \"mode\": \"0700\"},
      {\"name\": \"$a: its parent (an emptyDir) is root's, and nobody else may rename the registry (not writable by others, or sticky)\", \"kind\": \"stat\",
       \"path\": \"/run/astralvessel\", \"uid\": 0, \"no_bits\": \"022\", \"sticky_ok\": true},"
  j+=$(blocked "$a: cannot reach the vessel API" "$V" 8700)
  j+=$(blocked "$a: cannot reach the egress model port" "$E" 8080)
  j+=$(blocked "$a: cannot reach the egress proxy" "$E" 3128)
  j+=$(blocked "$a: cannot reach search" "$S" 8080)
  j+=$(blocked "$a: cannot reach the model provider" "$MODEL_IP" 8080)
  j+=$(blocked "$a: cannot reach the cluster DNS" 10.214.0.10 53)
  j+=$(blocked "$a: cannot reach the kubernetes Service" 10.214.0.1 443)
  j+=$(blocked "$a: cannot reach the node (API server)" 10.213.0.1 6443)
  for o in "${agents[@]}"; do
    [ "$o" = "$a" ] || j+=$(blocked "$a: cannot reach sandbox $o" "${sbip[$o]}" 8600)
  done
  checks "$SB" "${sbpod[$a]}" sandbox "${j%,}]" || failed=1
done
j="[{\"name\": \"client: vessel /health answers on its Service\", \"kind\": \"http\", \"url\": \"$url/health\", \"expect\": [200]},"
j+=$(opened "client: reaches the vessel's gRPC port (control)" "vessel.$NS.svc.$DOMAIN" 8701)
j+=$(blocked "client: cannot reach the egress model port" "$E" 8080)
j+=$(blocked "client: cannot reach the egress proxy" "$E" 3128)
j+=$(blocked "client: cannot reach search" "$S" 8080)
for a in "${agents[@]}"; do
  j+=$(blocked "client: cannot reach sandbox $a" "${sbip[$a]}" 8600)
  j+=$(blocked "client: cannot reach sandbox $a's HTTP port" "${sbip[$a]}" 8601)
done
checks "$CLIENT_NS" client client "${j%,}]" || failed=1

step "the operator's path: kubectl port-forward and astralvessel ask"
# As docs/kubernetes.md says it, on the loopback of the cluster's network
# namespace: a question to the field guide, answered from its species tool.
$C kubectl -n "$NS" port-forward svc/vessel 18700:8700 >"$WORK/port-forward.log" 2>&1 &
pf=$! # kubectl itself: cluster.sh's kubectl execs it
ask_out=""
for _ in $(seq 50); do
  if ask_out=$(nsenter --net=/run/netns/avk8s "$WORK/astralvessel" ask --url http://127.0.0.1:18700 --key "$app_key" \
    --user e2e-operator --agent field-guide --state "$WORK/ask" --new "Which species does the guide list?" 2>&1); then
    break
  fi
  sleep 0.2
done
kill "$pf" 2>/dev/null || true
wait "$pf" 2>/dev/null || true
if grep -qi "frostwing" <<<"$ask_out"; then
  echo "PASS astralvessel ask through kubectl port-forward: $(grep -c . <<<"$ask_out") lines, the species listed"
else
  echo "FAIL astralvessel ask through kubectl port-forward: ${ask_out:0:600}"
  failed=1
fi

step "conformance, every binding the cards declare"
for a in "${agents[@]}"; do
  if [ "$a" = "$narrow_agent" ]; then
    other=$(printf '%s\n' "${agents[@]}" | grep -vx "$a" | head -n1)
    kc -n "$CLIENT_NS" exec client -- /e2e/conformance --other-agent "$other" "$url" "$narrow_key" "$a" || failed=1
  else
    kc -n "$CLIENT_NS" exec client -- /e2e/conformance "$url" "$app_key" "$a" || failed=1
  fi
done

step "metrics and audit after the turns"
# The vessel's metrics Service, as an operator's Prometheus scrapes it
# (any pod may reach the metrics port), has counted the turns; each
# sandbox's audit stream (its pod's own records volume) holds Process
# Activity events of the calls.
checks "$CLIENT_NS" client client "[{\"name\": \"client: vessel-metrics serves the turns counted\", \"kind\": \"http\",
  \"url\": \"http://vessel-metrics.$NS.svc.$DOMAIN:9464/metrics\", \"expect\": [200],
  \"body_contains\": \"vessel_turns_finished_total{\"}]" || failed=1
n=$(kc -n "$SB" exec "${sbpod[field-guide]}" -c sandbox -- python3 -c '
import json
print(sum(1 for l in open("/records/audit.jsonl") if json.loads(l).get("class_uid") == 1007))' 2>&1) || true
if [[ $n =~ ^[0-9]+$ && $n -gt 0 ]]; then
  echo "PASS field-guide: $n Process Activity events in the sandbox's audit stream"
else
  echo "FAIL field-guide: no Process Activity event in the sandbox's audit stream: ${n:0:300}"
  failed=1
fi

if [ "$failed" != 0 ]; then
  for w in "$NS/vessel" "$NS/egress"; do echo "--- logs $w"; kc -n "${w%/*}" logs "deploy/${w#*/}" --tail 40 || true; done
  echo "example: FAILED after $((SECONDS - start))s"
  exit 1
fi
echo "example: passed in $((SECONDS - start))s"
