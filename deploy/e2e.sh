#!/usr/bin/env bash
# `make e2e`: the example deployment for real, in Docker, with no registry.
#
#   1. build every image (deploy/images.sh) and the conformance binary
#   2. copy deploy/ and examples/ to a temporary folder, write a test .env, `astralvessel deploy`
#   3. start it with compose.generated.yml alone; the test stand-ins (the scripted model as the
#      upstream on the generated `outside` network, an OTLP sink on `egress` and every `tools-<agent>`)
#      are containers of their own (docker run, outside the Compose project) that join the project's
#      networks between `up --no-start` and `up -d`
#   4. wait for /health, run the isolation probes and the conformance checks for every agent (the
#      field guides and the notebook example, whose stdio MCP server a conformance turn calls);
#      a real Prometheus (Debian's package) scrapes every service's metrics listener on the
#      generated internal metrics network, through the generated metrics-targets.json, and the main
#      series must have moved
#   4a. every healthcheck healthy; the generated usage log and three audit streams (records/),
#      joined by a task id
#   4c. operator, as generated: turns, cancel, usage, audit and metrics as docs/operations.md says,
#      from the deploy folder with only the generated files (operator.url, .generated/operator.token,
#      records/ read by a user of the operator group)
#   4b. traces: the [telemetry] table points every service at the OTLP sink stand-in (otlp-sink);
#      one conformance turn's spans from vessel, sandboxd and egress share a trace id
#   5. fingerprints for real: edit an agent's vessel.toml without deploying (that agent is refused
#      with 503/-32004, the other keeps working), deploy + up -d (served again), edit prompt.md
#      (nothing needed)
#   6. tear down (down -v), printing the containers' logs first when anything failed
#
# Works with `docker compose` (v2) and Debian's docker-compose 1.29. Every probe targets only the
# project's own containers. Env: E2E_PROJECT (default astralvessel), E2E_KEEP=1 (leave it running),
# E2E_SKIP_IMAGES=1 (reuse built images), COMPOSE (override the compose command), E2E_GVISOR (1: the
# notebook agent runs in the gvisor tier, under Docker's runsc runtime, which must work (see
# deploy/gvisor-runtime.sh); 0: every agent confined; default: gvisor when the runtime works).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
project="${E2E_PROJECT:-astralvessel}"
bin="$root/.cache/images/bin"
start=$SECONDS
failed=0
step() { printf '\n== e2e [%ds] %s\n' "$((SECONDS - start))" "$*"; }
die() { printf 'e2e: %s\n' "$*" >&2; exit 1; }

docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"
command -v prometheus >/dev/null || die "prometheus is not installed (deploy/setup.sh installs Debian's package)"
if [[ -n ${COMPOSE:-} ]]; then
	read -r -a compose_cmd <<<"$COMPOSE"
elif docker compose version >/dev/null 2>&1; then
	compose_cmd=(docker compose)
elif command -v docker-compose >/dev/null; then
	compose_cmd=(docker-compose)
else
	die "neither 'docker compose' nor docker-compose is installed"
fi
# The test stand-ins: containers of their own, outside the Compose project (compose sees only
# compose.generated.yml). Each is locked down like a generated service: its own uid (the scripted
# model's is deployer/compose ScriptedModelUID; deployer/compose/e2e_standins_test.go reads both
# from here), read-only root, no capability, no new privileges, memory and pid limits.
model_name="$project-e2e-model" sink_name="$project-e2e-otlp-sink"
standins=("$model_name" "$sink_name")
model_uid=61004
sink_uid=61005
standin_opts=(--pull never --read-only --cap-drop ALL --security-opt no-new-privileges --memory 256m
	--restart unless-stopped --label "astralvessel.e2e-standin=$project")
if [[ -n $(docker ps -aq --filter "label=com.docker.compose.project=$project") && -z ${E2E_FORCE:-} ]]; then
	die "containers of project $project already exist; stop that deployment or set E2E_PROJECT (E2E_FORCE=1 replaces it)"
fi
for c in "${standins[@]}"; do
	if docker container inspect "$c" >/dev/null 2>&1; then
		[[ -n ${E2E_FORCE:-} ]] || die "container $c (a test stand-in of project $project) already exists; remove it or set E2E_FORCE=1"
		docker rm -f "$c" >/dev/null
	fi
done

work="$(mktemp -d /tmp/astralvessel-e2e.XXXXXX)"
dep="$work/deploy"
probe="$project-e2e-probe"
# Compose runs the generated file alone: metrics, the operator API and the records are its own, and
# the test stand-ins are no part of the project.
compose() { (cd "$dep" && "${compose_cmd[@]}" -p "$project" -f compose.generated.yml --env-file .env "$@"); }
prom_pid=""

