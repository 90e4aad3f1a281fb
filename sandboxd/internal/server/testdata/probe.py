# probe.py ACTION [ARG]: makes one real attempt from inside a confined call
# and prints "BLOCKED errno=N ..." when it fails or "ALLOWED" when it works.
import ctypes
import os
import resource
import signal
import socket
import stat
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def check(ret):
    if ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret


def sysc(nr, *args):
    return check(libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args]))


arg = sys.argv[2] if len(sys.argv) > 2 else ""


def connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(("127.0.0.1", int(arg)))


def shm_open():
    from multiprocessing import shared_memory
    shared_memory.SharedMemory(name="probe", create=True, size=4096)


def nofile():
    fds = []
    try:
        while True:
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        print("opened", len(fds) + 3, "then", e)
        raise


def deleted_open():
    import time
    f = open("held", "wb")
    f.write(b"x" * int(arg))
    f.flush()
    os.unlink("held")
    print("holding", flush=True)
    time.sleep(30)


# x86-64 syscall numbers for the calls Python has no wrapper for.
NR = {"add_key": 248, "keyctl": 250, "bpf": 321, "perf_event_open": 298, "io_uring_setup": 425,
      "mount": 165, "process_vm_readv": 310, "kexec_load": 246, "init_module": 175, "pidfd_open": 434,
      "userfaultfd": 323, "unshare": 272, "setns": 308, "clone3": 435}

probes = {
    "inet": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM),
    "inet6": lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM),
    "udp": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
    "unix": lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM),
    "netlink": lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0),
    "packet": lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0),
    "socketpair": lambda: socket.socketpair(),
    "connect": connect,
    "socketfile": lambda: os.mknod("sock", stat.S_IFSOCK | 0o600),
    "fifo": lambda: os.mkfifo("fifo"),
    "shmget": lambda: check(libc.shmget(0, 4096, 0o1000 | 0o600)),
    "shm_open": shm_open,
    "devshm": lambda: os.open("/dev/shm/probe", os.O_CREAT | os.O_RDWR, 0o600),
    "msgget": lambda: check(libc.msgget(0, 0o1000 | 0o600)),
    "semget": lambda: check(libc.semget(0, 1, 0o1000 | 0o600)),
    "mq_open": lambda: check(libc.mq_open(b"/probe", os.O_CREAT | os.O_RDWR, 0o600, None)),
    "kill": lambda: os.kill(int(arg), signal.SIGKILL),
    "kill0": lambda: os.kill(int(arg), 0),
    "ptrace": lambda: check(libc.ptrace(16, int(arg), None, None)),
    "procstatus": lambda: open("/proc/%s/status" % arg).read(),
    "listproc": lambda: os.listdir("/proc"),
    "getpgid": lambda: os.getpgid(int(arg)),
    "getsid": lambda: os.getsid(int(arg)),
    "setsid": lambda: os.setsid(),
    "setpgid": lambda: os.setpgid(0, 0),
    "write": lambda: open(arg, "w").write("x"),
    "read": lambda: open(arg).read(),
    "listdir": lambda: os.listdir(arg),
    "nofile": nofile,
    "raise_nofile": lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192)),
    "deleted_open": deleted_open,
    "unshare": lambda: sysc(NR["unshare"], 0x40000000),
    "unshare_user": lambda: sysc(NR["unshare"], 0x10000000),
    "setns": lambda: sysc(NR["setns"], 0, 0),
    "clone3": lambda: sysc(NR["clone3"], 0, 0),
    "add_key": lambda: sysc(NR["add_key"], 0, 0, 0, 0, 0),
    "keyctl": lambda: sysc(NR["keyctl"], 0, 0),
    "bpf": lambda: sysc(NR["bpf"], 0, 0, 0),
    "perf_event_open": lambda: sysc(NR["perf_event_open"], 0, 0, -1, -1, 0),
    "io_uring_setup": lambda: sysc(NR["io_uring_setup"], 1, 0),
    "mount": lambda: sysc(NR["mount"], 0, 0, 0, 0, 0),
    "process_vm_readv": lambda: sysc(NR["process_vm_readv"], int(arg), 0, 0, 0, 0, 0),
    "pidfd_open": lambda: sysc(NR["pidfd_open"], int(arg), 0),
    "userfaultfd": lambda: sysc(NR["userfaultfd"], 0),
    "renice_pid": lambda: os.setpriority(os.PRIO_PROCESS, int(arg), 19),
    "renice_user": lambda: os.setpriority(os.PRIO_USER, int(arg), 19),
    "renice_own_user": lambda: os.setpriority(os.PRIO_USER, 0, 19),
    "pin": lambda: os.sched_setaffinity(int(arg), {0}),
    "sched_other": lambda: os.sched_setscheduler(int(arg), os.SCHED_IDLE, os.sched_param(0)),
    "ioprio_other": lambda: sysc(251, 1, int(arg), (3 << 13)),
    "prlimit_other": lambda: resource.prlimit(int(arg), resource.RLIMIT_NOFILE, (1, 1)),
    "sysinfo": lambda: check(libc.sysinfo(ctypes.create_string_buffer(128))),
    "stat": lambda: os.stat(arg),
    "chmod000": lambda: os.chmod(arg, 0),
    "alloc": lambda: bytearray(int(arg)),
}

try:
    probes[sys.argv[1]]()
except OSError as e:
    print("BLOCKED errno=%s %s" % (e.errno, e))
except Exception as e:  # noqa: BLE001 - any failure counts as blocked
    print("BLOCKED %r" % (e,))
else:
    print("ALLOWED")
