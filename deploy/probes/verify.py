"""Isolation probes for a running AstralVessel Compose deployment (run by deploy/verify-isolation.sh).

Checks come in three groups and each prints one PASS/FAIL line, then a summary `N passed, M failed`:
  * per container: hardening as configured (docker inspect) and as in force (/proc/1/status,
    mountinfo and routing tables read from inside the container's namespaces);
  * per network: which of the project's containers can reach which, the egress guard's refusals,
    and where each secret is present;
  * per call: tool calls run through a sandbox's /run from the vessel's network namespace, trying
    what a call must not be able to do.
Every address probed is one of the project's own containers (from docker inspect) or loopback.
"""

import argparse
import hashlib
import hmac
import ipaddress
import json
import os
import subprocess
import sys
import time
import uuid

import sharedhost
from sandboxconf import (SANDBOX_GRPC, SANDBOX_HTTP, agent_pids, agent_tools, command_args, command_flag,
                         sandbox_endpoint, sandbox_tools, tier, uid_range)

# The probe containers run as their own uid (deployer/compose ProbeUID), never a service's or a call's.
PROBE_UID = 61010

# The only capabilities any container holds: a sandbox's sandboxd switches each turn's calls to
# their own uid (deployer/compose SandboxCaps).
SANDBOX_CAPS = ["CHOWN", "DAC_OVERRIDE", "KILL", "SETGID", "SETUID"]
HERE = os.path.dirname(os.path.abspath(__file__))
INSIDE = open(os.path.join(HERE, "inside.py")).read()


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.gaps = 0
        # Probe names that show a gap docs/security.md states for a sandbox's tier ("Isolation
        # tiers"): when such a probe fails it is reported as GAP, not FAIL; when it passes, the gap
        # has closed and it counts as passed.
        self.known_gaps = {}

    def add(self, name, ok, detail=""):
        if not ok and name in self.known_gaps:
            self.gaps += 1
            print(f"GAP  {name} ({detail}; {self.known_gaps[name]})", flush=True)
            return
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {name}" + (f" ({detail})" if detail else ""), flush=True)


def sh(args, stdin=None, check=True):
    p = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])}...: {p.stderr.strip()[:400]}")
    return p.stdout


def read_env_file(path):
    env = {}
    if not path or not os.path.exists(path):
        return env
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        env[k.strip()] = v.strip().strip('"').strip("'")
    return env


class Deployment:
    def __init__(self, project, gen_dir):
        self.project = project
        self.gen_dir = gen_dir
        ids = sh(["docker", "ps", "-aq", "--filter", f"label=com.docker.compose.project={project}"]).split()
        if not ids:
            raise SystemExit(f"verify-isolation: no containers for project {project!r}; is it up?")
        self.containers = {}
        for info in json.loads(sh(["docker", "inspect", *ids])):
            svc = info["Config"]["Labels"].get("com.docker.compose.service", info["Name"])
            self.containers[svc] = info
        self.prefix = project + "_"
        # Gateways of the project's internal networks: Docker < 25 gives containers on them a
        # default route to the bridge, which drops forwarded traffic.
        self.internal_gateways = []
        self.network_internal = {}
        nets = sh(["docker", "network", "ls", "-q", "--filter", f"label=com.docker.compose.project={project}"]).split()
        for n in json.loads(sh(["docker", "network", "inspect", *nets])) if nets else []:
            short = n["Name"][len(self.prefix):] if n["Name"].startswith(self.prefix) else n["Name"]
            self.network_internal[short] = bool(n.get("Internal"))
            if n.get("Internal"):
                for cfg in (n.get("IPAM") or {}).get("Config") or []:
                    gw = (cfg.get("Gateway") or "").split("/")[0]
                    if not gw and cfg.get("Subnet"):
                        # Without an explicit gateway Docker takes the subnet's first address.
                        gw = str(next(ipaddress.ip_network(cfg["Subnet"], strict=False).hosts()))
                    if gw:
                        self.internal_gateways.append(gw)

    def service(self, name):
        return self.containers.get(name)

    def sandboxes(self):
        return sorted(s for s in self.containers if s.startswith("sandbox-"))

    def networks(self, svc):
        nets = self.containers[svc]["NetworkSettings"]["Networks"]
        return {n[len(self.prefix):] if n.startswith(self.prefix) else n: v["IPAddress"] for n, v in nets.items()}

    def ip(self, svc, net):
        return self.networks(svc).get(net)

    def token(self, name):
        p = os.path.join(self.gen_dir, name)
        try:
            return open(p).read().strip()
        except OSError:
            return None


def web_client_token(egress_token, client):
    """The egress web proxy password of client: spec.WebClientToken (HMAC-SHA256 of the egress token)."""
    return hmac.new((egress_token or "").encode(), ("egress-web/" + client).encode(), hashlib.sha256).hexdigest()


def run_inside(dep, target, checks, image, mode):
    """Runs inside.py with checks: mode "exec" runs in the target itself, "join" in a throwaway
    probe container sharing the target's network and pid namespaces, "net:<network>" in a probe
    container attached to that network."""
    data = json.dumps(checks)
    if mode == "exec":
        # As the probe uid: a sandbox runs as root with capabilities, which a probe must not borrow.
        cmd = ["docker", "exec", "-i", "--user", f"{PROBE_UID}:{PROBE_UID}", dep.containers[target]["Id"],
               "python3", "-c", INSIDE]
    else:
        # --pull never: a missing probe image is an error here, never a registry lookup.
        cmd = ["docker", "run", "--rm", "-i", "--pull", "never", "--read-only", "--cap-drop", "ALL",
               "--security-opt", "no-new-privileges", "--user", f"{PROBE_UID}:{PROBE_UID}",
               "--memory", "128m", "--pids-limit", "64", "--entrypoint", "python3"]
        if mode == "join":
            cid = dep.containers[target]["Id"]
            cmd += ["--network", f"container:{cid}", "--pid", f"container:{cid}"]
        else:
            cmd += ["--network", mode.split(":", 1)[1]]
        cmd += [image, "-c", INSIDE]
    p = subprocess.run(cmd, input=data, capture_output=True, text=True)
    results = []
    for line in p.stdout.splitlines():
        try:
            results.append(json.loads(line))
        except ValueError:
            pass
    seen = {r["name"] for r in results}
    for c in checks:
        if c["name"] not in seen:
            results.append({"name": c["name"], "ok": False,
                            "detail": f"probe did not run: {p.stderr.strip()[-300:]}"})
    return results