cleanup() {
	local rc=$?
	if [[ $rc != 0 || $failed != 0 ]]; then
		step "FAILED; container logs follow"
		compose ps 2>/dev/null || true
		compose logs --no-color --tail 150 2>/dev/null || true
		for c in "${standins[@]}"; do
			echo "--- $c (test stand-in)"
			docker logs --tail 50 "$c" 2>&1 || true
		done
	fi
	if [[ -n ${E2E_KEEP:-} ]]; then
		echo "e2e: E2E_KEEP set; left running in $dep (project $project; test stand-ins ${standins[*]})"
		return
	fi
	[[ -n $prom_pid ]] && kill "$prom_pid" 2>/dev/null || true
	docker rm -f "$probe" >/dev/null 2>&1 || true
	# The stand-ins first: a network with a container attached cannot be removed.
	docker rm -f "${standins[@]}" >/dev/null 2>&1 || true
	[[ -f $dep/compose.generated.yml ]] && compose down -v --remove-orphans >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------
step "images"
mkdir -p "$bin"
if [[ -z ${E2E_SKIP_IMAGES:-} ]]; then
	"$here/images.sh" --project "$project"
fi
(cd "$root/conformance" && CGO_ENABLED=0 go build -ldflags '-s -w' -o "$bin/conformance" .)
(cd "$root/deployer" && CGO_ENABLED=0 go build -ldflags '-s -w' -o "$bin/otlp-sink" ./cmd/otlp-sink)
[[ -x $bin/astralvessel ]] || "$here/images.sh" --project "$project" deployer
# The gvisor tier (docs/sandbox.md): the notebook agent's sandbox under Docker's runsc runtime.
gvisor="${E2E_GVISOR:-auto}"
if [[ $gvisor != 0 ]]; then
	if "$here/gvisor-runtime.sh" --check-only "$project-sandboxd:local"; then
		gvisor=1
	elif [[ $gvisor == 1 ]]; then
		die "E2E_GVISOR=1 but Docker's runsc runtime does not work (deploy/gvisor-runtime.sh sets it up)"
	else
		echo "e2e: Docker has no working runsc runtime: every agent confined, the gvisor tier not exercised"
		gvisor=0
	fi
fi

# ---------------------------------------------------------------------------------------------
step "deploy (in $work)"
cp -a "$root/deploy" "$work/deploy"
cp -a "$root/examples" "$work/examples"
rm -rf "$dep/.generated" "$dep/compose.generated.yml" "$dep/.env"
cp "$root/conformance/testdata/local-script.json" "$dep/e2e-script.json"
chmod 644 "$dep/e2e-script.json"
[[ -f $dep/.env.example ]] || die "deploy/.env.example is missing"

# The test .env: the example's variables, with fresh keys and the scripted model as the upstream.
rand() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
declare -A keys=()
while IFS= read -r line || [[ -n $line ]]; do
	[[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
	name="${BASH_REMATCH[1]}" value="${BASH_REMATCH[2]}"
	case "$name" in
	*_SHA256) continue ;; # written after the key it digests
	*MODEL_KEY) value="e2e-model-$(rand)" ;;
	*UPSTREAM*URL*) value="http://$model_name:8080/v1" ;;
	*_KEY | *_TOKEN | *SECRET*) value="e2e-$(rand)" ;;
	esac
	keys[$name]="$value"
done <"$dep/.env.example"
while IFS= read -r line || [[ -n $line ]]; do
	[[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)_SHA256= ]] || continue
	base="${BASH_REMATCH[1]}"
	[[ -n ${keys[$base]:-} ]] && keys[${base}_SHA256]="$(printf '%s' "${keys[$base]}" | sha256sum | cut -d' ' -f1)"
done <"$dep/.env.example"
for k in "${!keys[@]}"; do printf '%s=%s\n' "$k" "${keys[$k]}"; done | sort >"$dep/.env"
chmod 600 "$dep/.env"
app_key_var="$(grep -o '^[A-Z_]*APP_KEY=' "$dep/.env" | head -n1 | tr -d =)"
[[ -n $app_key_var ]] || die ".env.example names no *APP_KEY variable"
app_key="${keys[$app_key_var]}"

