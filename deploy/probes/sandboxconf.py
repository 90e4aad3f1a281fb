"""What verify.py reads about each sandbox of a deployment from its container (docker inspect's
command line and mounts, the generated tokens): its isolation tier and the processes its calls may
hold there (the gvisor tier counts gVisor's own host tasks too), its call uid range, its tools and
its HTTP/JSON endpoint. `dep` is verify.py's Deployment.
"""

import hashlib
import hmac
import os

# A sandbox's ports: gRPC (the vessel's) and the HTTP/JSON gateway the probes' /status and /run use
# (deployer/compose: sandboxPort, SandboxHTTPPort).
SANDBOX_GRPC, SANDBOX_HTTP = 8600, 8601


def agent_pids(dep, svc):
    """The processes a sandbox's calls may hold: the container's pids limit, but in the gvisor tier
    (whose container limit also counts gVisor's own host tasks) twice sandboxd's --owner-procs."""
    owner = command_flag(dep, svc, "--owner-procs")
    if tier(dep, svc) == "gvisor" and owner:
        return 2 * owner
    return dep.containers[svc]["HostConfig"].get("PidsLimit") or 0


def tier(dep, svc):
    """A sandbox's isolation tier, from its --tier flag (sandboxd's default: confined)."""
    args = dep.containers[svc]["Args"] or []
    return next((args[i + 1] for i in range(len(args) - 1) if args[i] == "--tier"), "confined")


def uid_range(dep, svc):
    """(first, count) from a sandbox's --uid-range, or None."""
    args = dep.containers[svc]["Args"] or []
    for i, a in enumerate(args[:-1]):
        if a == "--uid-range":
            first, _, count = args[i + 1].partition(":")
            try:
                return int(first), int(count)
            except ValueError:
                return None
    return None


def sandbox_endpoint(dep, sb):
    """A sandbox's HTTP/JSON address on its tools network and its token."""
    agent, master = sb[len("sandbox-"):], dep.token("sandbox-master.token")
    tok = dep.token(f"{sb}.token")
    if not tok and master:
        tok = hmac.new(master.encode(), f"sandbox/{agent}".encode(), hashlib.sha256).hexdigest()
    return f"http://{dep.ip(sb, f'tools-{agent}')}:{SANDBOX_HTTP}", tok


def sandbox_tools(dep):
    return {sb: agent_tools(dep, sb[len("sandbox-"):]) or ["bash"] for sb in dep.sandboxes()}


def command_args(dep, svc, flag):
    """Every value given to a repeatable flag on a container's command line."""
    args = dep.containers[svc]["Args"] or []
    return [args[i + 1] for i in range(len(args) - 1) if args[i] == flag]


def command_flag(dep, svc, flag):
    """The integer value of a flag on a container's command line, or None."""
    args = dep.containers[svc]["Args"] or []
    for i, a in enumerate(args[:-1]):
        if a == flag:
            try:
                return int(args[i + 1])
            except ValueError:
                return None
    return None


def agent_tools(dep, agent):
    """The agent's enabled built-in tools, from the vessel.toml in the package mounted into its
    sandbox (read on the host)."""
    info = dep.containers.get(f"sandbox-{agent}")
    for m in info["Mounts"] if info else []:
        p = os.path.join(m.get("Source") or "", "vessel.toml")
        if os.path.isfile(p):
            text = open(p).read()
            try:
                import tomllib
                return tomllib.loads(text).get("tools", {}).get("enabled")
            except Exception:
                return None
    return None