def hardening(dep, rep):
    for svc, info in sorted(dep.containers.items()):
        if svc in dep.extra:
            continue
        hc, cfg = info["HostConfig"], info["Config"]
        rep.add(f"{svc}: read-only root filesystem (config)", hc.get("ReadonlyRootfs") is True)
        sandbox = svc.startswith("sandbox-")
        so = hc.get("SecurityOpt") or []
        rep.add(f"{svc}: no-new-privileges (config)",
                any(o.replace("=", ":") in ("no-new-privileges", "no-new-privileges:true") for o in so))
        rep.add(f"{svc}: memory limit", (hc.get("Memory") or 0) > 0, f"{hc.get('Memory')} bytes")
        rep.add(f"{svc}: pids limit", (hc.get("PidsLimit") or 0) > 0, f"{hc.get('PidsLimit')}")
        user = (cfg.get("User") or "").split(":")[0]
        if sandbox:
            # sandboxd must be root to give each turn's calls their own uid; its capabilities are
            # checked in "capabilities".
            rep.add(f"{svc}: runs as root (0:0), its calls under per-turn uids", cfg.get("User") == "0:0",
                    f"user={cfg.get('User')!r}")
        else:
            rep.add(f"{svc}: runs as a non-root user", user not in ("", "0", "root"), f"user={cfg.get('User')!r}")
        rep.add(f"{svc}: not privileged, no Docker socket",
                not hc.get("Privileged") and not any("docker.sock" in (m.get("Source") or "") for m in info["Mounts"]))
        rep.add(f"{svc}: restart unless-stopped", (hc.get("RestartPolicy") or {}).get("Name") == "unless-stopped")
        binds = [m for m in info["Mounts"] if m.get("Type") == "bind"]
        # A sandbox writes its uid range reservation in the host's shared directory
        # (root's, mode 0700; deployer/compose UIDLockDir).
        binds = [m for m in binds if not (svc.startswith("sandbox-") and m.get("Destination") == UID_LOCK_DIR)]
        # The one other writable host folder is the service's own records folder (usage, audit),
        # which the generated file mounts at /records (docs/operations.md).
        own_records = lambda m: m.get("Destination") == "/records" and \
            (m.get("Source") or "").rstrip("/").endswith("/records/" + svc)
        rep.add(f"{svc}: every host folder and file mounted read-only but its own records folder",
                all(not m.get("RW") or own_records(m) for m in binds),
                ", ".join(f"{m['Source']}:{m['Destination']}:{'rw' if m.get('RW') else 'ro'}" for m in binds) or "no bind mounts")
        if svc == "vessel":
            labels = cfg.get("Labels") or {}
            fps = [k for k in labels if k.startswith("astralvessel.fingerprint.")]
            rep.add("vessel: labelled with the deployment hash and every agent's fingerprint",
                    "astralvessel.deployment-hash" in labels and len(fps) == len(dep.sandboxes()), f"{len(fps)} fingerprints")
        if sandbox:
            scratch = (hc.get("Tmpfs") or {}).get("/scratch", "")
            rep.add(f"{svc}: scratch is a size-limited tmpfs", "size=" in scratch, scratch or "no /scratch tmpfs")
            opts = scratch.split(",")
            rep.add(f"{svc}: scratch root owned by root, mode 0711 (config)",
                    "uid=0" in opts and "gid=0" in opts and "mode=0711" in opts, scratch or "no /scratch tmpfs")
            prof = next((o for o in so if o.startswith("seccomp")), "")
            rep.add(f"{svc}: project seccomp profile with Landlock syscalls",
                    "landlock_restrict_self" in prof, "profile not set" if not prof else "")


UID_LOCK_DIR = "/run/astralvessel/uids"


def identities(dep, rep):
    """Each service its own uid; each sandbox's calls a block of uids no other sandbox and no
    service has (the kernel counts process limits per uid across every container)."""
    uids = {}
    for svc, info in sorted(dep.containers.items()):
        if svc.startswith("sandbox-"):
            continue
        user = info["Config"].get("User") or ""
        uids.setdefault(user.split(":")[0], []).append(svc)
    shared = {u: s for u, s in uids.items() if len(s) > 1}
    rep.add("identities: every service runs as its own uid", not shared and "" not in uids,
            ", ".join(f"{'+'.join(s)}={u or 'image default'}" for u, s in sorted(uids.items(), key=lambda x: x[1])))
    ranges = {}
    for sb in dep.sandboxes():
        r = uid_range(dep, sb)
        rep.add(f"{sb}: started with a call uid range", r is not None and r[1] > 0 and r[0] > 0,
                f"--uid-range {r[0]}:{r[1]}" if r else "no --uid-range")
        if r:
            ranges[sb] = r
    for sb, (first, count) in sorted(ranges.items()):
        clash = [f"{s}({u})" for u, ss in uids.items() if u.isdigit() and first <= int(u) < first + count for s in ss]
        overlap = [o for o, (f2, c2) in ranges.items() if o != sb and first < f2 + c2 and f2 < first + count]
        rep.add(f"{sb}: call uids {first}..{first + count - 1} hold no service's uid and no other sandbox's",
                not clash and not overlap, f"services inside: {clash or 'none'}; overlapping: {overlap or 'none'}")


