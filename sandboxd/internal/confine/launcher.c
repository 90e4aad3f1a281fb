// The launcher: when sandboxd is started as "sandboxd __launch", this
// constructor runs before the Go runtime starts, confines the process and
// execs the call's program. Doing it here, not in Go, saves the Go runtime
// and package start-up (over 100 ms on a loaded machine) on every call.
//
// It reads a binary spec (encoded by spec.go) from fd 3:
//   "SBXL1\0", u64 nofile, fsize, nproc, cpu,
//   then string lists, each a u32 count and NUL-terminated strings:
//   path (1 string), argv, env, read-only trees, read-write trees, devices,
//   then u32 length and the seccomp BPF program.
// and, in order: closes every other descriptor, sets rlimits, no_new_privs, a Landlock domain (ABI >= 6:
// filesystem, TCP, signal and abstract-socket scoping), the seccomp filter,
// then execve. Any failure writes one line to stderr and exits 127.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

// Our own copies: distribution headers may predate ABI 6.
struct sbx_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct sbx_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define SBX_CREATE_RULESET_VERSION (1U << 0)
#define SBX_RULE_PATH_BENEATH 1

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)
#define FS_TRUNCATE (1ULL << 14)
// Everything ABI 6 knows (execute .. ioctl_dev): unlisted rights are denied,
// among them make_sock, make_fifo, make_char, make_block.
#define FS_ALL_V6 ((1ULL << 16) - 1)
#define NET_ALL_V6 ((1ULL << 2) - 1)
#define SCOPE_ALL_V6 ((1ULL << 2) - 1)

#define FS_READ_ONLY (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
#define FS_WORKSPACE                                                                                \
	(FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE |     \
	 FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SYM | FS_REFER | FS_TRUNCATE)
#define FS_DEVICE (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE)
// The rights that apply to files; a rule on a file may carry only these.
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | (1ULL << 15))

#define SPEC_MAX (4 << 20)

static void die(const char *what, int err) {
	char buf[512];
	int n = snprintf(buf, sizeof buf, "sandboxd launcher: %s: %s\n", what, err ? strerror(err) : "bad spec");
	if (n > 0) {
		ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
	_exit(127);
}

struct reader {
	const char *p, *end;
};

static uint64_t get_u64(struct reader *r) {
	uint64_t v;
	if (r->end - r->p < 8) die("spec", 0);
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

static uint32_t get_u32(struct reader *r) {
	uint32_t v;
	if (r->end - r->p < 4) die("spec", 0);
	memcpy(&v, r->p, 4);
	r->p += 4;
	return v;
}

// get_strings returns a NULL-terminated array of the next list's strings.
static char **get_strings(struct reader *r) {
	uint32_t n = get_u32(r);
	if (n > 65536) die("spec", 0);
	char **out = calloc((size_t)n + 1, sizeof(char *));
	if (!out) die("allocating", ENOMEM);
	for (uint32_t i = 0; i < n; i++) {
		const char *nul = memchr(r->p, 0, (size_t)(r->end - r->p));
		if (!nul) die("spec", 0);
		out[i] = (char *)r->p;
		r->p = nul + 1;
	}
	return out;
}

static void add_rules(int ruleset, char **paths, uint64_t access) {
	for (; *paths; paths++) {
		int fd = open(*paths, O_PATH | O_CLOEXEC);
		if (fd < 0) die(*paths, errno);
		struct stat st;
		if (fstat(fd, &st) < 0) die(*paths, errno);
		struct sbx_path_beneath rule = {
		    .allowed_access = S_ISDIR(st.st_mode) ? access : (access & FS_FILE_RIGHTS),
		    .parent_fd = fd,
		};
		if (syscall(SYS_landlock_add_rule, ruleset, SBX_RULE_PATH_BENEATH, &rule, 0) < 0) die(*paths, errno);
		close(fd);
	}
}

static void set_limit(int res, uint64_t v, const char *what) {
	if (v == 0) return;
	struct rlimit rl = {.rlim_cur = v, .rlim_max = v};
	if (setrlimit(res, &rl) < 0) die(what, errno);
}

__attribute__((constructor)) static void sandboxd_launch(int argc, char **argv, char **envp) {
	(void)envp;
	if (argc < 2 || strcmp(argv[1], "__launch") != 0) return;

	char *buf = malloc(SPEC_MAX);
	if (!buf) die("allocating", ENOMEM);
	size_t len = 0;
	for (;;) {
		ssize_t n = read(3, buf + len, SPEC_MAX - len);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0) die("reading spec on fd 3", errno);
		if (n == 0) break;
		len += (size_t)n;
		if (len == SPEC_MAX) die("spec too large", E2BIG);
	}
	// Nothing but stdin, stdout and stderr may reach the call, even a
	// descriptor some library in sandboxd left without close-on-exec.
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0) {
		for (int fd = 3; fd < 4096; fd++) close(fd);
	}
	struct reader r = {buf, buf + len};
	if (len < 6 || memcmp(buf, "SBXL1", 6) != 0) die("spec", 0);
	r.p += 6;
	uint64_t nofile = get_u64(&r), fsize = get_u64(&r), nproc = get_u64(&r), cpu = get_u64(&r);
	char **path = get_strings(&r);
	char **args = get_strings(&r);
	char **env = get_strings(&r);
	char **ro = get_strings(&r);
	char **rw = get_strings(&r);
	char **dev = get_strings(&r);
	uint32_t bpf_len = get_u32(&r);
	if (!path[0] || !args[0] || bpf_len == 0 || bpf_len % sizeof(struct sock_filter) != 0 ||
	    (size_t)(r.end - r.p) < bpf_len)
		die("spec", 0);
	// Copy the program out so its instructions are aligned.
	struct sock_filter *insns = malloc(bpf_len);
	if (!insns) die("allocating", ENOMEM);
	memcpy(insns, r.p, bpf_len);

	set_limit(RLIMIT_NOFILE, nofile, "setting the open file limit");
	set_limit(RLIMIT_FSIZE, fsize, "setting the file size limit");
	set_limit(RLIMIT_NPROC, nproc, "setting the process limit");
	set_limit(RLIMIT_CPU, cpu, "setting the CPU time limit");
	struct rlimit zero = {0, 0};
	if (setrlimit(RLIMIT_CORE, &zero) < 0) die("setting the core size limit", errno);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("setting no_new_privs", errno);

	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, SBX_CREATE_RULESET_VERSION);
	if (abi < 0) die("probing Landlock", errno);
	if (abi < 6) die("Landlock ABI 6 or newer is required", ENOTSUP);
	struct sbx_ruleset_attr attr = {
	    .handled_access_fs = FS_ALL_V6,
	    .handled_access_net = NET_ALL_V6,
	    .scoped = SCOPE_ALL_V6,
	};
	int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (ruleset < 0) die("creating the Landlock ruleset", errno);
	add_rules(ruleset, ro, FS_READ_ONLY);
	add_rules(ruleset, rw, FS_WORKSPACE);
	add_rules(ruleset, dev, FS_DEVICE);
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0) die("enforcing Landlock", errno);
	close(ruleset);

	struct sock_fprog prog = {.len = (unsigned short)(bpf_len / sizeof(struct sock_filter)), .filter = insns};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) die("installing the seccomp filter", errno);

	execve(path[0], args, env);
	die(path[0], errno);
}
