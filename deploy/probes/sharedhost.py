"""Issue 31 probes, run by verify.py: a deployment's call uids are reserved on the whole host, and
one owner of an agent cannot take what its sandbox needs for other owners' calls.

  * reservation: each sandbox's --uid-range has its file in /run/astralvessel/uids, held under
    flock by the running sandboxd;
  * second sandboxd: another sandboxd with the same range (run in the sandbox container with the
    shared reservation folder, as a second deployment's would) refuses to start and names the holder;
  * hostile owner: two turns of one owner each parking sleeps (together as many processes as the
    sandbox container may hold) leave another owner's calls working, and the owner is held to its cap.

Each probe is bounded (about 10 s or less); every address is the project's own (via verify.py).
"""

import subprocess
import uuid

LOCK_DIR = "/run/astralvessel/uids"
SANDBOXD = "/usr/local/bin/sandboxd"

# Run as root in the sandbox container (the folder is root's, 0700): is the range's file there,
# and does a live process hold its flock? A probe that gets the lock lets it go at once.
HELD_SCRIPT = """
import errno, fcntl, os, sys
p = os.path.join(sys.argv[1], sys.argv[2])
if not os.path.isfile(p):
    print("MISSING; the folder holds", sorted(os.listdir(sys.argv[1])) if os.path.isdir(sys.argv[1]) else "nothing")
    sys.exit()
with open(p, "rb") as f:
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        print("HELD" if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN) else "ERROR " + str(e))
        sys.exit()
    fcntl.flock(f, fcntl.LOCK_UN)
    print("NOT-HELD")
"""

# One hostile turn: fork N children that exec sleep, report how many it got (and why it stopped
# short), then stay as long as they do. Python, so a refused fork answers at once (bash retries).
HOLD_SCRIPT = """python3 -c '
import os, time
k, why = 0, ""
for i in range({n}):
    try:
        pid = os.fork()
    except OSError as e:
        why = " REFUSED " + e.strerror
        break
    if pid == 0:
        try:
            os.execvp("sleep", ["sleep", "{s}"])
        finally:
            os._exit(1)
    k += 1
print("HELD:%d%s" % (k, why), flush=True)
time.sleep({s})
'"""


def docker_exec_root(cid, args, timeout):
    p = subprocess.run(["docker", "exec", "--user", "0:0", cid, *args], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, (p.stdout + p.stderr).strip()


def reservations(dep, rep, uid_range):
    """Item 1: every sandbox's range is reserved host-wide, and a second sandboxd is refused."""
    for sb in dep.sandboxes():
        rng = uid_range(dep, sb)
        if not rng:
            rep.add(f"{sb}: its uid range is reserved in {LOCK_DIR}", False, "no --uid-range")
            continue
        cid = dep.containers[sb]["Id"]
        name = f"range-{rng[0]}-{rng[1]}"
        try:
            _, out = docker_exec_root(cid, ["python3", "-c", HELD_SCRIPT, LOCK_DIR, name], 15)
        except subprocess.TimeoutExpired:
            out = "timed out"
        rep.add(f"{sb}: its uid range {rng[0]}:{rng[1]} is reserved in {LOCK_DIR} and held by a live sandboxd",
                out == "HELD", f"{name}: {out[-200:]}")

        # A second sandboxd with this range: the same flags (so it passes every check before the
        # reservation), its own listeners. It must refuse; if it started, timeout ends it.
        args = [a for a in dep.containers[sb]["Args"] or []]
        cmd = ["timeout", "-s", "KILL", "15", SANDBOXD, *args, "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"]
        try:
            code, out = docker_exec_root(cid, cmd, 25)
        except subprocess.TimeoutExpired:
            code, out = -1, "timed out"
        refused = code not in (0, 137, -1) and "overlaps" in out and "which pid" in out
        rep.add(f"{sb}: a second sandboxd with its uid range refuses to start, naming the holder", refused,
                f"exit {code}: {out[-300:]}")


def hostile_owner(dep, rep, image, run_inside, endpoint, tools, pids_of):
    """Items 2 and 3: one owner's two turns parking sleeps (as many as the container may hold,
    together) leave another owner's calls of the same agent working; the owner is held to its cap
    (its processes stay within half the container's limit, or its largest call is stopped)."""
    with_bash = [sb for sb in dep.sandboxes() if "bash" in tools[sb]]
    if not with_bash:
        rep.add("hostile owner: a sandbox offers bash to probe with", False, "no sandbox offers bash")
        return
    sb = max(with_bash, key=pids_of)
    pids = pids_of(sb)
    n, secs = pids // 2 - 2, 8
    if n < 16:
        rep.add(f"{sb}: pids limit leaves room for a hostile owner probe", False, f"pids_limit {pids}")
        return
    url, tok = endpoint(sb)

    def call(owner, name, cmd, want=None, **kw):
        return dict({"kind": "run", "url": url, "token": tok, "turn": "probe-" + uuid.uuid4().hex[:12],
                     "owner": owner, "tool": "bash", "name": name, "arguments": {"command": cmd},
                     "expect_stdout": want}, **kw)

    hold = HOLD_SCRIPT.format(n=n, s=secs)
    holds = [call("probe/hostile", "hold", hold, timeout_ms=20000) for _ in range(2)]
    during = [call("probe/bystander", f"{sb}: another owner's call forks while one owner's two turns park {n} sleeps each",
                   "for i in 1 2 3 4 5 6 7 8; do true & done; wait && echo FORKED", "FORKED"),
              call("probe/bystander", f"{sb}: another owner's call writes its workspace meanwhile",
                   'echo fine > "$TMPDIR/f" && cat "$TMPDIR/f"', "fine")]
    check = {"name": f"{sb}: one owner's two turns are held to its cap ({pids // 2} of the container's {pids} processes)",
             "kind": "hostile", "holds": holds, "during": during, "settle_s": 3, "owner_cap": pids // 2}
    for r in run_inside(dep, "vessel", [check], image, "join"):
        rep.add(r["name"], r["ok"], r["detail"])


def run(dep, rep, image, run_inside, uid_range, endpoint, tools, pids_of):
    """pids_of(sandbox): the processes its calls may hold (verify.agent_pids)."""
    reservations(dep, rep, uid_range)
    hostile_owner(dep, rep, image, run_inside, endpoint, tools, pids_of)
