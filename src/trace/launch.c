/*
 * launch.c - start the command under ptrace.
 *
 * The child waits on a pipe until the tracer has seized it, installs the
 * seccomp filter (so its memory syscalls, and those of every descendant,
 * stop it), then execs.  If the exec fails, the child writes errno to a
 * close-on-exec pipe and exits 127; the tracer reads it when the child
 * dies before exec.  PTRACE_O_EXITKILL (Linux >= 3.8) makes sure no
 * filtered child outlives memtap: without a tracer its memory syscalls
 * would fail with ENOSYS.  Without EXITKILL there is no filter (main.c
 * chooses PTRACE_SYSCALL): a command memtap leaves runs on untraced.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include "linux/features.h"
#include "probe/sandbox.h"
#include "util/error.h"
#include "trace/loop.h"
#include "util/xmalloc.h"

extern char **environ;

/* Find cmd as execvp would; exits with 127/126 and a message if not. */
static char *resolve_command(const char *cmd)
{
	struct stat st;
	const char *path;
	char *found = NULL;
	int saw_noexec = 0;

	if (!*cmd)
		error_msg_and_die_code(EXIT_NOTFOUND, "cannot run '': empty command name");
	if (strchr(cmd, '/')) {
		if (stat(cmd, &st) < 0)
			error_msg_and_die_code(EXIT_NOTFOUND, "cannot run '%s': %s", cmd,
					       strerror(errno));
		if (S_ISDIR(st.st_mode))
			error_msg_and_die_code(EXIT_NOEXEC, "cannot run '%s': it is a directory", cmd);
		if (access(cmd, X_OK) < 0)
			error_msg_and_die_code(EXIT_NOEXEC, "cannot run '%s': not executable (%s)",
					       cmd, strerror(errno));
		return xstrdup(cmd);
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		char *cand = xasprintf("%.*s%s%s", (int)len, path, len ? "/" : "", cmd);

		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0) {
				found = cand;
				break;
			}
			saw_noexec = 1;
		}
		free(cand);
		path = end ? end + 1 : path + len;
	}
	if (!found && saw_noexec)
		error_msg_and_die_code(EXIT_NOEXEC, "cannot run '%s': not executable", cmd);
	if (!found)
		error_msg_and_die_code(EXIT_NOTFOUND, "cannot run '%s': command not found in PATH", cmd);
	return found;
}

/* The permitted capabilities that the file capabilities of path grant. */
static uint64_t file_caps(const char *path)
{
	struct vfs_cap_data caps;
	ssize_t n = getxattr(path, "security.capability", &caps, sizeof(caps));

	if (n < (ssize_t)XATTR_CAPS_SZ_1)
		return 0;
	if (n < (ssize_t)XATTR_CAPS_SZ_2)
		return caps.data[0].permitted;
	return caps.data[0].permitted | (uint64_t)caps.data[1].permitted << 32;
}

/*
 * A traced exec ignores set-user-ID and set-group-ID bits and file
 * capabilities unless the tracer holds CAP_SYS_PTRACE, and always under
 * no_new_privs, which the seccomp filter needs without CAP_SYS_ADMIN.
 * Say so when path would have gained privileges.
 */
static void warn_lost_privileges(const char *path, int use_seccomp)
{
	uint64_t eff = 0, prm = 0, gained;
	struct statvfs sv;
	struct stat st;

	if (stat(path, &st) < 0 || (statvfs(path, &sv) == 0 && (sv.f_flag & ST_NOSUID)))
		return;
	procfs_status_hex(getpid(), "CapEff", &eff);
	procfs_status_hex(getpid(), "CapPrm", &prm);
	if ((eff & (1ULL << CAP_SYS_PTRACE)) && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 &&
	    !(use_seccomp && !(eff & (1ULL << CAP_SYS_ADMIN))))
		return;		/* the kernel grants them */
	gained = file_caps(path) & ~prm;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		warn_msg("'%s' is set-user-ID (uid %ld): traced, it runs without that user's "
			 "privileges", path, (long)st.st_uid);
	else if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
		 st.st_gid != getegid())
		warn_msg("'%s' is set-group-ID (gid %ld): traced, it runs without that group's "
			 "privileges", path, (long)st.st_gid);
	else if (gained)
		warn_msg("'%s' has file capabilities (0x%llx) memtap lacks: traced, it runs "
			 "without them", path, (unsigned long long)gained);
}

static void __attribute__((noreturn)) child_fail(int fd)
{
	int err = errno;

	if (write(fd, &err, sizeof(err)) < 0) {
		/* the tracer will see exit status 127 */
	}
	_exit(127);
}

/*
 * How many seccomp filters thread tid has, as memtap knows: 1, memtap's,
 * in a process of the command that added none (seccomp and prctl stop
 * it: syscalls.c); else -1.  For kernels that do not say (sandbox.h).
 */
static long launch_filter_count(pid_t tid)
{
	struct thread *tcp = procs_find(&tr.procs, tid);

	return tcp && tcp->proc->own_filter_only ? 1 : -1;
}

pid_t launch_command(struct procs *pt, char **argv, int use_seccomp, int *exec_err_fd)
{
	char *path = resolve_command(argv[0]);
	int go[2], errp[2];
	pid_t pid;
	char c = 0;

	warn_lost_privileges(path, use_seccomp);

	if (use_seccomp)
		seccomp_filter_note_own(sink_events_to_trace());
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
		perror_msg_and_die("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		perror_msg_and_die("fork");
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the tracer is gone */
		close(go[0]);
		/* memtap ignores these in launch mode; the command must not */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (use_seccomp && seccomp_filter_install(sink_events_to_trace()) < 0)
			child_fail(errp[1]);
		execve(path, argv, environ);
		child_fail(errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	unsigned long options = tracer_ptrace_options();

	if (feature_has(F_EXITKILL))
		options |= PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, pid, 0L, options) < 0) {
		int err = errno;

		if (err == EINVAL && (options & PTRACE_O_EXITKILL))
			feature_lost(F_EXITKILL, err);
		/* with a filter, a command memtap no longer kills may not run */
		if (err != EINVAL || use_seccomp || !(options & PTRACE_O_EXITKILL) ||
		    ptrace(PTRACE_SEIZE, pid, 0L, options & ~PTRACE_O_EXITKILL) < 0) {
			kill(pid, SIGKILL);
			errno = err;
			perror_msg_and_die("ptrace(PTRACE_SEIZE, %d) of the command", pid);
		}
	}
	struct proc *p = procs_new_proc(pt, pid, 0);

	p->own_filter_only = use_seccomp;
	if (use_seccomp)
		sandbox_count_hint(launch_filter_count);

	snprintf(p->rec->comm, sizeof(p->rec->comm), "%s", path_base_name(path));
	struct thread *tcp = procs_new_thread(pt, pid, p);

	memcpy(tcp->comm, p->rec->comm, sizeof(tcp->comm));
	*exec_err_fd = errp[0];
	if (write(go[1], &c, 1) != 1)
		perror_msg_and_die("write");
	close(go[1]);
	free(path);
	return pid;
}
