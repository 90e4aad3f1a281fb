// See spawn.c.
#include <linux/filter.h>
#include <stdint.h>

#define SBX_UNSET (~(uint64_t)0)

enum {
	SBX_STEP_SIGNALS = 1,
	SBX_STEP_SETPGID,
	SBX_STEP_STDIO,
	SBX_STEP_CHDIR,
	SBX_STEP_RLIMIT,
	SBX_STEP_USER,
	SBX_STEP_PDEATHSIG,
	SBX_STEP_NNP,
	SBX_STEP_LANDLOCK,
	SBX_STEP_SECCOMP,
	SBX_STEP_CLOSE,
	SBX_STEP_EXEC,
	SBX_STEP_CGROUP,
};

struct sbx_spawn {
	const char *path;
	char **argv;
	char **envp;
	const char *dir;
	int stdin_fd, stdout_fd, stderr_fd, report_fd;
	uint64_t limits[6]; // nofile, fsize, nproc, cpu, core, as; SBX_UNSET leaves one alone
	int set_user;
	uint32_t uid, gid;
	int landlock; // 0 only in the gvisor tier, whose kernel has no Landlock
	int ruleset_fd;
	uint32_t ruleset_flags;
	struct sock_filter *filter;
	unsigned short filter_len;
	int cgroup_fds[2]; // cgroup.procs files the child joins ("0") before it drops root; -1: none
	int pidfd; // out: a pidfd of the child (close-on-exec)
};

int sbx_spawn(struct sbx_spawn *s);

// sbx_kill_user kills every process of uid; returns the sweeper's pid
// (to reap) or -errno.
int sbx_kill_user(uint32_t uid, uint32_t gid);
