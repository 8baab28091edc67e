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
 * a 32-bit length (host order) and that many bytes.  The first frame is
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
 * Rejected: fork() without exec in a threaded daemon (locks held by
 * other threads stay held in the child); a thread with pthread_cancel
 * (libgit2 is not cancellation-safe); the git CLI (see remote.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

#define HELPER_EXE       "/proc/self/exe"
#define HELPER_REQ_MAX   (64u << 10) /* a request frame, the token frame */
#define HELPER_KILL_MS   2000        /* after the timeout, for the reap */
#define HELPER_HOSTS_MAX 4096        /* the confined /etc/hosts */

int64_t
gitws_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- frames ------------------------------------------------------------ */

static int
send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1; /* the peer died; its exit says why */
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int
gitws_frame_send(int fd, const void *p, size_t n)
{
	uint32_t len = (uint32_t)n;

	if (n > UINT32_MAX || send_all(fd, &len, sizeof(len)) < 0)
		return -1;
	return send_all(fd, p, n);
}

/* n bytes into p, waiting until deadline (-1: forever): 0, -1, 1 late. */
static int
recv_all(int fd, void *p, size_t n, int64_t deadline)
{
	char *c = p;

	while (n > 0) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int64_t left = deadline < 0 ? -1 : deadline - gitws_now_ms();
		ssize_t r;

		if (deadline >= 0 && left <= 0)
			return 1;
		if (poll(&pf, 1,
		         left < 0 ? -1 : (int)(left > 60000 ? 60000 : left)) <=
		    0)
			continue;
		r = recv(fd, c, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int
gitws_frame_recv(int fd, struct buf *b, int64_t deadline)
{
	char chunk[65536];
	uint32_t len;
	int rc;

	buf_reset(b);
	if ((rc = recv_all(fd, &len, sizeof(len), deadline)) != 0)
		return rc;
	if (len > (b->max ? b->max : BUF_DEFAULT_MAX))
		return -1;
	while (len > 0) {
		size_t n = len < sizeof(chunk) ? len : sizeof(chunk);

		if ((rc = recv_all(fd, chunk, n, deadline)) != 0)
			return rc;
		if (buf_append(b, chunk, n) < 0)
			return -1;
		len -= (uint32_t)n;
	}
	return 0;
}

static int
send_json(int fd, const struct jv *v)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, GITWS_HELPER_OUT_MAX);
	if (jv_dump(v, &b) == 0)
		rc = gitws_frame_send(fd, b.data, b.len);
	buf_release(&b);
	return rc;
}

/* --- parent ------------------------------------------------------------ */

int
gitws_helper_spawn(struct gitws_helper *h, struct err *e)
{
	static char *const argv[] = {"sandboxd", "git-helper", NULL};
	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/nonexistent",
	                             "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int sv[2], rc;

	h->pid = -1;
	h->fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ERR_INTERNAL(e, "git: cannot start the helper: %s",
		                    strerror(errno));
	sigemptyset(&none);
	sigfillset(&def);
	sigdelset(&def, SIGKILL);
	sigdelset(&def, SIGSTOP);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&h->pid, HELPER_EXE, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		h->pid = -1;
		return ERR_INTERNAL(e, "git: cannot start the helper: %s",
		                    strerror(rc));
	}
	h->fd = sv[0];
	return 0;
}

/* Closes the helper's socket and reaps it (killed if it lingers). */
int
gitws_helper_end(struct gitws_helper *h, bool kill_now)
{
	int64_t deadline = gitws_now_ms() + HELPER_KILL_MS;
	int st = 0;

	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	if (h->pid <= 0)
		return 0;
	if (kill_now)
		kill(h->pid, SIGKILL);
	for (;;) {
		pid_t r = waitpid(h->pid, &st, WNOHANG);

		if (r == h->pid || (r < 0 && errno != EINTR))
			break;
		if (gitws_now_ms() > deadline)
			kill(h->pid, SIGKILL);
		usleep(1000);
	}
	h->pid = -1;
	return st;
}

int
gitws_helper_answer(const struct buf *b, struct jv **out, struct err *e)
{
	char perr[64];
	struct jv *v =
	    b->len ? jv_parse(b->data, b->len, 16, perr, sizeof(perr)) : NULL;
	struct jv *ev;

	if (v == NULL || jv_type(v) != JV_OBJECT) {
		jv_free(v);
		return ERR_INTERNAL(e, "git: the helper's answer is not JSON");
	}
	if (jv_is_true(jv_get(v, "not_repo"))) {
		jv_free(v);
		return GITWS_NOT_REPO;
	}
	if ((ev = jv_get(v, "error")) != NULL) {
		struct jv *st = jv_get(ev, "status"),
		          *code = jv_get(ev, "code");
		struct jv *msg = jv_get(ev, "message");
		int s = (int)jv_int(st);

		err_set(e, s >= 400 && s < 600 ? s : 500,
		        jv_str(code) ? jv_str(code) : "internal", "%s",
		        jv_str(msg) ? jv_str(msg) : "git: the helper failed");
		jv_free(v);
		return -1;
	}
	*out = v;
	return 0;
}

