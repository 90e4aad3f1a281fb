// sbx_spawn starts one confined call without a second execve: like
// posix_spawn it clones with CLONE_VM|CLONE_VFORK onto a private stack, and
// the child confines itself with raw system calls before it execs the
// program. The parent thread stays suspended until the child has exec'd or
// exited, and all signals are blocked around the clone so no Go signal
// handler ever runs in the child.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define STACK_SIZE (256 * 1024)

// fail reports the failed step and errno to the parent and exits.
static void fail(struct sbx_spawn *s, int step) {
	int32_t msg[2] = {step, errno};
	ssize_t w = write(s->report_fd, msg, sizeof msg);
	(void)w;
	_exit(127);
}

static int child(void *arg) {
	struct sbx_spawn *s = arg;
	// Default dispositions: the Go runtime's handlers must never run here.
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < _NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
	}
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0) fail(s, SBX_STEP_SIGNALS);

	// Descriptors below 3 (sandboxd started with a closed stdio) would be
	// overwritten by the dup2 calls below: move them out of the way first.
	int *fds[] = {&s->stdin_fd, &s->stdout_fd, &s->stderr_fd, &s->report_fd, &s->ruleset_fd, &s->cgroup_fds[0], &s->cgroup_fds[1]};
	for (int i = 0; i < 7; i++) {
		if (*fds[i] >= 0 && *fds[i] < 3) {
			int fd = fcntl(*fds[i], F_DUPFD_CLOEXEC, 3);
			if (fd < 0) fail(s, SBX_STEP_STDIO);
			*fds[i] = fd;
		}
	}
	// sandboxd makes the group; the call cannot make another.
	if (setpgid(0, 0) < 0) fail(s, SBX_STEP_SETPGID);
	// The turn's cgroup, joined while still root and before the program
	// runs, so everything it starts is counted and killed with the turn.
	for (int i = 0; i < 2; i++) {
		if (s->cgroup_fds[i] >= 0 && write(s->cgroup_fds[i], "0", 1) != 1) fail(s, SBX_STEP_CGROUP);
	}
	if (dup2(s->stdin_fd, 0) < 0 || dup2(s->stdout_fd, 1) < 0 || dup2(s->stderr_fd, 2) < 0) fail(s, SBX_STEP_STDIO);
	if (chdir(s->dir) < 0) fail(s, SBX_STEP_CHDIR);

	// sandboxd's own descriptor bound, read before the call's limits lower
	// it: the close-on-exec fallback below must reach every descriptor
	// sandboxd could have open, not only those under the call's limit.
	struct rlimit own_nofile;
	if (getrlimit(RLIMIT_NOFILE, &own_nofile) < 0) fail(s, SBX_STEP_RLIMIT);
	static const int res[] = {RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_NPROC, RLIMIT_CPU, RLIMIT_CORE, RLIMIT_AS};
	for (int i = 0; i < 6; i++) {
		if (s->limits[i] == SBX_UNSET) continue;
		struct rlimit rl = {.rlim_cur = s->limits[i], .rlim_max = s->limits[i]};
		if (setrlimit(res[i], &rl) < 0) fail(s, SBX_STEP_RLIMIT);
	}
	// Raw system calls: glibc's setuid would try to change every thread of
	// the parent, whose memory this child shares.
	if (s->set_user) {
		if (syscall(SYS_setgroups, 0, NULL) < 0) fail(s, SBX_STEP_USER);
		if (syscall(SYS_setgid, s->gid) < 0) fail(s, SBX_STEP_USER);
		if (syscall(SYS_setuid, s->uid) < 0) fail(s, SBX_STEP_USER);
	}
	// After the user change, which clears it.
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) fail(s, SBX_STEP_PDEATHSIG);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail(s, SBX_STEP_NNP);
	if (s->landlock && syscall(SYS_landlock_restrict_self, s->ruleset_fd, s->ruleset_flags) < 0) fail(s, SBX_STEP_LANDLOCK);
	struct sock_fprog prog = {.len = s->filter_len, .filter = s->filter};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) fail(s, SBX_STEP_SECCOMP);
	// Nothing but stdin, stdout and stderr may reach the program; the report
	// pipe stays usable until execve closes it.
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		// Older gVisor has close_range without CLOSE_RANGE_CLOEXEC: mark
		// each descriptor below sandboxd's own RLIMIT_NOFILE instead.
		if (errno != EINVAL) fail(s, SBX_STEP_CLOSE);
		for (rlim_t fd = 3; fd < own_nofile.rlim_cur && fd < 1048576; fd++) {
			if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0 && errno != EBADF) fail(s, SBX_STEP_CLOSE);
		}
	}
	execve(s->path, s->argv, s->envp);
	fail(s, SBX_STEP_EXEC);
	return 127;
}

// sweep_child runs as the turn's user and sends SIGKILL to every process
// that user has (kill(-1) reaches all the caller may signal but itself).
static int sweep_child(void *arg) {
	const uint32_t *id = arg;
	if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setgid, id[1]) < 0 || syscall(SYS_setuid, id[0]) < 0) _exit(1);
	syscall(SYS_kill, -1, SIGKILL);
	_exit(0);
}

// Child stacks are kept for the next start: a fresh mapping per start cost
// an mmap, page faults on the pages the child touched, and an munmap
// whose TLB shootdown reaches every CPU running one of sandboxd's threads.
// A stack is free again once clone returns (CLONE_VFORK: the child has
// exec'd or exited). What a child left on it is sandboxd's own memory.
#define KEPT_STACKS 16
static pthread_mutex_t stacks_mu = PTHREAD_MUTEX_INITIALIZER;
static void *kept[KEPT_STACKS];
static int nkept;

static void *take_stack(void) {
	void *stack = NULL;
	pthread_mutex_lock(&stacks_mu);
	if (nkept > 0) stack = kept[--nkept];
	pthread_mutex_unlock(&stacks_mu);
	if (stack != NULL) return stack;
	stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	return stack == MAP_FAILED ? NULL : stack;
}

static void give_stack(void *stack) {
	pthread_mutex_lock(&stacks_mu);
	if (nkept < KEPT_STACKS) {
		kept[nkept++] = stack;
		stack = NULL;
	}
	pthread_mutex_unlock(&stacks_mu);
	if (stack != NULL) munmap(stack, STACK_SIZE);
}

int sbx_kill_user(uint32_t uid, uint32_t gid) {
	void *stack = take_stack();
	if (stack == NULL) return -errno;
	uint32_t id[2] = {uid, gid};
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	// CLONE_VFORK: the parent resumes once the child has exited, so the
	// sweep is over when this returns; the caller reaps it.
	int pid = clone(sweep_child, (char *)stack + STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD, id);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	give_stack(stack);
	return pid < 0 ? -err : pid;
}

int sbx_spawn(struct sbx_spawn *s) {
	void *stack = take_stack();
	if (stack == NULL) return -errno;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	// CLONE_PIDFD: sandboxd waits for the exit through its poller instead
	// of a thread blocked in waitid.
	s->pidfd = -1;
	int pid = clone(child, (char *)stack + STACK_SIZE, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, s, &s->pidfd);
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	give_stack(stack);
	return pid < 0 ? -err : pid;
}
