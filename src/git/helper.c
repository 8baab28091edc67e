/*
 * helper.c - every use of a workspace's repository runs in a child
 * process: this same binary run as `sandboxd git-helper`, confined to
 * that one workspace as the sandbox user (confine.c).  Pushes and
 * imports get a helper each; status, diff and commit go to the app's
 * long-lived helper (session.c).
 *
 * Why a process: the daemon runs as root on the host, where every
 * workspace and the daemon's own state are reachable, and the
 * repository is the sandbox's: a symlink anywhere under .git (objects/,
 * refs/heads/, a pack) would make libgit2 read or write whatever it
 * names, and uid 1000 owns every tenant's workspace, so no uid switch
 * can tell them apart.  A process can be given a mount namespace with
 * nothing in it but the one workspace; a thread cannot.  And libgit2 1.5
 * has no timeout of its own: a remote that stalls, or a repository made
 * to be slow, would hold an API thread and the app's lock forever; a
 * child can be killed.
 *
 * Protocol, over a socketpair on the child's stdin and stdout: frames of
 * a 32-bit length (network order) and that many bytes.  The first frame is
 * the request: {"op":"push"|"clone", …} followed by a frame with the
 * token alone (a stored token has no NUL; it never passes through a JSON
 * library), or {"op":"session","key","ws"} followed by any number of
 * {"op":"status"|"diff"|"commit"} frames.  Each answer is one frame:
 * the result, {"not_repo":true} (GITWS_NOT_REPO), or
 * {"error":{status, code, message}}.  The parent holds the app's lock
 * for each request, so operations on one app stay serialized across the
 * processes.  The child's environment is fixed (PATH, HOME=/nonexistent,
 * LC_ALL=C); its stderr is /dev/null; every other descriptor is closed
 * at its start; it dies with the daemon (PR_SET_PDEATHSIG).
 *
 * This file is the helper's side, gitws_helper_main; the daemon's side
 * is spawn.c (start, reap, the one-shot push and import) and session.c
 * (the app's long-lived helper), and both speak the frames of frame.c.
 * Nothing in the helper calls up into the daemon's side.
 *
 * Rejected: fork() without exec in a threaded daemon (locks held by
 * other threads stay held in the child); a thread with pthread_cancel
 * (libgit2 is not cancellation-safe); the git CLI (see remote.c).
 */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

#define HELPER_REQ_MAX   (64u << 10) /* a request frame, the token frame */
#define HELPER_HOSTS_MAX 4096        /* the confined /etc/hosts */

static void
answer_err(const struct err *e)
{
	gitws_frame_send_err(1, e);
}

/* One answer for rc and out (which it frees). */
static void
answer(int rc, struct jv *out, const struct err *e)
{
	if (rc == GITWS_NOT_REPO) {
		jv_free(out);
		out = jv_obj();
		jv_set_bool(out, "not_repo", true);
	}
	if (rc < 0)
		answer_err(e);
	else if (gitws_frame_send_json(1, out) < 0) {
		struct err big = {0};

		ERR_INTERNAL(&big, "git: the answer is larger than %u bytes",
		             GITWS_HELPER_OUT_MAX);
		answer_err(&big);
	}
	jv_free(out);
}

static const char *
opt(const struct jv *req, const char *k)
{
	const char *s = jv_str(jv_get(req, k));

	return s && s[0] ? s : NULL;
}

/*
 * What must come from the host is read before the box closes: libgit2's
 * TLS trust store (loaded at its init), the CA file, the time zone.
 */
static int
prepare(const char *ca_file, struct err *e)
{
	tzset();
	if (gitws_init() < 0)
		return ERR_INTERNAL(e, "libgit2 did not initialize");
	if (ca_file &&
	    git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca_file, NULL) < 0)
		return gitws_lib_err(e, "loading SANDBOXD_GIT_CA_FILE");
	return 0;
}

/* A push or a clone: host check, box with the network, the work. */
static int
remote_op(const struct jv *req, const char *token, struct jv **out,
          struct err *e)
{
	const char *op = opt(req, "op"), *ws = opt(req, "ws");
	struct gitws_remote r = {
	    .url = opt(req, "url"),
	    .cred_host = opt(req, "cred_host"),
	    .username = opt(req, "username"),
	    .token = token[0] ? token : NULL,
	    .allow_private = jv_is_true(jv_get(req, "allow_private")),
	    .allow_loopback = jv_is_true(jv_get(req, "allow_loopback")),
	    .ca_file = opt(req, "ca_file"),
	};
	bool clone = strcmp(op, "clone") == 0;
	char hosts[HELPER_HOSTS_MAX];
	struct gitws_jail j = {.net = true,
	                       .hosts = hosts,
	                       .mem_bytes = (rlim_t)GITWS_HELPER_MEM_MB << 20,
	                       .cpu_s = GITWS_HELPER_CPU_S};

