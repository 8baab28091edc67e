/*
 * confine.c - the helper's box: after this, the only files the process
 * can reach are one workspace's, as the sandbox user.
 *
 * How, in the helper (started as root by the daemon):
 *  - a mount namespace of its own (CLONE_NEWNS), every mount made
 *    private so nothing propagates back to the host;
 *  - a small tmpfs as the new root, holding /ws, a bind of the
 *    workspace directory (not recursive: nothing mounted below it comes
 *    along; nosuid, nodev, noexec), and for a push or an import /etc/hosts
 *    with the addresses the host check resolved and approved (so the
 *    name cannot resolve to another address at connect time either) and
 *    an /etc/nsswitch.conf that says to look there;
 *  - pivot_root into that tmpfs, the old root detached: no path, however
 *    many `..` or absolute symlinks it has, names a file outside /ws any
 *    more.  The tmpfs is remounted read-only first;
 *  - local work (status, diff, commit) also gets a network namespace of
 *    its own with no interface but a downed loopback; push and import
 *    keep the host's, they talk to a remote;
 *  - then uid/gid 1000 with no supplementary groups (setuid(0) must fail
 *    afterwards), no new privileges, no core files, and limits on its
 *    address space (RLIMIT_AS) and CPU time (RLIMIT_CPU); libgit2's
 *    pack window cache is bounded to fit.  The wall-clock timeout is the
 *    parent's (spawn.c, session.c).
 *
 * The workspace is opened with O_PATH|O_NOFOLLOW and bound through
 * /proc/self/fd, so the bind is of the directory checked, not of a path
 * resolved again.  The sandbox can rename what is inside its workspace
 * but not the workspace itself (its container's mount root, in a
 * root-owned directory), so nothing can be moved out from under the box.
 * Whatever libgit2 must read from the host (its TLS trust store, the
 * time zone) is loaded before this runs.
 *
 * Rejected: chroot alone (a root process can leave it; with the host's
 * mounts still in the namespace a moved directory can leak `..`); a
 * user namespace (we are root already, and it would map uid 1000 to
 * something else on disk).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ws/workspace.h"
#include "git/internal.h"

#define JAIL_DIR "/tmp" /* the tmpfs is mounted here, then made root */

static int
write_file(const char *path, const char *text, struct err *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	size_t n = strlen(text);
	ssize_t w;

	if (fd < 0)
		return ERR_INTERNAL(e, "git: confining: %s: %s", path,
		                    strerror(errno));
	w = write(fd, text, n);
	close(fd);
	if (w != (ssize_t)n)
		return ERR_INTERNAL(e, "git: confining: writing %s", path);
	return 0;
}

/* The tmpfs root with /ws bound to the workspace (fd wsfd). */
static int
build_root(int wsfd, const struct gitws_jail *j, struct err *e)
{
	const unsigned long ro = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	char src[64];

	if (mount("none", JAIL_DIR, "tmpfs", ro, "size=64k,mode=0755") < 0)
		return ERR_INTERNAL(e, "git: confining: tmpfs: %s",
		                    strerror(errno));
	if (mkdir(JAIL_DIR "/ws", 0755) < 0 ||
	    (j->hosts && mkdir(JAIL_DIR "/etc", 0755) < 0))
		return ERR_INTERNAL(e, "git: confining: mkdir: %s",
		                    strerror(errno));
	if (j->hosts && (write_file(JAIL_DIR "/etc/hosts", j->hosts, e) < 0 ||
	                 write_file(JAIL_DIR "/etc/nsswitch.conf",
	                            "hosts: files\n", e) < 0))
		return -1;
	snprintf(src, sizeof(src), "/proc/self/fd/%d", wsfd);
	if (mount(src, JAIL_DIR "/ws", NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, JAIL_DIR "/ws", NULL, MS_REMOUNT | MS_BIND | ro, NULL) <
	        0)
		return ERR_INTERNAL(e,
		                    "git: confining: binding the workspace: %s",
		                    strerror(errno));
	if (mount(NULL, JAIL_DIR, NULL, MS_REMOUNT | MS_RDONLY | ro, NULL) < 0)
		return ERR_INTERNAL(e, "git: confining: read-only root: %s",
		                    strerror(errno));
	return 0;
}

static int
enter_root(struct err *e)
{
	if (chdir(JAIL_DIR) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return ERR_INTERNAL(e, "git: confining: pivot_root: %s",
		                    strerror(errno));
	return 0;
}

static int
become_sandbox_user(struct err *e)
{
	if (setgroups(0, NULL) < 0 || setgid(WORKSPACE_GID) < 0 ||
	    setuid(WORKSPACE_UID) < 0 || setuid(0) == 0)
		return ERR_INTERNAL(e,
		                    "git: the helper cannot become the sandbox "
		                    "user: %s",
		                    strerror(errno));
	return 0;
}

/*
 * AddressSanitizer reserves terabytes of shadow address space when the
 * process starts, so a sanitizer build cannot live under RLIMIT_AS: there
 * (and only there) the address-space cap is left out; CPU time and the
 * wall-clock timeout still hold.
 */
#if defined(__SANITIZE_ADDRESS__)
#define CONFINE_CAP_AS 0
#else
#define CONFINE_CAP_AS 1
#endif

static int
set_limits(const struct gitws_jail *j, struct err *e)
{
	struct rlimit as = {j->mem_bytes, j->mem_bytes};
	struct rlimit cpu = {j->cpu_s, j->cpu_s};
	struct rlimit core = {0, 0};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    setrlimit(RLIMIT_CORE, &core) < 0 ||
	    (CONFINE_CAP_AS && j->mem_bytes && setrlimit(RLIMIT_AS, &as) < 0) ||
	    (j->cpu_s && setrlimit(RLIMIT_CPU, &cpu) < 0))
		return ERR_INTERNAL(e, "git: confining: limits: %s",
		                    strerror(errno));
	/* libgit2 maps pack windows up to 8 GiB by default: stay under AS */
	if (j->mem_bytes) {
		git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT,
		                 (size_t)(j->mem_bytes / 4));
		git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE,
		                 (size_t)(j->mem_bytes / 32));
	}
	return 0;
}

int
gitws_confine(const char *ws, const struct gitws_jail *j, struct err *e)
{
	struct stat st;
	int wsfd, rc;

	if (geteuid() != 0)
		return ERR_INTERNAL(e, "git: the helper must start as root to "
		                       "confine itself to the workspace");
	if (unshare(CLONE_NEWNS | (j->net ? 0 : CLONE_NEWNET)) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return ERR_INTERNAL(e, "git: confining: unshare: %s",
		                    strerror(errno));
	/* opened in the new namespace: a bind's source must be in it */
	wsfd = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0 || fstat(wsfd, &st) < 0) {
		rc = errno;
		if (wsfd >= 0)
			close(wsfd);
		return ERR_INTERNAL(e, "git: cannot open the workspace: %s",
		                    strerror(rc));
	}
	rc = build_root(wsfd, j, e);
	close(wsfd);
	if (rc < 0 || enter_root(e) < 0 || become_sandbox_user(e) < 0 ||
	    set_limits(j, e) < 0)
		return -1;
	return 0;
}
