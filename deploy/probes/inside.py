"""Probe runner executed inside the deployment's containers (or in a probe container sharing a
target's network and pid namespaces). It reads a JSON list of checks on stdin and prints one JSON
object per check: {"name": ..., "ok": true|false, "detail": "..."}.

Only the standard library is used, so it runs with the sandbox image's python3. Every network
check targets an address the caller took from `docker inspect` of the project's own containers
(or loopback); nothing here picks an address by itself.
"""

import base64
import errno
import json
import os
import socket
import sys
import urllib.error
import urllib.request

TIMEOUT = 2.0


def proc_status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k == field:
                return v.strip()
    return None


def check_status(c):
    got = proc_status(c.get("pid", 1), c["field"])
    return got == c["expect"], f"{c['field']}={got}"


def check_gvisor_kernel(c):
    """The kernel answering is gVisor's Sentry: its fixed build line in /proc/version."""
    with open("/proc/version") as f:
        v = f.read().strip()
    return "#1 SMP Sun Jan 10 15:06:54 PST 2016" in v, v[:100]


# Capability numbers (linux/capability.h), to print a mask as names.
CAP_NAMES = ["CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
             "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
             "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
             "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
             "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
             "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE"]


def cap_names(mask):
    return [CAP_NAMES[i] if i < len(CAP_NAMES) else f"cap{i}" for i in range(64) if mask >> i & 1]


def check_caps(c):
    """The capability sets of a process: effective, permitted and bounding must be exactly the
    names in `expect` (none for every container but a sandbox), inheritable and ambient empty."""
    pid = c.get("pid", 1)
    want = 0
    for n in c["expect"]:
        want |= 1 << CAP_NAMES.index(n)
    got, ok = {}, True
    for field in ("CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb"):
        v = proc_status(pid, field)
        got[field] = int(v, 16) if v else -1
        ok = ok and got[field] == (want if field in ("CapEff", "CapPrm", "CapBnd") else 0)
    detail = "; ".join(f"{f}={v:016x} [{' '.join(cap_names(v)) or '-'}]" if v >= 0 else f"{f}=?" for f, v in got.items())
    return ok, detail


def sched_of(pid):
    """(nice, CPU affinity list) of a process, read from /proc as any user may."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    nice = int(fields[16])  # field 19 of stat; fields[0] is field 3 (state)
    cpus = proc_status(pid, "Cpus_allowed_list")
    if cpus is None:
        # gVisor's /proc/<pid>/status has no Cpus_allowed_list: ask the kernel.
        try:
            cpus = ",".join(str(n) for n in sorted(os.sched_getaffinity(pid)))
        except OSError as e:
            cpus = "unreadable: " + e.strerror
    return nice, cpus


def check_sched(c):
    """Nice value and CPU affinity of a process; with `expect` (and `only`: "nice" or "cpus"), they
    must be unchanged."""
    nice, cpus = sched_of(c.get("pid", 1))
    detail = f"nice={nice} cpus={cpus}"
    if "expect" in c:
        got = {"nice": nice, "cpus": cpus}
        keys = [c["only"]] if c.get("only") else ["nice", "cpus"]
        ok = all(got[k] == c["expect"][k] for k in keys)
        return ok, detail + f" (before: nice={c['expect']['nice']} cpus={c['expect']['cpus']})"
    return True, detail


def check_rootfs_ro(c):
    pid = c.get("pid", 1)
    with open(f"/proc/{pid}/mountinfo") as f:
        for line in f:
            parts = line.split()
            # fields: id parent major:minor root mountpoint options ...
            if parts[4] == "/":
                opts = parts[5].split(",")
                return "ro" in opts, f"/ mounted {parts[5]}"
    return False, "no / mount found"


def hex_ip(h):
    """Turns /proc/net/route's little-endian hex address into dotted form."""
    return ".".join(str(int(h[i:i + 2], 16)) for i in (6, 4, 2, 0))


def routes():
    """Returns (IPv4 default gateways, IPv6 default route present, readable IPv4 table)."""
    gws, v6, table = [], False, []
    with open("/proc/net/route") as f:
        next(f)
        for line in f:
            p = line.split()
            table.append(f"{p[0]} {hex_ip(p[1])}/{bin(int(p[7], 16)).count('1')} via {hex_ip(p[2])}")
            if p[1] == "00000000" and p[7] == "00000000":
                gws.append(hex_ip(p[2]))
    try:
        with open("/proc/net/ipv6_route") as f:
            for line in f:
                p = line.split()
                if p[0] == "0" * 32 and p[1] == "00" and p[9] != "lo":
                    v6 = True
    except FileNotFoundError:
        pass
    return gws, v6, table