def capabilities(dep, rep, image):
    """Each container's capabilities as configured (docker inspect) and in force (/proc/1/status):
    a sandbox exactly SANDBOX_CAPS, every other container none."""
    for svc in sorted(dep.containers):
        if svc in dep.extra:
            continue
        hc = dep.containers[svc]["HostConfig"]
        want = SANDBOX_CAPS if svc.startswith("sandbox-") else []
        drop = sorted(c.upper().removeprefix("CAP_") for c in hc.get("CapDrop") or [])
        add = sorted(c.upper().removeprefix("CAP_") for c in hc.get("CapAdd") or [])
        print(f"     {svc}: CapDrop={drop} CapAdd={add}", flush=True)
        rep.add(f"{svc}: drops all capabilities, adds " + (" ".join(want) if want else "none") + " (config)",
                drop == ["ALL"] and add == sorted(want), f"drop={drop} add={add}")
        check = {"name": f"{svc}: capabilities in force are exactly " + (" ".join(want) if want else "none")
                 + " (CapEff, CapPrm, CapBnd of pid 1; no inheritable or ambient)", "kind": "caps", "expect": want}
        mode = "exec" if svc.startswith("sandbox-") else "join"
        for r in run_inside(dep, svc, [check], image, mode):
            print(f"     {svc}: {r['detail']}", flush=True)
            rep.add(r["name"], r["ok"], r["detail"] if not r["ok"] else "")


def expected_networks(dep, svc):
    agents = [s[len("sandbox-"):] for s in dep.sandboxes()]
    # The generated internal metrics network (docs/operations.md, "In Compose") joins the
    # services whose listeners it scrapes; it must be internal, which networks() checks.
    metrics = {"metrics"} if "metrics" in dep.network_internal else set()
    if svc == "vessel":
        return {"front", "egress"} | {f"tools-{a}" for a in agents} | metrics
    if svc == "egress":
        return {"egress", "outside"} | metrics
    if svc == "search":
        return {"egress"}
    if svc.startswith("sandbox-"):
        return {f"tools-{svc[len('sandbox-'):]}"} | metrics
    return None


def runtime(dep, rep, image):
    """Hardening in force, read from inside each container's namespaces."""
    for svc in sorted(dep.containers):
        if svc in dep.extra:
            continue
        want = expected_networks(dep, svc)
        got = set(dep.networks(svc))
        rep.add(f"{svc}: on exactly the spec's networks", want == got, f"on {sorted(got)}")
        seccomp = {"name": f"{svc}: seccomp filter in force (Seccomp 2)", "kind": "status", "field": "Seccomp",
                   "expect": "2"}
        if svc.startswith("sandbox-") and tier(dep, svc) == "gvisor":
            # runsc does not apply the container's profile inside gVisor (docs/sandbox.md: its OCI
            # seccomp support answers every refusal with EPERM, so clone3 never falls back to clone):
            # the boundary is gVisor's kernel, and each call still gets sandboxd's filter (the call probes).
            seccomp = {"name": f"{svc}: runs on gVisor's kernel (the gvisor tier's boundary; its calls under "
                       "sandboxd's seccomp filter)", "kind": "gvisor_kernel"}
        checks = [
            {"name": f"{svc}: no-new-privileges in force (NoNewPrivs 1)", "kind": "status", "field": "NoNewPrivs",
             "expect": "1"},
            seccomp,
            {"name": f"{svc}: root filesystem mounted read-only", "kind": "rootfs_ro"},
            {"name": f"{svc}: " + ("has a route out (control)" if svc == "egress" else "no route out"),
             "kind": "default_route", "expect": svc == "egress", "internal_gateways": dep.internal_gateways},
        ]
        mode = "exec" if svc.startswith("sandbox-") else "join"
        for r in run_inside(dep, svc, checks, image, mode):
            rep.add(r["name"], r["ok"], r["detail"])