/* The error for a helper that ended without an answer. */
int
gitws_helper_died(int status, struct err *e)
{
	if (WIFSIGNALED(status))
		return ERR_INTERNAL(
		    e, "git: the helper died (signal %d%s)", WTERMSIG(status),
		    WTERMSIG(status) == SIGXCPU ? ", its CPU time limit" : "");
	return ERR_INTERNAL(e, "git: the helper gave no answer (exit %d)",
	                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/*
 * Runs req (+ token) in a helper of its own under key's lock; past
 * timeout_s the answer is {<flag>:false, reason:"timeout"}.
 */
static int
helper_run(const char *key, struct jv *req, const struct gitws_remote *r,
           const char *flag, struct jv **out, struct err *e)
{
	const char *token = r->token ? r->token : "";
	int timeout_s = r->timeout_s > 0 ? r->timeout_s : 300;
	struct gitws_helper h;
	struct buf ans;
	int rc = 0, got, status;

	*out = NULL;
	buf_init(&ans, GITWS_HELPER_OUT_MAX);
	gitws_lock(key);
	if (gitws_helper_spawn(&h, e) < 0) {
		gitws_unlock(key);
		buf_release(&ans);
		return -1;
	}
	got = send_json(h.fd, req) < 0 ||
	              gitws_frame_send(h.fd, token, strlen(token)) < 0
	          ? -1
	          : 0;
	if (got == 0)
		got = gitws_frame_recv(
		    h.fd, &ans, gitws_now_ms() + (int64_t)timeout_s * 1000);
	status = gitws_helper_end(&h, got != 0);
	gitws_unlock(key);
	if (got == 1) {
		char msg[128];

		snprintf(msg, sizeof(msg),
		         "the remote did not finish within %d s", timeout_s);
		*out = gitws_failure(flag, "timeout", msg, NULL);
	} else if (got < 0) {
		rc = gitws_helper_died(status, e);
	} else {
		rc = gitws_helper_answer(&ans, out, e);
	}
	buf_release(&ans);
	return rc;
}

static void
set_opt(struct jv *o, const char *k, const char *v)
{
	if (v && v[0])
		jv_set_str(o, k, v);
}

/* The request's fields that say where and how (not the token). */
static struct jv *
remote_request(const char *op, const char *ws, const struct gitws_remote *r)
{
	struct jv *req = jv_obj();

	jv_set_str(req, "op", op);
	jv_set_str(req, "ws", ws);
	jv_set_str(req, "url", r->url);
	set_opt(req, "cred_host", r->cred_host);
	set_opt(req, "username", r->username);
	jv_set_bool(req, "allow_private", r->allow_private);
	jv_set_bool(req, "allow_loopback", r->allow_loopback);
	set_opt(req, "ca_file", r->ca_file);
	return req;
}

int
gitws_push(const char *key, const char *ws, const struct gitws_push *p,
           struct jv **out, struct err *e)
{
	struct jv *req = remote_request("push", ws, &p->r);
	int rc;

	jv_set_str(req, "key", key);
	set_opt(req, "branch", p->branch);
	set_opt(req, "prefix", p->prefix);
	rc = helper_run(key, req, &p->r, "pushed", out, e);
	jv_free(req);
	return rc;
}

int
gitws_clone(const char *key, const char *ws, const struct gitws_clone *c,
            struct jv **out, struct err *e)
{
	struct jv *req = remote_request("clone", ws, &c->r);
	int rc;

	set_opt(req, "branch", c->branch);
	jv_set_int(req, "max_bytes", (int64_t)c->max_bytes);
	rc = helper_run(key, req, &c->r, "imported", out, e);
	jv_free(req);
	return rc;
}

/* --- child ------------------------------------------------------------- */

static void
answer_err(const struct err *e)
{
	struct jv *o = jv_obj(), *ev = jv_obj();

	jv_set_int(ev, "status", e->status ? e->status : 500);
	jv_set_str(ev, "code", e->code[0] ? e->code : "internal");
	jv_set_str(ev, "message", e->msg);
	jv_set(o, "error", ev);
	send_json(1, o);
	jv_free(o);
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
	else if (send_json(1, out) < 0) {
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
