/*
 * git.c - status, diff and commit of a workspace's app repository, the
 * daemon's side: the API's calls become requests to the app's confined
 * helper (session.c), which runs them (ops.c); nothing here opens a
 * path.
 *
 * The module's files split by process role, so their calls go one way:
 * the daemon's side (git.c → session.c → spawn.c) and the helper's
 * (helper.c → ops.c, remote.c, clone.c, hostcheck.c, confine.c; ops.c →
 * stage.c), over open.c, auth.c and the frames (frame.c) both use.
 * Rejected: keeping the helper's side of status, diff and commit here,
 * which made this file and the helper call each other.
 *
 * The *_at calls reach a workspace on another node: the same request
 * frame goes down a stream the caller's dial opens (a node agent's `git`
 * op, whose relay.c hands it to a helper there) and one answer frame
 * comes back, so a remote answer is the helper's own JSON, as a local
 * one.
 */
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

/* req over a stream at->dial opens, under key's lock; as run(). */
static int
remote_call(const char *key, const struct gitws_at *at, const struct jv *req,
            struct jv **out, struct err *e)
{
	int64_t deadline =
	    gitws_now_ms() +
	    (int64_t)(GITWS_LOCAL_TIMEOUT_S + GITWS_REMOTE_SLACK_S) * 1000;
	struct buf ans;
	int fd = -1, rc;

	buf_init(&ans, GITWS_HELPER_OUT_MAX);
	gitws_lock(key);
	rc = at->dial(at->arg, &fd, e);
	if (rc == 0 && (gitws_frame_send_json(fd, req) < 0 ||
	                gitws_frame_recv(fd, &ans, deadline) != 0))
		rc = err_set(e, 503, "node_down",
		             "git: the sandbox's node gave no answer");
	gitws_unlock(key);
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		rc = gitws_helper_answer(&ans, out, e);
	buf_release(&ans);
	return rc;
}

static int
run_at(const char *op, const char *key, const struct gitws_at *at,
       const char *message, const struct jv *paths, struct jv **out,
       struct err *e)
{
	struct jv *req = jv_obj();
	int rc;

	*out = NULL;
	jv_set_str(req, "op", op);
	if (message)
		jv_set_str(req, "message", message);
	if (paths)
		jv_set(req, "paths", jv_copy((struct jv *)paths));
	if (at->dial)
		rc = remote_call(key, at, req, out, e);
	else
		rc = gitws_session_call(key, at->ws, req, out, e);
	jv_free(req);
	return rc;
}

static int
run(const char *op, const char *key, const char *ws, const char *message,
    const struct jv *paths, struct jv **out, struct err *e)
{
	struct gitws_at at = {.ws = ws};

	return run_at(op, key, &at, message, paths, out, e);
}

int
gitws_status(const char *key, const char *ws, struct jv **out, struct err *e)
{
	return run("status", key, ws, NULL, NULL, out, e);
}

int
gitws_diff(const char *key, const char *ws, struct jv **out, struct err *e)
{
	return run("diff", key, ws, NULL, NULL, out, e);
}

int
gitws_commit(const char *key, const char *ws, const char *message,
             const struct jv *paths, struct jv **out, struct err *e)
{
	return run("commit", key, ws, message, paths, out, e);
}

int
gitws_status_at(const char *key, const struct gitws_at *at, struct jv **out,
                struct err *e)
{
	return run_at("status", key, at, NULL, NULL, out, e);
}

int
gitws_diff_at(const char *key, const struct gitws_at *at, struct jv **out,
              struct err *e)
{
	return run_at("diff", key, at, NULL, NULL, out, e);
}

int
gitws_commit_at(const char *key, const struct gitws_at *at, const char *message,
                const struct jv *paths, struct jv **out, struct err *e)
{
	return run_at("commit", key, at, message, paths, out, e);
}