def networks(dep, rep, image, env):
    for net, internal in sorted(dep.network_internal.items()):
        if net == "outside":
            rep.add("network outside: the only one with a way out (not internal)", not internal)
        else:
            rep.add(f"network {net}: internal (Docker forwards nothing off it)", internal)
    vessel, egress = "vessel", "egress"
    front_ip = dep.ip(vessel, "front")
    port = 8700
    agents = dep.sandboxes()
    # From each sandbox: nothing but answering the vessel.
    for sb in agents:
        agent = sb[len("sandbox-"):]
        checks = []
        tools_ip = dep.ip(vessel, f"tools-{agent}")
        checks.append({"name": f"{sb}: cannot reach the vessel API on the shared tools network",
                       "kind": "tcp_blocked", "host": tools_ip, "port": port})
        checks.append({"name": f"{sb}: cannot reach the vessel's front address",
                       "kind": "tcp_blocked", "host": front_ip, "port": port})
        eg = dep.ip(egress, "egress")
        checks.append({"name": f"{sb}: cannot reach the egress model port", "kind": "tcp_blocked", "host": eg, "port": 8080})
        checks.append({"name": f"{sb}: cannot reach the egress proxy", "kind": "tcp_blocked", "host": eg, "port": 3128})
        if dep.service("search"):
            checks.append({"name": f"{sb}: cannot reach search", "kind": "tcp_blocked",
                           "host": dep.ip("search", "egress"), "port": 8080})
        for other in agents:
            if other != sb:
                oagent = other[len("sandbox-"):]
                for p in (SANDBOX_GRPC, SANDBOX_HTTP):
                    checks.append({"name": f"{sb}: cannot reach {other}:{p}", "kind": "tcp_blocked",
                                   "host": dep.ip(other, f"tools-{oagent}"), "port": p})
        for r in run_inside(dep, sb, checks, image, "exec"):
            rep.add(r["name"], r["ok"], r["detail"])

    # From the vessel's namespace: its API only on the front address; the egress's refusals.
    checks = [{"name": "vessel: API listens on its front address", "kind": "tcp_open", "host": front_ip, "port": port}]
    for net, ip in sorted(dep.networks(vessel).items()):
        if net != "front":
            checks.append({"name": f"vessel: API not listening on its {net} address", "kind": "tcp_blocked",
                           "host": ip, "port": port})
    checks.append({"name": "vessel: API not listening on loopback", "kind": "tcp_blocked", "host": "127.0.0.1", "port": port})
    for sb in agents:
        agent = sb[len("sandbox-"):]
        for p in (SANDBOX_GRPC, SANDBOX_HTTP):
            checks.append({"name": f"vessel: reaches {sb}:{p} (control)", "kind": "tcp_open",
                           "host": dep.ip(sb, f"tools-{agent}"), "port": p})
    eg = dep.ip(egress, "egress")
    model = f"http://{eg}:8080/v1/models"
    etok = dep.token("egress.token")
    checks.append({"name": "egress: refuses a model call without the vessel token", "kind": "http",
                   "url": model, "expect": [401]})
    checks.append({"name": "egress: refuses a model call with a wrong token", "kind": "http", "url": model,
                   "headers": {"Authorization": "Bearer not-the-egress-token"}, "expect": [401]})
    if etok:
        checks.append({"name": "egress: forwards a model call with the vessel token (control)", "kind": "http",
                       "url": model, "headers": {"Authorization": "Bearer " + etok}, "expect": [200]})
    targets = [("GET", "http://127.0.0.1/"), ("GET", "http://127.0.0.1:8080/v1/models"), ("CONNECT", "127.0.0.1:443"),
               ("GET", "http://[::1]/"), ("GET", f"http://{front_ip}:{port}/health"),
               ("GET", f"http://{front_ip}/"), ("CONNECT", f"{eg}:443"),
               ("GET", f"http://{dep.ip(vessel, 'egress')}/")]
    for sb in agents:
        agent = sb[len("sandbox-"):]
        targets.append(("GET", f"http://{dep.ip(sb, f'tools-{agent}')}/"))
    if dep.service("search"):
        targets.append(("GET", f"http://{dep.ip('search', 'egress')}/search?q=x&format=json"))
    # As the vessel's own web client, so the address guard (not the missing credentials) refuses.
    vauth = f"vessel:{web_client_token(etok, 'vessel')}" if etok else ""
    for method, target in targets:
        checks.append({"name": f"egress proxy: refuses {method} {target}", "kind": "proxy", "method": method,
                       "target": target, "proxy_host": eg, "proxy_port": 3128, "auth": vauth})
    # A client without credentials, or with a wrong token, is refused before any lookup or dial
    # (literal addresses and a name that is never resolved).
    for target, auth in (("10.0.0.1:443", ""), ("unresolved.invalid:443", ""),
                         ("10.0.0.1:443", "vessel:not-the-token"), ("unresolved.invalid:443", "agent.nobody:x")):
        checks.append({"name": f"egress proxy: 407 for CONNECT {target} as {auth.split(':')[0] or 'nobody'}",
                       "kind": "proxy", "method": "CONNECT", "target": target, "proxy_host": eg, "proxy_port": 3128,
                       "auth": auth, "expect": 407, "reason": "unauthenticated"})
    for r in run_inside(dep, vessel, checks, image, "join"):
        rep.add(r["name"], r["ok"], r["detail"])

    # From the search container's namespace: no credentials gets 407; its own credentials (the
    # secret file deploy wrote) reach only its engines' hosts, refused by name before any lookup.
    if dep.service("search"):
        sauth = ""
        proxy_url = dep.token("search-proxy.url")
        if proxy_url and "@" in proxy_url:
            sauth = proxy_url.split("://", 1)[-1].rsplit("@", 1)[0]
        rep.add("search: holds its proxy credentials as the search client", sauth.startswith("search:") and
                etok is not None and sauth == "search:" + web_client_token(etok, "search"), "search-proxy.url")
        checks = [{"name": "search: egress proxy 407 without credentials", "kind": "proxy", "method": "CONNECT",
                   "target": "10.0.0.1:443", "proxy_host": eg, "proxy_port": 3128, "expect": 407,
                   "reason": "unauthenticated"},
                  {"name": "search: refused a host outside its engines", "kind": "proxy", "method": "CONNECT",
                   "target": "not-an-engine.invalid:443", "proxy_host": eg, "proxy_port": 3128, "auth": sauth,
                   "expect": 403, "reason": "name-policy"},
                  {"name": "search: refused an address literal", "kind": "proxy", "method": "CONNECT",
                   "target": "10.0.0.1:443", "proxy_host": eg, "proxy_port": 3128, "auth": sauth,
                   "expect": 403, "reason": "name-policy"}]
        for r in run_inside(dep, "search", checks, image, "join"):
            rep.add(r["name"], r["ok"], r["detail"])

    # From an application's position on the front network.
    frontnet = dep.prefix + "front"
    checks = [{"name": "front: vessel /health answers on the front address", "kind": "http",
               "url": f"http://{front_ip}:{port}/health", "expect": [200], "body_contains": '"ok"'}]
    checks.append({"name": "front: egress not reachable from the front network", "kind": "tcp_blocked",
                   "host": eg, "port": 8080})
    for sb in agents:
        agent = sb[len("sandbox-"):]
        for p in (SANDBOX_GRPC, SANDBOX_HTTP):
            checks.append({"name": f"front: {sb}:{p} not reachable from the front network", "kind": "tcp_blocked",
                           "host": dep.ip(sb, f"tools-{agent}"), "port": p})
    for r in run_inside(dep, None, checks, image, "net:" + frontnet):
        rep.add(r["name"], r["ok"], r["detail"])