# A second app granted only the last agent: the 403 (-32003) check for the other agent.
narrow_agent="$(awk '/^\[\[agents\]\]/ { a = 1 } a && /^id *=/ { gsub(/.*= *"|".*/, ""); last = $0; a = 0 } END { print last }' "$dep/deployment.toml")"
narrow_key="e2e-$(rand)"
printf '%s\n' "" "[[apps]]" 'id = "e2e-narrow"' 'key_sha256 = "env:E2E_NARROW_APP_KEY_SHA256"' "agents = [\"$narrow_agent\"]" >>"$dep/deployment.toml"
printf 'E2E_NARROW_APP_KEY=%s\nE2E_NARROW_APP_KEY_SHA256=%s\n' "$narrow_key" "$(printf '%s' "$narrow_key" | sha256sum | cut -d' ' -f1)" >>"$dep/.env"
# The notebook example with its stdio MCP server (examples/notes-mcp), built into the package as
# docs/mcp.md says; the app may call it, and a conformance turn (--mcp-text) calls the server. A Go
# server reserves more than 512 MiB of address space at start (RLIMIT_AS is the agent's memory), so 1GB.
(cd "$root/examples/notes-mcp" && CGO_ENABLED=0 go build -ldflags '-s -w' -o "$work/examples/notebook/bin/notes-mcp" .)
printf '%s\n' "" "[[agents]]" 'id = "notebook"' 'package = "../examples/notebook"' "" "[agents.sandbox]" \
	'scratch = "64MB"' 'memory = "1GB"' 'pids = 64' >>"$dep/deployment.toml"
# In the gvisor tier its conformance turn (the MCP server's tools) runs inside gVisor, and the copy
# also offers bash, so the isolation probes' calls (verify.py) run there as well.
if [[ $gvisor == 1 ]]; then
	printf '%s\n' 'runtime = "gvisor"' >>"$dep/deployment.toml"
	sed -i -E 's/^enabled = \["read", "list"\]$/enabled = ["read", "list", "bash"]/' "$work/examples/notebook/vessel.toml"
	grep -q '"bash"\]$' "$work/examples/notebook/vessel.toml" || die "could not offer bash to the notebook agent"
fi
sed -i -E 's/^(agents = \["field-guide", "field-guide-reader")\]/\1, "notebook"]/' "$dep/deployment.toml"
grep -q '"field-guide-reader", "notebook"\]' "$dep/deployment.toml" || die "could not grant the notebook agent to the example app"
# The scripted model (a stand-in on the outside network, reached by its container name through the
# engine's resolver on that network) speaks plain HTTP.
sed -i -E 's/^(upstream_url *=.*)$/\1\nallow_http_upstream = true/' "$dep/deployment.toml"
# A second model route, Azure classic in shape (api-version query, key in an api-key header), served by
# the scripted model as well: field-guide-reader's turns take it (docs/models.md); its key reaches the
# egress alone (verify.py).
sed -i -E '0,/^id = "field-guide-reader"$/s//&\nmodel_route = "classic"/' "$dep/deployment.toml"
grep -q '^model_route = "classic"$' "$dep/deployment.toml" || die "deployment.toml has no field-guide-reader agent for the second model route"
printf '%s\n' "" "[models.classic]" "url = \"http://$model_name:8080/v1?api-version=2024-10-21\"" \
	'key = "env:E2E_CLASSIC_MODEL_KEY"' 'auth = "api-key"' 'allow_http = true' >>"$dep/deployment.toml"
printf 'E2E_CLASSIC_MODEL_KEY=e2e-classic-%s\n' "$(rand)" >>"$dep/.env"
if [[ $project != astralvessel ]]; then
	# A second project on one host needs its own name and front network.
	sed -i -E "s/^(project *= *).*/\1\"$project\"/; s/^(front_subnet *= *).*/\1\"172.31.248.0\/24\"/; s/^(front_address *= *).*/\1\"172.31.248.10\"/" "$dep/deployment.toml"
	grep -q '^project *=' "$dep/deployment.toml" || die "set [vessel] project in deployment.toml to use E2E_PROJECT"
fi
# Traces: deploy turns [telemetry] into every service's OTEL_* variables. The sink stand-in (a static
# binary in the scripted model's image under a uid of its own; on the egress network and each tools
# network, where the services already are; the confined calls cannot open sockets) writes the spans
# to its stdout.
printf '%s\n' "" "[telemetry]" "otlp_endpoint = \"http://$sink_name:4318\"" >>"$dep/deployment.toml"
cp "$bin/otlp-sink" "$dep/otlp-sink"
deploy() { "$bin/astralvessel" deploy "$dep/deployment.toml" --source "$root" --env-file "$dep/.env"; }
deploy

# The metrics network, the operator API and the records are the generated file's (docs/operations.md,
# "Operating a generated deployment"): nothing to add. Another user reads the records as a member of
# the operator group below, so the temporary folder must be passable.
chmod 755 "$work"
metrics_agents=()
for a in $(compose config --services | sed -n 's/^sandbox-//p' | sort); do
	metrics_agents+=("$a")
done