def check_default_route(c):
    """expect true: a default route through a gateway not in `internal_gateways` (a way out).
    expect false: no way out: no default route, or one only to the gateway of an internal network,
    which Docker engines before 25.0 add and whose bridge drops every forwarded packet."""
    gws, v6, table = routes()
    internal = set(c.get("internal_gateways", []))
    out = [g for g in gws if g not in internal] + (["ipv6"] if v6 else [])
    detail = f"routes: {'; '.join(table) or 'none'}"
    if gws and not out:
        detail += " (default only via an internal network's gateway)"
    return bool(out) == c["expect"], detail


def connect(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(c_timeout())
    try:
        s.connect((host, port))
        return None
    except OSError as e:
        if isinstance(e, socket.timeout):
            return "timeout"
        return errno.errorcode.get(e.errno, str(e))
    finally:
        s.close()


def c_timeout():
    return TIMEOUT


def check_tcp_blocked(c):
    err = connect(c["host"], c["port"])
    return err is not None, f"{c['host']}:{c['port']} -> {err or 'connected'}"


def check_tcp_open(c):
    err = connect(c["host"], c["port"])
    return err is None, f"{c['host']}:{c['port']} -> {err or 'connected'}"


def http(method, url, headers=None, body=None, timeout=TIMEOUT * 3):
    req = urllib.request.Request(url, method=method, data=body, headers=headers or {})
    # Never let an environment proxy setting redirect a probe.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def check_http(c):
    body = c.get("body")
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    try:
        status, hdrs, data = http(c.get("method", "GET"), c["url"], c.get("headers"), body)
    except OSError as e:
        return False, f"{c['url']} -> {e}"
    ok = status in c["expect"]
    if ok and "body_contains" in c:
        ok = c["body_contains"].encode() in data
    return ok, f"{c.get('method', 'GET')} {c['url']} -> {status} {data[:160]!r}"


def raw_proxy(proxy_host, proxy_port, request):
    """Sends one raw request to the proxy; returns (status, headers text)."""
    s = socket.create_connection((proxy_host, proxy_port), timeout=TIMEOUT * 3)
    try:
        s.sendall(request.encode())
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head = data.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
    first = head.split("\r\n", 1)[0]
    try:
        status = int(first.split()[1])
    except (IndexError, ValueError):
        status = -1
    return status, head


def check_proxy(c):
    """A proxy request the egress must refuse: by default 403 with X-Egress-Denied; "expect" names
    another status (407 for a client without credentials), "reason" the X-Egress-Denied value, and
    "auth" ("name:token") the Proxy-Authorization Basic credentials sent."""
    auth = ""
    if c.get("auth"):
        auth = "Proxy-Authorization: Basic " + base64.b64encode(c["auth"].encode()).decode() + "\r\n"
    if c["method"] == "CONNECT":
        req = f"CONNECT {c['target']} HTTP/1.1\r\nHost: {c['target']}\r\n{auth}\r\n"
    else:
        req = f"GET {c['target']} HTTP/1.1\r\nHost: probe\r\n{auth}Connection: close\r\n\r\n"
    try:
        status, head = raw_proxy(c["proxy_host"], c["proxy_port"], req)
    except OSError as e:
        return False, f"proxy unreachable: {e}"
    reason = ""
    for line in head.split("\r\n"):
        if line.lower().startswith("x-egress-denied:"):
            reason = line.split(":", 1)[1].strip()
    want = c.get("expect", 403)
    ok = status == want and reason != "" and c.get("reason", reason) == reason
    return ok, f"{c['method']} {c['target']} -> {status} denied={reason or '-'}"


def check_read_fails(c):
    try:
        with open(c["path"], "rb") as f:
            f.read(1)
        return False, f"read {c['path']} succeeded"
    except OSError as e:
        return True, f"read {c['path']} -> {errno.errorcode.get(e.errno, e)}"


def check_stat(c):
    """The path (not followed if a symlink) is a directory or file of owner `uid` with permission
    bits `mode` (an octal string, exact, setuid/setgid/sticky included), or when `mode` is not given,
    with none of the bits of `no_bits` (an octal string; "022": nobody but the owner may write), or with
    the sticky bit when `sticky_ok` is set."""
    st = os.lstat(c["path"])
    perm = st.st_mode & 0o7777
    detail = f"{c['path']}: uid {st.st_uid}, mode {perm:04o}"
    ok = st.st_uid == c.get("uid", st.st_uid)
    if "mode" in c:
        ok = ok and perm == int(c["mode"], 8)
    if "no_bits" in c:
        # sticky_ok: with the sticky bit others may add entries but never rename or remove the owner's.
        ok = ok and (perm & int(c["no_bits"], 8) == 0 or (c.get("sticky_ok") and perm & 0o1000 != 0))
    return ok, detail


def check_write_fails(c):
    path = c["path"]
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(path)
        return False, f"created {path}"
    except OSError as e:
        return True, f"create {path} -> {errno.errorcode.get(e.errno, e)}"


# stdout of earlier calls that set "save": later calls' commands may name it as {{save-name}}.
SAVED = {}


def substitute(args):
    text = json.dumps(args)
    for k, v in SAVED.items():
        text = text.replace("{{" + k + "}}", v)
    return json.loads(text)


def run_call(c):
    """POSTs one tool call to a sandbox's /run (HTTP/JSON) and gathers its streamed events."""
    req = {
        "turn_id": c["turn"],
        "owner": c.get("owner", "probe/probe"),
        "call_id": c.get("call_id", "probe"),
        "tool": c["tool"],
        "arguments_json": json.dumps(substitute(c["arguments"])),
        "timeout_ms": c.get("timeout_ms", 20000),
    }
    headers = {"Content-Type": "application/json"}
    if c.get("token"):
        headers["Authorization"] = "Bearer " + c["token"]
    # A call may stay silent until it ends: wait for its own timeout, not the probes' default.
    status, _, data = http("POST", c["url"].rstrip("/") + "/run", headers, json.dumps(req).encode(),
                           timeout=max(TIMEOUT * 3, req["timeout_ms"] / 1000 + 5))
    out, err, exit_ev = b"", b"", None
    if status == 200:
        # grpc-gateway streams newline-delimited {"result": {...}} objects.
        for line in data.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            ev = ev.get("result", ev)
            if "stdout" in ev:
                out += base64.b64decode(ev["stdout"])
            if "stderr" in ev:
                err += base64.b64decode(ev["stderr"])
            if "exit" in ev:
                exit_ev = ev["exit"]
    return status, out.decode(errors="replace"), err.decode(errors="replace"), exit_ev, data


def check_run(c):
    try:
        status, out, err, exit_ev, raw = run_call(c)
    except OSError as e:
        return False, f"/run failed: {e}"
    if "expect_status" in c:
        return status in c["expect_status"], f"/run -> {status} {raw[:160]!r}"
    if status != 200:
        return False, f"/run -> {status} {raw[:200]!r}"
    if "expect_stopped" in c:
        got = (exit_ev or {}).get("stopped", "")
        return got == c["expect_stopped"], f"stopped={got!r} exit={exit_ev}"
    if c.get("expect_tool_error"):
        msg = (exit_ev or {}).get("error", "")
        return bool(msg), f"tool error {msg!r}"
    text = out.strip()
    if "expect_exit_in" in c:
        ev = exit_ev or {}
        code = int(ev.get("code", 0) or 0)  # protobuf JSON leaves a zero code out
        ok = code in c["expect_exit_in"] and not ev.get("error") and not ev.get("stopped") and exit_ev is not None
        return ok, f"exit={exit_ev} stdout={text[-120:]!r}"
    if c.get("save"):
        SAVED[c["save"]] = text
    want = c.get("expect_stdout")
    ok = (text == want) if want is not None else True
    if "expect_any" in c:
        ok = ok and text in c["expect_any"]
    if "expect_contains" in c:
        ok = ok and c["expect_contains"] in out
    detail = f"stdout={text[-200:]!r}"
    if not ok and exit_ev:
        detail += " exit=" + json.dumps({k: v for k, v in exit_ev.items() if v not in ("", False)})
    if err.strip():
        detail += f" stderr={err.strip()[-160:]!r}"
    if exit_ev and exit_ev.get("error"):
        detail += f" error={exit_ev['error']!r}"
    return ok, detail


def check_uids(c):
    """Values saved from `id -u` in several turns: all different, each inside [first, first+count)."""
    first, count = c["range"]
    vals = [SAVED.get(k, "") for k in c["keys"]]
    try:
        uids = [int(v) for v in vals]
    except ValueError:
        return False, f"not uids: {vals}"
    inside = all(first <= u < first + count for u in uids)
    distinct = len(set(uids)) == len(uids)
    return len(uids) >= 2 and inside and distinct, f"uids {uids} in {first}..{first + count - 1}: {inside}; all different: {distinct}"


def check_concurrent(c):
    """Runs the `hold` call (which keeps many processes alive) in the background and, while it
    holds them, each call in `during` one after another. Returns one result per call."""
    import threading
    import time
    held = {}
    t = threading.Thread(target=lambda: held.update(r=run_one(c["hold"])))
    t.start()
    time.sleep(c.get("settle_s", 2))
    results = [(d["name"],) + run_one(d) for d in c["during"]]
    still = t.is_alive()
    released = ""
    if c.get("release"):
        # The holder sleeps far longer than the others could take on a busy machine; ending its
        # turn releases it once they ran, so "throughout" does not depend on the machine's speed.
        # A failed release is not fatal (the holder then ends by its own timeout), but its detail
        # says so: a slow holder is then explained.
        h = c["hold"]
        headers = {"Content-Type": "application/json", "Authorization": "Bearer " + h.get("token", "")}
        try:
            status, _, data = http("POST", h["url"].rstrip("/") + "/end-turn", headers,
                                   json.dumps({"turn_id": h["turn"]}).encode())
            if not 200 <= status < 300:
                released = f" (end-turn release answered {status} {data[:120]!r})"
        except OSError as e:
            released = f" (end-turn release failed: {e})"
    t.join()
    ok, detail = held.get("r", (False, "holder did not finish"))
    detail += released
    results.insert(0, (c["name"], ok and still, detail + ("" if still else " (the holder ended before the others ran)")))
    return results


def check_hostile(c):
    """Runs the hostile owner's `holds` side by side and, while they run, each call in `during`
    (other owners) one after another. One result per `during` call, and first one saying whether
    the hostile owner was held to its cap: one of its calls stopped for its process limit, or all
    its turns together holding no more than `owner_cap` processes."""
    import re
    import threading
    import time
    outs = [None] * len(c["holds"])

    def hold(i, h):
        try:
            outs[i] = run_call(h)
        except OSError as e:
            outs[i] = e
    ts = [threading.Thread(target=hold, args=(i, h)) for i, h in enumerate(c["holds"])]
    for t in ts:
        t.start()
    time.sleep(c.get("settle_s", 3))
    results = [(d["name"],) + run_one(d) for d in c["during"]]
    alive = sum(t.is_alive() for t in ts)
    for t in ts:
        t.join()
    total, stopped, notes = 0, False, []
    for o in outs:
        if not isinstance(o, tuple):
            notes.append(f"/run failed: {o}")
            continue
        status, out, _, ex, _ = o
        ex = ex or {}
        m = re.search(r"HELD:(\d+)", out)
        total += int(m.group(1)) if m else 0
        stopped = stopped or ex.get("stopped") == "process_limit"
        notes.append(f"/run {status}: {out.strip()[-60:]!r} stopped={ex.get('stopped', '')!r} "
                     f"error={ex.get('error', '')[:120]!r}")
    ok = stopped or total + len(outs) <= c["owner_cap"]
    results.insert(0, (c["name"], ok, f"{total} sleeps held; {alive} of {len(ts)} turns running when the "
                       f"others ran; " + "; ".join(notes)))
    return results


def check_sandbox_status(c):
    headers = {"Authorization": "Bearer " + c["token"]}
    try:
        status, _, data = http("GET", c["url"].rstrip("/") + "/status", headers)
    except OSError as e:
        return False, f"/status failed: {e}"
    if status != 200:
        return False, f"/status -> {status}"
    st = json.loads(data)
    abi = int(st.get("landlockAbi", st.get("landlock_abi", 0)) or 0)
    tier = st.get("tier") or "confined"
    want = c.get("tier", "confined")
    # The gvisor tier has no Landlock (gVisor answers ENOSYS): ABI 0 there, at least min_abi on the host kernel.
    ok = st.get("confined") is True and tier == want and (abi == 0 if want == "gvisor" else abi >= c.get("min_abi", 6))
    return ok, f"tier={tier} confined={st.get('confined')} landlock_abi={abi} fingerprint={str(st.get('fingerprint'))[:19]}"


def check_no_process(c):
    """No process whose command line contains the marker (run in the sandbox's pid namespace)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if c["marker"] in cmd and "inside.py" not in cmd:
            found.append(f"{d}:{cmd.strip()}")
    return not found, f"left running: {found}" if found else "none left running"


def a2a_send(url, key, user, text):
    body = {"jsonrpc": "2.0", "id": "e2e-1", "method": "SendMessage", "params": {"message": {
        "messageId": "e2e-" + os.urandom(6).hex(), "role": "ROLE_USER", "parts": [{"text": text}]}}}
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "X-Vessel-User": user,
               "Authorization": "Bearer " + key}
    status, _, data = http("POST", url, headers, json.dumps(body).encode())
    try:
        doc = json.loads(data)
    except ValueError:
        doc = {}
    return status, doc, data


def check_a2a_send(c):
    """A SendMessage turn: either served (HTTP 200 with a task) or refused with status and code."""
    status, doc, data = a2a_send(c["url"], c["key"], c.get("user", "e2e"), c.get("text", "hello"))
    if "expect_code" in c:
        code = (doc.get("error") or {}).get("code")
        return status == c["expect_status"] and code == c["expect_code"], f"-> {status} code={code}"
    res = doc.get("result") or {}
    task = res.get("task", res)
    state = (task.get("status") or {}).get("state")
    want = c.get("expect_state", "TASK_STATE_COMPLETED")
    return status == 200 and state == want, f"-> {status} state={state} task_id={task.get('id')} {data[:160]!r}"


def check_a2a_get(c):
    """GetTask for a task the same app and user started earlier."""
    body = {"jsonrpc": "2.0", "id": "e2e-get", "method": "GetTask", "params": {"id": c["task_id"]}}
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0", "X-Vessel-User": c.get("user", "e2e"),
               "Authorization": "Bearer " + c["key"]}
    status, _, data = http("POST", c["url"], headers, json.dumps(body).encode())
    try:
        doc = json.loads(data)
    except ValueError:
        doc = {}
    res = doc.get("result") or {}
    task = res.get("task", res)
    state = (task.get("status") or {}).get("state")
    want = c.get("expect_state", "TASK_STATE_COMPLETED")
    return status == 200 and task.get("id") == c["task_id"] and state == want, f"-> {status} state={state} {data[:160]!r}"


def check_wait_health(c):
    """Polls /health until it matches the expected agents map, up to wait_s seconds."""
    import time
    deadline = time.time() + c.get("wait_s", 120)
    last = ""
    while True:
        try:
            status, _, data = http("GET", c["url"])
            doc = json.loads(data) if status == 200 else {}
            agents = doc.get("agents") or {}
            last = f"{status} {data[:200]!r}"
            if status == 200 and all(agents.get(k) == v for k, v in c["expect"].items()):
                return True, last
        except (OSError, ValueError) as e:
            last = str(e)
        if time.time() > deadline:
            return False, "last answer " + last
        time.sleep(1)


CHECKS = {
    "a2a_send": check_a2a_send,
    "a2a_get": check_a2a_get,
    "wait_health": check_wait_health,
    "status": check_status,
    "gvisor_kernel": check_gvisor_kernel,
    "rootfs_ro": check_rootfs_ro,
    "default_route": check_default_route,
    "tcp_blocked": check_tcp_blocked,
    "tcp_open": check_tcp_open,
    "http": check_http,
    "proxy": check_proxy,
    "read_fails": check_read_fails,
    "write_fails": check_write_fails,
    "stat": check_stat,
    "run": check_run,
    "sandbox_status": check_sandbox_status,
    "caps": check_caps,
    "sched": check_sched,
    "uids": check_uids,
    "no_process": check_no_process,
}


def run_one(c):
    try:
        return CHECKS[c["kind"]](c)
    except Exception as e:  # a probe that cannot run counts as failed, with the reason
        return False, f"probe error: {type(e).__name__}: {e}"


def main():
    from concurrent.futures import ThreadPoolExecutor
    checks = json.load(sys.stdin)
    # Connection attempts that must fail mostly wait out their timeout, so they run side by side;
    # everything else runs in order (tool calls of one turn depend on each other).
    with ThreadPoolExecutor(max_workers=16) as pool:
        early = {i: pool.submit(run_one, c) for i, c in enumerate(checks) if c["kind"] in ("tcp_blocked", "tcp_open")}
        for i, c in enumerate(checks):
            if c["kind"] in ("concurrent", "hostile"):
                for name, ok, detail in (check_concurrent if c["kind"] == "concurrent" else check_hostile)(c):
                    print(json.dumps({"name": name, "ok": bool(ok), "detail": detail}), flush=True)
                continue
            ok, detail = early[i].result() if i in early else run_one(c)
            print(json.dumps({"name": c["name"], "ok": bool(ok), "detail": detail}), flush=True)


if __name__ == "__main__":
    main()