def secret_surface(dep, svc):
    """Everything a container is handed: its environment values and its bind-mounted files."""
    info = dep.containers[svc]
    texts = [e.split("=", 1)[1] for e in info["Config"].get("Env") or [] if "=" in e]
    for m in info["Mounts"]:
        src = m.get("Source") or ""
        if m.get("Type") != "bind" or not src:
            continue
        paths = []
        if os.path.isfile(src):
            paths = [src]
        elif os.path.isdir(src):
            for root, _, files in os.walk(src):
                paths += [os.path.join(root, f) for f in files]
                if len(paths) > 500:
                    break
        for p in paths[:500]:
            try:
                if os.path.getsize(p) < 1 << 20:
                    texts.append(open(p, errors="replace").read())
            except OSError:
                pass
    return "\n".join(texts)


def secrets(dep, rep, env):
    gen = dep.gen_dir
    if os.path.isdir(gen):
        loose = [f"{f}:{oct(os.stat(os.path.join(gen, f)).st_mode & 0o777)}" for f in sorted(os.listdir(gen))
                 if os.stat(os.path.join(gen, f)).st_mode & 0o077]
        rep.add("secrets: generated secret files readable by their owner only (0600)", not loose,
                ", ".join(loose) or f"{len(os.listdir(gen))} files")
    surfaces = {svc: secret_surface(dep, svc) for svc in dep.containers if svc not in dep.extra}
    items = []
    mk = env.get("VESSEL_MODEL_KEY") or env.get("VESSEL_UPSTREAM_MODEL_KEY")
    if mk:
        items.append(("the model key", mk, {"egress"}))
    for k, v in env.items():
        # The keys of [models] routes (docs/models.md): the egress's alone, as the model key.
        if k.endswith("_MODEL_KEY") and k not in ("VESSEL_MODEL_KEY", "VESSEL_UPSTREAM_MODEL_KEY") and v:
            items.append((f"model route key {k}", v, {"egress"}))
    for k, v in env.items():
        if k.endswith("APP_KEY") and v:
            items.append((f"app key {k}", v, set()))
            digest = hashlib.sha256(v.encode()).hexdigest()
            rep.add(f"secrets: vessel holds {k} only as its SHA-256 digest", digest in surfaces.get("vessel", ""))
    master = dep.token("sandbox-master.token")
    if master:
        items.append(("the sandbox master token", master, {"vessel"}))
    for sb in dep.sandboxes():
        t = dep.token(f"{sb}.token")
        if t:
            items.append((f"{sb}'s token", t, {sb, "vessel"}))
    t = dep.token("egress.token")
    if t:
        items.append(("the egress token", t, {"egress", "vessel"}))
    t = dep.token("search.secret")
    if t and dep.service("search"):
        items.append(("the search secret", t, {"search"}))
        t = dep.token("egress.token")
        if t:
            items.append(("the search proxy credential", web_client_token(t, "search"), {"search"}))
    for label, value, allowed in items:
        holders = {svc for svc, text in surfaces.items() if value in text}
        # The vessel derives sandbox tokens from the master token; holding a derived one is fine too.
        rep.add(f"secrets: {label} only where it belongs", holders <= allowed,
                f"held by {sorted(holders) or 'nobody'}; allowed {sorted(allowed) or 'nobody'}")