# ---------------------------------------------------------------------------------------------
step "up (${compose_cmd[*]})"
# start_standins: the scripted model on the generated `outside` network (the one the egress reaches
# its upstream on, so no other container can reach it) and the OTLP sink on `egress` and every
# `tools-<agent>` network (docs/operations.md, "In Compose"). The host never resolves their names:
# addresses it prints come from docker inspect.
start_standins() {
	local net nets
	docker run -d --name "$model_name" --user "$model_uid:$model_uid" "${standin_opts[@]}" --pids-limit 128 \
		--network "${project}_outside" -v "$dep/e2e-script.json:/script/e2e-script.json:ro" \
		"$project-scripted-model:local" --listen 0.0.0.0:8080 --script /script/e2e-script.json >/dev/null
	docker create --name "$sink_name" --user "$sink_uid:$sink_uid" "${standin_opts[@]}" --pids-limit 64 \
		--network "${project}_egress" -v "$dep/otlp-sink:/otlp/otlp-sink:ro" --entrypoint /otlp/otlp-sink \
		"$project-scripted-model:local" --grpc-listen "" --http-listen 0.0.0.0:4318 --out - >/dev/null
	nets="$(docker network ls --filter "label=com.docker.compose.project=$project" --format '{{.Name}}' | grep "^${project}_tools-" | sort)"
	[[ -n $nets ]] || die "compose created no ${project}_tools-* network"
	for net in $nets; do docker network connect "$net" "$sink_name"; done
	docker start "$sink_name" >/dev/null
	for c in "${standins[@]}"; do
		echo "stand-in $c: $(docker inspect -f '{{range $n, $e := .NetworkSettings.Networks}}{{$n}}={{$e.IPAddress}} {{end}}' "$c")"
	done
}
# Docker refuses a front subnet that overlaps another network's pool ("Pool overlaps"): another
# deployment's, or one the engine just gave this deployment's other networks from its default
# pools (on some hosts those reach 172.31.0.0/16). Use a free /24 and, if `up` still hits an
# overlap (the other networks now exist), pick again around them and retry once.
use_free_front() {
	local want free
	want="$(sed -n -E 's/^front_subnet *= *"([^"]*)".*/\1/p' "$dep/deployment.toml" | head -n1)"
	[[ -n $want ]] || die "deployment.toml sets no [vessel] front_subnet"
	free="$(python3 "$here/free-subnet.py" "$want")" || die "no free subnet for the front network"
	[[ $free == "$want" ]] && return 0
	echo "e2e: front subnet $want is taken; using $free"
	sed -i -E "s|^(front_subnet *= *).*|\1\"$free\"|; s|^(front_address *= *).*|\1\"${free%.0/24}.10\"|" "$dep/deployment.toml"
	deploy >/dev/null
}
use_free_front
# `up --no-start` creates the generated networks (and containers), so the stand-ins can join them
# before anything starts.
if ! up_out="$(compose up --no-start 2>&1)"; then
	printf '%s\n' "$up_out"
	grep -q "Pool overlaps" <<<"$up_out" || die "compose up --no-start failed"
	use_free_front
	compose up --no-start
else
	printf '%s\n' "$up_out"
fi
start_standins
compose up -d
front_ip="$(docker inspect -f "{{with index .NetworkSettings.Networks \"${project}_front\"}}{{.IPAddress}}{{end}}" \
	"$(compose ps -q vessel)")"
[[ -n $front_ip ]] || die "the vessel has no address on ${project}_front"
agents=()
for a in $(compose config --services | sed -n 's/^sandbox-//p' | sort); do agents+=("$a"); done
echo "vessel at $front_ip:8700, agents: ${agents[*]}"

# A long-lived client container on the front network: where an application would sit.
docker run -d --pull never --name "$probe" --network "${project}_front" --read-only --cap-drop ALL \
	--security-opt no-new-privileges --user 61010:61010 --memory 256m --pids-limit 128 \
	-v "$bin:/e2e:ro" -v "$here/probes:/probes:ro" --entrypoint sleep "$project-sandboxd:local" 7200 >/dev/null

# probe_checks JSON: runs inside.py checks from the client container, prints PASS/FAIL lines.
probe_checks() {
	docker exec -i "$probe" python3 /probes/inside.py <<<"$1" | python3 -c '
import json, sys
bad = 0
for line in sys.stdin:
    r = json.loads(line)
    bad += not r["ok"]
    print(("PASS " if r["ok"] else "FAIL ") + r["name"] + " (" + r["detail"] + ")")
sys.exit(1 if bad else 0)'
}
health_json() { # health_json agent=bool ...: the expected /health agents map
	local out="" kv
	for kv in "$@"; do out+="\"${kv%%=*}\": ${kv#*=}, "; done
	printf '{%s}' "${out%, }"
}
all_true=()
for a in "${agents[@]}"; do all_true+=("$a=true"); done

step "prometheus"
prom_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# As docs/operations.md says: one job reading the generated targets file.
printf 'global: { scrape_interval: 2s, scrape_timeout: 2s }
scrape_configs:
  - job_name: astralvessel
    honor_labels: true
    file_sd_configs: [{ files: ["%s"] }]
' "$dep/metrics-targets.json" >"$work/prometheus.yml"
n_targets="$(python3 -c 'import json, sys; print(sum(len(g["targets"]) for g in json.load(open(sys.argv[1]))))' "$dep/metrics-targets.json")"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus-data" \
	--web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
prom_pid=$!
echo "prometheus (pid $prom_pid) on 127.0.0.1:$prom_port scraping the $n_targets targets of metrics-targets.json"
# prom_expect NAME EXPR WAIT_S: PASS once the query's value is above 0 (Prometheus's HTTP API).
prom_expect() {
	python3 - "$prom_port" "$1" "$2" "$3" <<'PY'
import json, sys, time, urllib.parse, urllib.request
port, name, expr, wait = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
deadline, last = time.time() + wait, "no answer"
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
while True:
    try:
        url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
        r = json.load(opener.open(url, timeout=5))
        res = r["data"]["result"]
        last = res[0]["value"][1] if res else "no series"
        if res and float(last) > 0:
            print("PASS %s (%s = %s)" % (name, expr, last))
            sys.exit(0)
    except Exception as e:
        last = repr(e)
    if time.time() > deadline:
        print("FAIL %s (%s: %s)" % (name, expr, last))
        sys.exit(1)
    time.sleep(1)
PY
}

step "wait for health"
probe_checks "[{\"name\": \"vessel healthy with every agent ready\", \"kind\": \"wait_health\", \"wait_s\": 150,
  \"url\": \"http://$front_ip:8700/health\", \"expect\": $(health_json "${all_true[@]}")}]"

step "healthchecks"
# Every service the generated file gives a healthcheck (each binary's own health subcommand) must
# report healthy, not only start.
python3 - "$project" <<'PY' || failed=1
import json, subprocess, sys, time
project = sys.argv[1]
ids = subprocess.run(["docker", "ps", "-q", "--filter", "label=com.docker.compose.project=" + project],
                     check=True, capture_output=True, text=True).stdout.split()
deadline = time.time() + 90
while True:
    info = json.loads(subprocess.run(["docker", "inspect", *ids], check=True, capture_output=True, text=True).stdout)
    checked = {c["Config"]["Labels"].get("com.docker.compose.service"): (c["State"].get("Health") or {}).get("Status")
               for c in info if (c["Config"].get("Healthcheck") or {}).get("Test")}
    bad = {k: v for k, v in checked.items() if v != "healthy"}
    if checked and not bad:
        print("PASS every healthcheck reports healthy: " + ", ".join(sorted(checked)))
        break
    if time.time() > deadline:
        print("FAIL healthchecks not healthy: %s (of %s)" % (bad, sorted(checked)))
        sys.exit(1)
    time.sleep(2)
PY

# ---------------------------------------------------------------------------------------------
step "isolation probes"
"$here/verify-isolation.sh" --project "$project" --dir "$dep" --env-file "$dep/.env" || failed=1

# The stand-ins are no part of the project, so the probes above skip them: their lockdown as in force.
python3 - "$model_uid" "$sink_uid" "${standins[@]}" <<'PY' || failed=1
import json, subprocess, sys
uids, names = sys.argv[1:3], sys.argv[3:]
bad = 0
for name, uid in zip(names, uids):
    c = json.loads(subprocess.run(["docker", "inspect", name], check=True, capture_output=True, text=True).stdout)[0]
    hc, so = c["HostConfig"], c["HostConfig"].get("SecurityOpt") or []
    got = {"user": c["Config"].get("User"), "read_only": hc.get("ReadonlyRootfs"), "cap_drop": hc.get("CapDrop"),
           "cap_add": hc.get("CapAdd"), "no_new_privileges": any(o.startswith("no-new-privileges") for o in so),
           "memory": hc.get("Memory"), "pids": hc.get("PidsLimit"), "running": c["State"].get("Running"),
           "compose_project": (c["Config"].get("Labels") or {}).get("com.docker.compose.project")}
    ok = (got["user"] == "%s:%s" % (uid, uid) and got["read_only"] is True and got["cap_drop"] == ["ALL"]
          and not got["cap_add"] and got["no_new_privileges"] and (got["memory"] or 0) > 0
          and (got["pids"] or 0) > 0 and got["running"] and got["compose_project"] is None)
    bad += not ok
    print("%s test stand-in %s: own uid, read-only, no capability, no-new-privileges, limits, not in the Compose project (%s)"
          % ("PASS" if ok else "FAIL", name, json.dumps(got, sort_keys=True)))
sys.exit(1 if bad else 0)
PY

step "conformance"
for a in "${agents[@]}"; do
	if [[ $a == "$narrow_agent" ]]; then
		# The narrow app's key may call only this agent, so the 403 check runs against another one.
		other_agent="$(printf '%s\n' "${agents[@]}" | grep -vx "$a" | head -n1)"
		docker exec "$probe" /e2e/conformance --other-agent "$other_agent" "http://$front_ip:8700" "$narrow_key" "$a" || failed=1
	elif [[ $a == notebook ]]; then
		# The turn of the script's "notes" rule: add_note, then read_note, on the package's server.
		docker exec "$probe" /e2e/conformance --mcp-text "Note the survey date. #script:notes" \
			--mcp-expect "Larchmere survey starts on 12 May" "http://$front_ip:8700" "$app_key" "$a" || failed=1
	else
		docker exec "$probe" /e2e/conformance "http://$front_ip:8700" "$app_key" "$a" || failed=1
	fi
done

step "a local stack's load beside this deployment (beside-load.sh)"
BESIDE_APP_KEY="$app_key" "$here/beside-load.sh" "$project" "$probe" "http://$front_ip:8700" "${agents[0]}" || failed=1

step "metrics (Prometheus)"
# One egress decision the e2e makes itself: a CONNECT to a private literal address, which the
# egress refuses without dialling anything (as the vessel's web client: without credentials it
# would be a 407, which the isolation probes check).
egress_ip="$(docker inspect -f "{{with index .NetworkSettings.Networks \"${project}_egress\"}}{{.IPAddress}}{{end}}" "$(compose ps -q egress)")"
python3 - "$egress_ip" "$dep/.generated/egress.token" <<'PY' || failed=1
import base64, hashlib, hmac, socket, sys
tok = open(sys.argv[2]).read().strip()
cred = base64.b64encode(b"vessel:" + hmac.new(tok.encode(), b"egress-web/vessel", hashlib.sha256).hexdigest().encode())
s = socket.create_connection((sys.argv[1], 3128), timeout=10)
s.sendall(b"CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\nProxy-Authorization: Basic " + cred + b"\r\n\r\n")
line = s.makefile("rb").readline().decode()
print(("PASS" if " 403 " in line else "FAIL") + " egress refuses a CONNECT to a private address (" + line.strip() + ")")
sys.exit(0 if " 403 " in line else 1)
PY
prom_expect "every metrics listener scraped" "count(up == 1) >= $n_targets" 60 || failed=1
prom_expect "vessel turns finished" 'sum(vessel_turns_finished_total{status="ok"})' 30 || failed=1
prom_expect "vessel model tokens" 'sum(vessel_model_tokens_total)' 30 || failed=1
prom_expect "vessel tool calls" 'sum(vessel_tool_calls_total)' 30 || failed=1
prom_expect "sandboxd calls" 'sum(sandboxd_calls_total)' 30 || failed=1
prom_expect "egress model requests" 'sum(egress_model_requests_total{source="forwarded"})' 30 || failed=1
prom_expect "egress model tokens by agent" 'sum(egress_model_tokens_total{agent!~"unknown|invalid|other"})' 30 || failed=1
prom_expect "egress model requests on the second route" 'sum(egress_model_requests_total{route="classic",source="forwarded"})' 30 || failed=1
prom_expect "egress decisions" 'sum(egress_proxy_decisions_total{decision="deny"})' 30 || failed=1

step "usage and audit"
# The conformance turns left one usage record per finished turn, and audit events in all three
# services' streams: a task id (metadata.correlation_uid) joins API Activity (vessel), Process
# Activity (sandboxd) and Network Activity (egress) of one tool-calling turn.
records="$dep/records"
python3 - "$records" <<'PY' || failed=1
import glob, json, os, sys, time
root = sys.argv[1]
def fetch():
    pass  # the services write straight into the deploy folder's records/<service>/
def lines(path):
    out = []
    for f in glob.glob(path):
        with open(f) as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass  # a line still being written when the file was copied
    return out
deadline = time.time() + 30
while True:
    fetch()
    usage = lines(os.path.join(root, "vessel", "usage.jsonl*"))
    by_class = {}
    for svc, cls in (("vessel", 6003), ("sandbox-*", 1007), ("egress", 4001)):
        evs = lines(os.path.join(root, svc, "audit.jsonl*"))
        for e in evs:
            for k in ("class_uid", "category_uid", "activity_id", "type_uid", "time", "severity_id", "metadata"):
                if k not in e:
                    print("FAIL audit event of %s lacks %s: %s" % (svc, k, json.dumps(e)[:200]))
                    sys.exit(1)
        by_class[cls] = {e["metadata"].get("correlation_uid") for e in evs if e["class_uid"] == cls} - {None, ""}
    joined = by_class[6003] & by_class[1007] & by_class[4001]
    ok_turns = [u for u in usage if u.get("status") == "ok" and u.get("task")]
    if ok_turns and joined:
        print("PASS %d usage records (%d ok); one task id in all three audit streams (%s; API %d, process %d, network %d tasks)"
              % (len(usage), len(ok_turns), sorted(joined)[0], len(by_class[6003]), len(by_class[1007]), len(by_class[4001])))
        break
    if time.time() > deadline:
        print("FAIL usage records %d (ok %d); audit tasks: API %d, process %d, network %d, in all three %d"
              % (len(usage), len(ok_turns), len(by_class[6003]), len(by_class[1007]), len(by_class[4001]), len(joined)))
        sys.exit(1)
    time.sleep(2)
PY

# ---------------------------------------------------------------------------------------------
step "operator, as generated"
# docs/operations.md, "Operating a generated deployment", as written: in the deploy folder, with no
# flag and no override. turns and cancel read operator.url and .generated/operator.token (the
# deployer's: root here); the records are read by a user who is only in the operator group.
op_user=61090
as_operator() { (cd "$dep" && setpriv --reuid "$op_user" --regid "$op_user" --groups 61020 "$@"); }
op_ok() { printf 'PASS %s\n' "$1"; }
op_fail() { printf 'FAIL %s\n' "$1"; failed=1; }
if out="$(cd "$dep" && "$bin/astralvessel" turns 2>&1)"; then op_ok "astralvessel turns: ${out%%$'\n'*}"; else op_fail "astralvessel turns: $out"; fi
# A slow turn (the script's "slow" rule, about 30 s) from the application's side, cancelled by the
# operator once turns lists it.
docker exec -d "$probe" python3 -c '
import json, sys, urllib.request
body = {"jsonrpc": "2.0", "id": "op", "method": "SendMessage", "params": {"message": {"messageId": "e2e-op-cancel",
        "role": "ROLE_USER", "parts": [{"text": "to be cancelled by the operator #script:slow"}]}}}
req = urllib.request.Request(sys.argv[1], json.dumps(body).encode(), {"Content-Type": "application/json",
      "Authorization": "Bearer " + sys.argv[2], "X-Vessel-User": "e2e-operator"})
urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=120).read()' \
	"http://$front_ip:8700/agents/${agents[0]}" "$app_key"
op_task=""
for _ in $(seq 1 40); do
	op_task="$(cd "$dep" && "$bin/astralvessel" turns 2>/dev/null | awk '$3 ~ /e2e-operator$/ { print $1; exit }')"
	[[ -n $op_task ]] && break
	sleep 0.5
done
if [[ -z $op_task ]]; then
	op_fail "astralvessel turns never listed the operator's slow turn"
elif out="$(cd "$dep" && "$bin/astralvessel" cancel "$op_task" 2>&1)" && [[ $out == *TASK_STATE_CANCELED* ]]; then
	op_ok "astralvessel cancel $op_task: $out"
else
	op_fail "astralvessel cancel $op_task: $out"
fi
if out="$(as_operator "$bin/astralvessel" usage records/vessel/usage.jsonl --by app 2>&1)" && grep -q "example-app" <<<"$out"; then
	op_ok "astralvessel usage records/vessel/usage.jsonl as a member of astralvessel-operators"
	printf '%s\n' "$out" | head -n 4
else
	op_fail "astralvessel usage as a member of astralvessel-operators: $out"
fi
audit_files=(records/vessel/audit.jsonl records/egress/audit.jsonl)
for a in "${metrics_agents[@]}"; do audit_files+=("records/sandbox-$a/audit.jsonl"); done
if out="$(as_operator tail -n 1 "${audit_files[@]}" 2>&1)" && [[ $(grep -c '"class_uid"' <<<"$out") -ge ${#audit_files[@]} ]]; then
	op_ok "the ${#audit_files[@]} audit streams read as a member of astralvessel-operators"
else
	op_fail "audit streams as a member of astralvessel-operators: ${out:0:600}"
fi
if out="$(as_operator sh -c 'curl -s "$(cat operator.url)/metrics"' 2>&1)" && grep -q '^vessel_turns_finished_total' <<<"$out"; then
	op_ok "curl \$(cat operator.url)/metrics: $(grep -c '^vessel_' <<<"$out") vessel series"
else
	op_fail "curl \$(cat operator.url)/metrics: ${out:0:300}"
fi

# ---------------------------------------------------------------------------------------------
step "traces"
# The conformance turns above called the species tool: at least one trace must hold a turn span
# and spans of all three services. The services batch their spans (5 s by default).
trace_ok=""
for _ in $(seq 1 20); do
	if docker logs "$sink_name" 2>/dev/null | python3 -c '
import json, sys
traces = {}
for line in sys.stdin:
    try:
        s = json.loads(line)
    except ValueError:
        continue
    t = traces.setdefault(s["trace_id"], {"services": set(), "names": set()})
    t["services"].add(s["service"])
    t["names"].add(s["service"] + ": " + s["name"])
for tid, t in traces.items():
    if {"vessel", "sandboxd", "egress"} <= t["services"] and "vessel: turn" in t["names"]:
        print("PASS one turn, one trace across vessel, sandboxd and egress (trace " + tid + ": " + ", ".join(sorted(t["names"])) + ")")
        sys.exit(0)
print("waiting: %d traces, none with spans of all three services yet" % len(traces))
sys.exit(1)'; then
		trace_ok=1
		break
	fi
	sleep 3
done
[[ -n $trace_ok ]] || { echo "FAIL no trace holds one turn's spans from vessel, sandboxd and egress"; failed=1; }

# ---------------------------------------------------------------------------------------------
step "fingerprints"
url="http://$front_ip:8700"
send() { # send NAME AGENT [expect_status expect_code]
	if [[ $# -gt 2 ]]; then
		echo "{\"name\": \"$1\", \"kind\": \"a2a_send\", \"url\": \"$url/agents/$2\", \"key\": \"$app_key\", \"expect_status\": $3, \"expect_code\": $4}"
	else
		echo "{\"name\": \"$1\", \"kind\": \"a2a_send\", \"url\": \"$url/agents/$2\", \"key\": \"$app_key\"}"
	fi
}
edited="${agents[-1]}" other="${agents[0]}"
pkg="$(awk -v id="$edited" '
	/^\[\[agents\]\]/ { inagent = 1; cur = ""; next }
	/^\[/ && !/^\[agents\./ { inagent = 0 }
	inagent && /^id *=/ { gsub(/.*= *"|".*/, ""); cur = $0 }
	inagent && /^package *=/ && cur == id { gsub(/.*= *"|".*/, ""); print; exit }' "$dep/deployment.toml")"
manifest="$dep/$pkg/vessel.toml"
[[ -f $manifest ]] || die "cannot find $edited's vessel.toml (package '$pkg')"
before="$(probe_checks "[$(send "before the edit: $edited answers" "$edited"), $(send "before the edit: $other answers" "$other")]")" || failed=1
printf '%s\n' "$before"
# A task from before the redeploy, to read back from the task store once the vessel was recreated.
old_task="$(grep -o 'task_id=[^ ]*' <<<"$before" | tail -n1 | cut -d= -f2)"

sed -i -E '0,/^description *=/s/^(description *= *")/\1Edited without deploying. /' "$manifest"
other_true="$other=true"
probe_checks "[{\"name\": \"vessel.toml edited, not deployed: $edited reported not ready\", \"kind\": \"wait_health\", \"wait_s\": 60,
  \"url\": \"$url/health\", \"expect\": $(health_json "$edited=false" "$other_true")},
  $(send "vessel.toml edited, not deployed: $edited refused with 503 -32004" "$edited" 503 -32004),
  $(send "vessel.toml edited, not deployed: $other still answers" "$other")]" || failed=1

deploy >/dev/null
compose up -d
probe_checks "[{\"name\": \"deploy + up -d: every agent ready again\", \"kind\": \"wait_health\", \"wait_s\": 150,
  \"url\": \"$url/health\", \"expect\": $(health_json "${all_true[@]}")},
  $(send "deploy + up -d: $edited answers again" "$edited"),
  {\"name\": \"deploy + up -d: a task from before the recreated vessel is still in the task store\", \"kind\": \"a2a_get\",
   \"url\": \"$url/agents/$other\", \"key\": \"$app_key\", \"task_id\": \"$old_task\"}]" || failed=1

prompt="$(dirname "$manifest")/prompt.md"
printf '\nAn edit made while the deployment runs.\n' >>"$prompt"
sleep 3
probe_checks "[{\"name\": \"prompt.md edited: nothing needed, every agent still ready\", \"kind\": \"wait_health\", \"wait_s\": 10,
  \"url\": \"$url/health\", \"expect\": $(health_json "${all_true[@]}")},
  $(send "prompt.md edited: $edited answers with no redeploy" "$edited")]" || failed=1

# ---------------------------------------------------------------------------------------------
step "done"
if [[ $failed != 0 ]]; then
	echo "e2e: FAILED after $((SECONDS - start))s"
	exit 1
fi
echo "e2e: passed in $((SECONDS - start))s"
