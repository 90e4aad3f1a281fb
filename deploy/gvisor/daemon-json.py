#!/usr/bin/env python3
"""daemon-json.py PATH BINARY RUNTIME_ARGS_JSON: registers BINARY as dockerd's runtime `runsc`
in the daemon.json at PATH, keeping every other key. Prints "changed" or "unchanged".

The file keeps its mode and owner; a symlinked daemon.json is followed, so the file it points to
is the one edited (the link stays). A `runtimes.runsc` entry that points elsewhere is replaced,
with a line on stderr that says what it was. The write is atomic: a temporary file beside the real
one, then a rename. deploy/gvisor-runtime.sh runs it; deployer/compose tests it on temporary files.
"""
import json
import os
import sys
import tempfile


def main(argv):
    if len(argv) != 4:
        print("usage: daemon-json.py PATH BINARY RUNTIME_ARGS_JSON", file=sys.stderr)
        return 2
    path, binary, args = os.path.realpath(argv[1]), argv[2], json.loads(argv[3])
    conf, st = {}, None
    if os.path.exists(path):
        st = os.stat(path)
        with open(path) as f:
            text = f.read()
        try:
            conf = json.loads(text) if text.strip() else {}
        except ValueError as e:
            print(f"daemon-json: {path} is not valid JSON ({e}): fix it by hand, it is left as it is", file=sys.stderr)
            return 1
    if not isinstance(conf, dict):
        print(f"daemon-json: {path} is not a JSON object", file=sys.stderr)
        return 1
    want = {"path": binary, "runtimeArgs": args}
    runtimes = conf.setdefault("runtimes", {})
    if not isinstance(runtimes, dict):
        print(f"daemon-json: {path}: \"runtimes\" is {json.dumps(runtimes)}, not a JSON object: "
              "fix it by hand (dockerd wants an object of runtimes), it is left as it is", file=sys.stderr)
        return 1
    old = runtimes.get("runsc")
    if old == want:
        print("unchanged")
        return 0
    if old is not None:
        print(f"daemon-json: replacing runtimes.runsc in {path}: was {json.dumps(old)}", file=sys.stderr)
    runtimes["runsc"] = want
    fd, tmp = tempfile.mkstemp(prefix=".daemon.json.", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(conf, f, indent=2)
            f.write("\n")
        if st is None:
            os.chmod(tmp, 0o644)
        else:
            os.chmod(tmp, st.st_mode & 0o7777)
            os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    print("changed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