def calls(dep, rep, image):
    """Tool calls through each sandbox's /run, sent from the vessel's network namespace."""
    master = dep.token("sandbox-master.token")
    for sb in dep.sandboxes():
        agent = sb[len("sandbox-"):]
        url = f"http://{dep.ip(sb, f'tools-{agent}')}:{SANDBOX_HTTP}"
        tok = dep.token(f"{sb}.token")
        if not tok and master:
            tok = hmac.new(master.encode(), f"sandbox/{agent}".encode(), hashlib.sha256).hexdigest()
        others = [o for o in dep.sandboxes() if o != sb]
        other_tok = dep.token(f"{others[0]}.token") if others else None
        turn_a, turn_b = "probe-" + uuid.uuid4().hex[:12], "probe-" + uuid.uuid4().hex[:12]
        base = {"kind": "run", "url": url, "token": tok, "turn": turn_a}
        gvisor = tier(dep, sb) == "gvisor"
        checks = [
            {"name": f"{sb}: /status reports the gvisor tier, confined calls, no Landlock (gVisor has none)" if gvisor
             else f"{sb}: /status reports confined calls, Landlock ABI >= 6", "kind": "sandbox_status",
             "url": url, "token": tok, "tier": tier(dep, sb)},
            {"name": f"{sb}: /run refuses a call without the token", "kind": "run", "url": url, "turn": turn_a,
             "tool": "list", "arguments": {}, "expect_status": [401, 403]},
        ]
        if other_tok:
            checks.append({"name": f"{sb}: /run refuses another sandbox's token", "kind": "run", "url": url,
                           "token": other_tok, "turn": turn_a, "tool": "list", "arguments": {},
                           "expect_status": [401, 403]})
        bash_on = "bash" in (agent_tools(dep, agent) or ["bash"])
        # sandboxd's nice value and CPU affinity before the calls that try to change them.
        sched_before = None
        for r in run_inside(dep, sb, [{"name": "sched", "kind": "sched", "pid": 1}], image, "exec"):
            try:
                kv = dict(p.split("=", 1) for p in r["detail"].split())
                sched_before = {"nice": int(kv["nice"]), "cpus": kv["cpus"]}
            except (KeyError, ValueError):
                rep.add(f"{sb}: sandboxd's nice value and CPU affinity can be read", False, r["detail"])
        if not bash_on:
            checks.append(dict(base, name=f"{sb}: bash is refused for an agent without it", tool="bash",
                               arguments={"command": "echo should-not-run"}, expect_tool_error=True))
        else:
            def call(name, cmd, want="DENIED", turn=turn_a, gvisor_gap=None, **kw):
                checks.append(dict(base, name=f"{sb} call: {name}", tool="bash", turn=turn,
                                   arguments={"command": cmd}, expect_stdout=want, **kw))
                if gvisor and gvisor_gap:
                    rep.known_gaps[f"{sb} call: {name}"] = "known gap of the gvisor tier: " + gvisor_gap
            py = "python3 -c"
            call("writes and reads its workspace (control)",
                 'echo probe > "$TMPDIR/probe.txt" && cat "$TMPDIR/probe.txt"', want="probe")
            call("cannot open an IPv4 socket",
                 f"{py} 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' 2>/dev/null && echo ALLOWED || echo DENIED")
            call("cannot open an IPv6 socket",
                 f"{py} 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)' 2>/dev/null && echo ALLOWED || echo DENIED")
            call("cannot open a Unix socket (no socket files)",
                 f"{py} 'import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"'\"$TMPDIR\"'/s.sock\")' 2>/dev/null && echo ALLOWED || echo DENIED")
            proc_gap = "gVisor's /proc shows every process of the sandbox, command lines included (docs/security.md)"
            call("cannot see sandboxd's process (pid 1)",
                 "cat /proc/1/cmdline >/dev/null 2>&1 && echo ALLOWED || echo DENIED", gvisor_gap=proc_gap)
            call("sees no process but its own",
                 "n=0; for p in /proc/[0-9]*; do [ -r \"$p/cmdline\" ] && [ -n \"$(tr -d '\\0' < $p/cmdline 2>/dev/null)\" ] && n=$((n+1)); done; [ $n -le 4 ] && echo DENIED || echo ALLOWED:$n",
                 gvisor_gap=proc_gap)
            call("cannot signal sandboxd", "kill -0 1 2>/dev/null && echo ALLOWED || echo DENIED")
            call("cannot write beside its workspace",
                 'd=$(dirname "$TMPDIR"); (echo x > "$d/escape-probe") 2>/dev/null && echo ALLOWED || echo DENIED')
            call("cannot write to the agent package",
                 '(echo x > "$VESSEL_PACKAGE/escape-probe") 2>/dev/null || (echo x > /agent/escape-probe) 2>/dev/null && echo ALLOWED || echo DENIED')
            call("cannot write to /tmp or /dev/shm (shared by every turn)",
                 "for d in /tmp /dev/shm; do [ -d $d ] && (echo x > $d/escape-probe-$$) 2>/dev/null && echo ALLOWED:$d; done; echo DENIED")
            call("cannot write to the root filesystem",
                 "(echo x > /escape-probe) 2>/dev/null || (echo x > /etc/escape-probe) 2>/dev/null && echo ALLOWED || echo DENIED")
            tokfile = next((e.split("=", 1)[1] for e in dep.containers[sb]["Config"].get("Env") or []
                            if e.startswith("VESSEL_SANDBOX_TOKEN_FILE=")), "/run/secrets/" + sb + ".token")
            call("cannot read the sandbox token file",
                 f'cat {tokfile} >/dev/null 2>&1 && echo ALLOWED || echo DENIED; for t in /run/secrets/*; do [ -e "$t" ] && cat "$t" >/dev/null 2>&1 && echo ALLOWED:$t; done; true')
            call("cannot read sandboxd's environment or memory map",
                 "cat /proc/1/environ /proc/1/maps >/dev/null 2>&1 && echo ALLOWED || echo DENIED")
            call("holds no token in its environment",
                 "env | grep -qi 'TOKEN\\|_KEY' && echo ALLOWED || echo DENIED")
            call("cannot start a new session",
                 f"{py} 'import os; os.setsid()' 2>/dev/null && echo ALLOWED || echo DENIED")
            call("cannot start a new process group",
                 f"{py} 'import os; os.setpgid(0, 0)' 2>/dev/null && echo ALLOWED || echo DENIED")
            call("cannot use SysV shared memory",
                 f"{py} 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).shmget(0, 4096, 0o1600) >= 0 else 1)' && echo ALLOWED || echo DENIED")
            call("cannot use POSIX message queues",
                 f"{py} 'import ctypes,sys; l=ctypes.CDLL(None); sys.exit(0 if l.mq_open(b\"/probe\", 0o100|0o2, 0o600, None) >= 0 else 1)' && echo ALLOWED || echo DENIED")
            call("holds at most 4096 open files",
                 '[ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -le 4096 ] && echo DENIED || echo ALLOWED:$(ulimit -n)')
            marker = "31" + uuid.uuid4().hex[:6].translate(str.maketrans("abcdef", "123456"))
            call("background processes end with the call (started)",
                 f"(sleep {marker} &) ; nohup sleep {marker} >/dev/null 2>&1 & echo STARTED", want="STARTED")
            call("reads its own turn's earlier file (control)", 'cat "$TMPDIR/probe.txt"', want="probe")
            call("cannot make a FIFO in its workspace",
                 'mkfifo "$TMPDIR/fifo" 2>/dev/null && echo ALLOWED || echo DENIED')
            turn_disk = command_flag(dep, sb, "--turn-disk")
            if turn_disk:
                turn_c = "probe-" + uuid.uuid4().hex[:12]
                chunk = 4 << 20
                n = turn_disk // chunk + 3
                checks.append(dict(base, name=f"{sb} call: a turn over its disk limit ({turn_disk >> 20} MiB) is stopped",
                                   tool="bash", turn=turn_c, timeout_ms=30000, expect_stopped="disk_limit",
                                   arguments={"command": f'for i in $(seq {n}); do head -c {chunk} /dev/zero > "$TMPDIR/f$i" || break; done; sleep 5; echo not-stopped'}))
                call("a turn over its disk limit has its workspace emptied",
                     # (each call gets a fresh .outbox inside the workspace; the written files must be gone)
                     'n=$(find "$TMPDIR" -name "f[0-9]*" | wc -l); [ "$n" = 0 ] && echo DENIED || echo ALLOWED:$n', turn=turn_c)
            call("cannot read another turn's workspace",
                 f'd=$(dirname "$TMPDIR"); cat "$d/{turn_a}/probe.txt" 2>/dev/null || cat "$d"/*/probe.txt 2>/dev/null && echo ALLOWED || echo DENIED',
                 turn=turn_b)

            # Per-turn identity: every turn's calls run as a uid of their own from this sandbox's range.
            rng = uid_range(dep, sb)
            call("reports its uid (turn a, control)", "id -u", want=None, save="uid-a")
            call("reports its uid (turn b, control)", "id -u", want=None, save="uid-b", turn=turn_b)
            checks.append({"name": f"{sb}: two turns run as different uids from its --uid-range", "kind": "uids",
                           "keys": ["uid-a", "uid-b"], "range": list(rng) if rng else [0, 0]})

            # S2: the workspace's parent (the turn's home) and the scratch root are root's; a call
            # cannot lock its own or every later turn out of them.
            call("its workspace's parent is root's (mode 710) and the scratch root root's (mode 711)",
                 'h=$(dirname "$TMPDIR"); echo "$(stat -c %u:%a "$h") $(stat -c %u:%a "$(dirname "$h")")"',
                 want="0:710 0:711")
            call('cannot chmod 000 "$(dirname "$TMPDIR")"',
                 'chmod 000 "$(dirname "$TMPDIR")" 2>/dev/null && echo ALLOWED || echo DENIED')
            call("cannot chmod 000 the scratch root",
                 'chmod 000 "$(dirname "$(dirname "$TMPDIR")")" 2>/dev/null && echo ALLOWED || echo DENIED', turn=turn_b)
            turn_n = "probe-" + uuid.uuid4().hex[:12]
            call("a new turn still works after calls tried to chmod the scratch root",
                 'echo fresh > "$TMPDIR/f" && cat "$TMPDIR/f"', want="fresh", turn=turn_n)

            # S3: scheduling priority and CPU affinity of sandboxd (pid 1) are out of reach; a
            # PRIO_USER change may only reach the call's own uid (sandboxd's values are re-read after).
            call("cannot renice sandboxd (setpriority PRIO_PROCESS 1)",
                 f"{py} 'import os; os.setpriority(os.PRIO_PROCESS, 1, 19)' 2>/dev/null && echo ALLOWED || echo DENIED")
            call("cannot renice sandboxd (renice -n 19 -p 1)",
                 "command -v renice >/dev/null || { echo NO-RENICE; exit; }; renice -n 19 -p 1 >/dev/null 2>&1 && echo ALLOWED || echo DENIED")
            call("cannot set sandboxd's CPU affinity (taskset -p -c 0 1)",
                 "command -v taskset >/dev/null || { echo NO-TASKSET; exit; }; taskset -p -c 0 1 >/dev/null 2>&1 && echo ALLOWED || echo DENIED")
            call("cannot set sandboxd's CPU affinity (sched_setaffinity 1)",
                 f"{py} 'import os; os.sched_setaffinity(1, {{0}})' 2>/dev/null && echo ALLOWED || echo DENIED")
            # gVisor keeps a nice value per task but schedules nothing by it, so it lets a task lower
            # its own and takes PRIO_USER as a no-op (its sys_thread.go): no effect on another turn.
            nice_gap = "gVisor does not check CAP_SYS_NICE for a task's own nice value, which schedules nothing there"
            call("cannot raise its own priority (nice -5)",
                 f"{py} 'import os; os.nice(-5)' 2>/dev/null && echo ALLOWED || echo DENIED", gvisor_gap=nice_gap)
            prio_user = f"{sb} call: setpriority(PRIO_USER, 0, 19) fails or reaches only its own uid"
            if gvisor:
                rep.known_gaps[prio_user] = "known gap of the gvisor tier: gVisor takes PRIO_USER as a no-op (0: nothing changed)"
            checks.append(dict(base, name=prio_user,
                               tool="bash", expect_any=["19", "DENIED"], arguments={"command":
                               f"{py} 'import os; os.setpriority(os.PRIO_USER, 0, 19); print(os.getpriority(os.PRIO_PROCESS, 0))' 2>/dev/null || echo DENIED"}))

            # S5: knowing another turn's workspace path gives no way in and no way to break it.
            call("prints its workspace path (turn a, control)", 'echo "$TMPDIR"', want=None, save="ws-a")
            for what, cmd in [
                    ("stat", 'stat "{{ws-a}}"'),
                    ("list", 'ls "{{ws-a}}"'),
                    ("stat a file in", 'stat "{{ws-a}}/probe.txt"'),
                    ("chmod", 'chmod 777 "{{ws-a}}"'),
                    ("chmod 000", 'chmod 000 "{{ws-a}}"'),
                    ("chmod a file in", 'chmod 666 "{{ws-a}}/probe.txt"'),
                    ("create a file in", 'echo x > "{{ws-a}}/intruder"')]:
                call(f"cannot {what} another turn's workspace knowing its path",
                     f"({cmd}) >/dev/null 2>&1 && echo ALLOWED || echo DENIED", turn=turn_b)
            call("the other turn's workspace is unchanged (control)",
                 'echo "$(stat -c %a "$TMPDIR") $(cat "$TMPDIR/probe.txt")"; [ -e "$TMPDIR/intruder" ] && echo INTRUDER; true',
                 want="700 probe")
        results = run_inside(dep, "vessel", checks, image, "join")
        for r in results:
            rep.add(r["name"], r["ok"], r["detail"])
        if bash_on and sched_before:
            after = [{"name": f"{sb}: sandboxd's CPU affinity unchanged by the calls", "kind": "sched", "pid": 1,
                      "expect": sched_before, "only": "cpus"}]
            if sched_before["nice"] < 19:
                after.append({"name": f"{sb}: sandboxd's nice value unchanged by the calls", "kind": "sched", "pid": 1,
                              "expect": sched_before, "only": "nice"})
            else:
                # The engine started the container at the lowest priority already: renicing to 19
                # would change nothing, so only the refused calls above show S3 for the nice value.
                print(f"     {sb}: sandboxd already runs at nice 19, so a renice to 19 could not show here; "
                      "its nice value is not compared", flush=True)
            for r in run_inside(dep, sb, after, image, "exec"):
                rep.add(r["name"], r["ok"], r["detail"])
        if bash_on:
            time.sleep(1)
            for r in run_inside(dep, sb, [{"name": f"{sb}: nothing a call started outlives it", "kind": "no_process",
                                           "marker": f"sleep {marker}"}], image, "exec"):
                rep.add(r["name"], r["ok"], r["detail"])


