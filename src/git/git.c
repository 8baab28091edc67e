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
 */
#include "git/git.h"
#include "git/internal.h"

static int
run(const char *op, const char *key, const char *ws, const char *message,
    const struct jv *paths, struct jv **out, struct err *e)
{
	struct jv *req = jv_obj();
	int rc;

	jv_set_str(req, "op", op);
	if (message)
		jv_set_str(req, "message", message);
	if (paths)
		jv_set(req, "paths", jv_copy((struct jv *)paths));
	rc = gitws_session_call(key, ws, req, out, e);
	jv_free(req);
	return rc;
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
