/*
 * spawn.c - the daemon's side of a git helper (helper.c says why a
 * process and what the protocol is): starting one on a socketpair,
 * reaping it, reading its answer, and the one-shot helpers of a push and
 * an import, run under the app's lock.  The app's long-lived helper is
 * session.c's.  Nothing here runs in the helper, nothing in the helper
 * calls here.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

#define HELPER_EXE     "/proc/self/exe"
#define HELPER_KILL_MS 2000 /* after the timeout, for the reap */

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
	got = gitws_frame_send_json(h.fd, req) < 0 ||
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