def process_limits(dep, rep, image):
    """S4: while one turn holds many processes, other users' turns, other turns of the same user
    and other agents' turns still fork: each turn's calls have a uid of their own, and the kernel
    counts RLIMIT_NPROC per uid. Kept modest: the holder stays below --call-procs (128) and
    leaves room under its container's pids limit."""
    endpoint = lambda sb: sandbox_endpoint(dep, sb)  # noqa: E731
    tools = sandbox_tools(dep)
    with_bash = [sb for sb in dep.sandboxes() if "bash" in tools[sb]]
    if not with_bash:
        print("     process limits: no sandbox offers bash; S4 not probed", flush=True)
        return
    holder = max(with_bash, key=lambda s: agent_pids(dep, s))
    n = min(100, agent_pids(dep, holder) - 64)
    if n < 16:
        print(f"     process limits: {holder}'s pids limit leaves no room for a holder; S4 not probed", flush=True)
        return
    url, tok = endpoint(holder)
    fork = "for i in 1 2 3 4 5 6 7 8; do true & done; wait && echo FORKED"

    def turn(sb, owner, name, cmd, want, **kw):
        u, t = endpoint(sb)
        return dict({"kind": "run", "url": u, "token": t, "turn": "probe-" + uuid.uuid4().hex[:12], "owner": owner,
                     "tool": "bash", "name": name, "arguments": {"command": cmd}, "expect_stdout": want}, **kw)

    during = [turn(holder, "probe/other-user", f"{holder}: another user's turn forks while one turn holds {n} processes",
                   fork, "FORKED"),
              turn(holder, "probe/holder", f"{holder}: the same user's next turn forks while its other turn holds {n}",
                   fork, "FORKED")]
    for sb in dep.sandboxes():
        if sb == holder:
            continue
        if "bash" in tools[sb]:
            during.append(turn(sb, "probe/holder", f"{sb}: another agent's turn forks while {holder} holds {n}",
                               fork, "FORKED"))
        elif "grep" in tools[sb]:
            # No shell: grep is a confined process too, so it shows the other agent can still start one.
            mount = (command_args(dep, sb, "--mount") or ["/agent"])[0]
            d = turn(sb, "probe/holder", f"{sb}: another agent's turn starts a confined grep while {holder} holds {n}",
                     "", None, expect_exit_in=[0, 1])  # grep ran: a match or none, not an error
            d.update(tool="grep", arguments={"pattern": "frostwing", "path": mount})
            during.append(d)
    # The holder's sleeps outlast any machine's pace; the runner ends its turn once the others ran.
    hold = turn(holder, "probe/holder", "hold", f"for i in $(seq {n}); do sleep 240 & done; echo HELD:$(jobs -p | wc -l); wait",
                f"HELD:{n}", timeout_ms=270000)
    check = {"name": f"{holder}: a turn holds {n} processes (sleeping children) throughout", "kind": "concurrent",
             "hold": hold, "during": during, "settle_s": 3, "release": True}
    for r in run_inside(dep, "vessel", [check], image, "join"):
        rep.add(r["name"], r["ok"], r["detail"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--project", default=os.environ.get("VESSEL_PROJECT", "astralvessel"))
    ap.add_argument("--dir", default=os.getcwd(), help="the folder holding compose.generated.yml and .generated/")
    ap.add_argument("--env-file", default=None, help="the deployment's .env (model key, app keys)")
    ap.add_argument("--image", default=None, help="probe image with python3 (default <project>-sandboxd:local)")
    ap.add_argument("--extra", default="scripted-model", help="comma-separated test-only services to skip")
    a = ap.parse_args()
    dep = Deployment(a.project, os.path.join(a.dir, ".generated"))
    dep.extra = set(filter(None, a.extra.split(",")))
    image = a.image or f"{a.project}-sandboxd:local"
    env = read_env_file(a.env_file or os.path.join(a.dir, ".env"))
    rep = Report()
    missing = [s for s in ("vessel", "egress") if s not in dep.containers] + ([] if dep.sandboxes() else ["sandbox-*"])
    if missing:
        rep.add("deployment: vessel, egress and sandboxes are running", False, f"missing {missing}")
    else:
        hardening(dep, rep)
        identities(dep, rep)
        capabilities(dep, rep, image)
        runtime(dep, rep, image)
        networks(dep, rep, image, env)
        secrets(dep, rep, env)
        calls(dep, rep, image)
        process_limits(dep, rep, image)
        sharedhost.run(dep, rep, image, run_inside, uid_range, lambda sb: sandbox_endpoint(dep, sb), sandbox_tools(dep),
                       lambda sb: agent_pids(dep, sb))
    print(f"{rep.passed} passed, {rep.failed} failed" +
          (f", {rep.gaps} known gaps of the gvisor tier (docs/security.md, \"Isolation tiers\")" if rep.gaps else ""))
    sys.exit(1 if rep.failed or rep.passed == 0 else 0)


if __name__ == "__main__":
    main()
