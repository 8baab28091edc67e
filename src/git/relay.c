/*
 * relay.c - the node agent's side of a remote status, diff or commit
 * (gitws_serve, git.h): the control plane's frames, from a nodelink
 * stream, relayed to a session helper (helper.c) the agent started for
 * its own workspace.  The control plane's side is git.c's *_at.
 *
 * Each request is checked here before the helper sees it, although the
 * helper's session answers nothing but status, diff and commit
 * (ops.c): a frame is bounded, must be JSON whose op is one of those
 * three, and is rebuilt from the fields those ops read (op, message,
 * paths), so nothing else the wire carried reaches the helper.  A push
 * or a clone (the helper's other ops, which take a token and the
 * network) can never start from the wire: this stream's helper is a
 * session from its first frame, which the agent writes itself.
 *
 * No lock of the app's is taken here: the control plane holds it across
 * the whole stream (git.c), so one app's calls reach a node one at a
 * time already.
 */
#include <stdio.h>
#include <string.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

/* The request in q, checked and rebuilt into out; -1 with e. */
static int
relay_check(const struct buf *q, struct buf *out, struct err *e)
{
	static const char *const ops[] = {"status", "diff", "commit"};
	char perr[64];
	struct jv *req =
	    q->len ? jv_parse(q->data, q->len, 8, perr, sizeof(perr)) : NULL;
	const char *op = jv_str(jv_get(req, "op"));
	const struct jv *msg = jv_get(req, "message"),
	                *paths = jv_get(req, "paths");
	struct jv *clean;
	bool known = false;
	int rc;

	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
		known |= strcmp(op, ops[i]) == 0;
	if (!known) {
		jv_free(req);
		return ERR_BAD(
		    e,
		    "git: a node serves status, diff and commit only, "
		    "not %.40s",
		    op ? op : "this request");
	}
	if ((msg && (jv_type(msg) != JV_STRING ||
	             jv_str_len(msg) > GITWS_MAX_MESSAGE)) ||
	    (paths && (jv_type(paths) != JV_ARRAY ||
	               jv_len(paths) > GITWS_MAX_COMMIT_PATHS))) {
		jv_free(req);
		return ERR_BAD(e, "git: a bad %s request", op);
	}
	clean = jv_obj();
	jv_set_str(clean, "op", op);
	if (msg)
		jv_set(clean, "message", jv_copy((struct jv *)msg));
	if (paths)
		jv_set(clean, "paths", jv_copy((struct jv *)paths));
	rc = jv_dump(clean, out);
	jv_free(clean);
	jv_free(req);
	return rc < 0 ? ERR_BAD(e, "git: the request is too large") : 0;
}

/* The session helper for key's ws, its first frame sent. */
static int
relay_start(const char *key, const char *ws, struct gitws_helper *h,
            struct err *e)
{
	struct jv *hello = jv_obj();
	int rc;

	if (gitws_helper_spawn(h, e) < 0) {
		jv_free(hello);
		return -1;
	}
	jv_set_str(hello, "op", "session");
	jv_set_str(hello, "key", key);
	jv_set_str(hello, "ws", ws);
	rc = gitws_frame_send_json(h->fd, hello);
	jv_free(hello);
	if (rc < 0) {
		gitws_helper_end(h, true);
		return ERR_INTERNAL(e, "git: cannot start the helper");
	}
	return 0;
}

/* One checked request to the helper, its answer into ans; -1 with e
 * (the helper is then ended). */
static int
relay_ask(struct gitws_helper *h, const struct buf *req, struct buf *ans,
          struct err *e)
{
	int64_t deadline =
	    gitws_now_ms() + (int64_t)GITWS_LOCAL_TIMEOUT_S * 1000;
	int rc;

	rc = gitws_frame_send(h->fd, req->data, req->len);
	if (rc == 0)
		rc = gitws_frame_recv(h->fd, ans, deadline);
	if (rc == 0)
		return 0;
	if (rc == 1) {
		gitws_helper_end(h, true);
		return ERR_INTERNAL(e,
		                    "git: the repository did not answer within "
		                    "%d s",
		                    GITWS_LOCAL_TIMEOUT_S);
	}
	return gitws_helper_died(gitws_helper_end(h, true), e);
}

void
gitws_serve(int fd, const char *key, const char *ws)
{
	struct gitws_helper h = {.pid = -1, .fd = -1};
	struct buf q, req, ans;
	struct err e = {0};

	buf_init(&q, GITWS_RELAY_REQ_MAX);
	buf_init(&req, GITWS_RELAY_REQ_MAX);
	buf_init(&ans, GITWS_HELPER_OUT_MAX);
	if (relay_start(key, ws, &h, &e) < 0)
		gitws_frame_send_err(fd, &e);
	while (h.pid > 0 &&
	       gitws_frame_recv(fd, &q,
	                        gitws_now_ms() +
	                            (int64_t)GITWS_LOCAL_TIMEOUT_S * 1000) ==
	           0) {
		buf_reset(&req);
		if (relay_check(&q, &req, &e) < 0 ||
		    relay_ask(&h, &req, &ans, &e) < 0) {
			gitws_frame_send_err(fd, &e);
			break;
		}
		if (gitws_frame_send(fd, ans.data, ans.len) < 0)
			break;
	}
	if (h.pid > 0)
		gitws_helper_end(&h, true);
	buf_release(&ans);
	buf_release(&req);
	buf_release(&q);
}