	if (ws == NULL || r.url == NULL || (!clone && strcmp(op, "push")))
		return ERR_INTERNAL(e, "git: a bad helper request");
	if (gitws_host_resolve(clone ? "imported" : "pushed", r.url,
	                       r.allow_private, r.allow_loopback, hosts,
	                       sizeof(hosts), out) == 0)
		return 0;
	if (prepare(r.ca_file, e) < 0 || gitws_confine(ws, &j, e) < 0)
		return -1;
	if (!clone) {
		struct gitws_push p = {.r = r,
		                       .branch = opt(req, "branch"),
		                       .prefix = opt(req, "prefix")};

		if (opt(req, "key") == NULL)
			return ERR_INTERNAL(e, "git: a bad helper request");
		if (p.prefix == NULL)
			p.prefix = "sandboxd/app-";
		return gitws_push_here(opt(req, "key"), GITWS_JAIL_WS, &p, out,
		                       e);
	}
	struct gitws_clone c = {
	    .r = r,
	    .branch = opt(req, "branch"),
	    .max_bytes = (uint64_t)jv_int(jv_get(req, "max_bytes")),
	};
	return gitws_clone_here(GITWS_JAIL_WS "/workspace/app", &c, out, e);
}

/* The app's helper: boxed without a network, then one answer a request. */
static int
session(const struct jv *first, struct buf *b)
{
	const char *key = opt(first, "key"), *ws = opt(first, "ws");
	struct gitws_jail j = {.mem_bytes = (rlim_t)GITWS_HELPER_MEM_MB << 20,
	                       .cpu_s = GITWS_HELPER_CPU_S};
	struct err e = {0};
	char perr[64];

	if (key == NULL || ws == NULL) {
		ERR_INTERNAL(&e, "git: a bad helper request");
		answer_err(&e);
		return 1;
	}
	if (prepare(NULL, &e) < 0 || gitws_confine(ws, &j, &e) < 0) {
		answer_err(&e);
		return 1;
	}
	while (gitws_frame_recv(0, b, -1) == 0) {
		struct jv *req =
		    b->len ? jv_parse(b->data, b->len, 8, perr, sizeof(perr))
		           : NULL;
		struct jv *out = NULL;
		int rc;

		e = (struct err){0};
		if (req == NULL || opt(req, "op") == NULL)
			rc = ERR_INTERNAL(&e, "git: a bad helper request");
		else
			rc = gitws_op_here(key, GITWS_JAIL_WS, opt(req, "op"),
			                   opt(req, "message"),
			                   jv_get(req, "paths"), &out, &e);
		jv_free(req);
		answer(rc, out, &e);
	}
	return 0;
}

int
gitws_helper_main(void)
{
	struct err e = {0};
	struct jv *req = NULL, *out = NULL;
	struct buf b, tok;
	char perr[64];
	const char *op;
	int rc;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		return 1;
	close_range(3, ~0U, 0);
	umask(022);
	signal(SIGPIPE, SIG_IGN);
	buf_init(&b, HELPER_REQ_MAX);
	buf_init(&tok, HELPER_REQ_MAX);
	if (gitws_frame_recv(0, &b, -1) != 0 || b.len == 0 ||
	    (req = jv_parse(b.data, b.len, 8, perr, sizeof(perr))) == NULL ||
	    (op = opt(req, "op")) == NULL) {
		ERR_INTERNAL(&e, "git: the helper got no request");
		answer_err(&e);
		rc = -1;
	} else if (strcmp(op, "session") == 0) {
		rc = session(req, &b) == 0 ? 0 : -1;
	} else if (gitws_frame_recv(0, &tok, -1) != 0) {
		ERR_INTERNAL(&e, "git: the helper got no token frame");
		answer_err(&e);
		rc = -1;
	} else {
		rc = remote_op(req, tok.data ? tok.data : "", &out, &e);
		answer(rc, out, &e);
	}
	if (tok.data)
		explicit_bzero(tok.data, tok.cap);
	buf_release(&tok);
	buf_release(&b);
	jv_free(req);
	return rc < 0 ? 1 : 0;
}
