/*
 * /v1/sandboxes/{id}/tasks: prompts for the sandbox's agent, their
 * results, and their live event streams (text/event-stream).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "spend/spend.h"
#include "task/attach.h"
#include "task/evlog.h"
#include "task/task.h"
#include "vault/vault.h"
#include "ws/workspace.h"

/* The body of a task with images: each base64 (4 bytes per 3) and its
 * name, beside the prompt (docs/limits.md). */
#define TASK_IMAGES_BODY_BYTES                                                 \
	(TASK_IMAGES_MAX * ((TASK_IMAGE_MAX_BYTES + 2) / 3 * 4 + 1024))

/* A request's images, decoded. */
struct images {
	struct task_image v[TASK_IMAGES_MAX];
	unsigned char *buf[TASK_IMAGES_MAX];
	size_t n;
};

static void
images_free(struct images *im)
{
	for (size_t i = 0; i < im->n; i++)
		free(im->buf[i]);
	im->n = 0;
}

/* images[i]: {"name", "data"} (base64, or a data: URL), an image by its
 * first bytes, at most TASK_IMAGE_MAX_BYTES decoded. */
static int
image_one(const struct jv *o, size_t i, struct images *im, struct err *e)
{
	const struct jv *d = jv_get(o, "data");
	const char *name = jv_str(jv_get(o, "name")), *data = jv_str(d), *c;
	size_t len = jv_str_len(d), got;
	unsigned char *buf;

	if (jv_type(o) != JV_OBJECT || name == NULL || *name == '\0' ||
	    data == NULL)
		return ERR_BAD(e,
		               "images[%zu] must be {\"name\": a file name, "
		               "\"data\": its bytes in base64}",
		               i);
	/* What a browser's FileReader gives: "data:image/png;base64,…". */
	if (strncmp(data, "data:", 5) == 0 &&
	    (c = memchr(data, ',', len < 256 ? len : 256)) != NULL) {
		len -= (size_t)(c + 1 - data);
		data = c + 1;
	}
	if (len / 4 * 3 > TASK_IMAGE_MAX_BYTES + 2)
		return err_set(e, 413, "too_large",
		               "image %s is larger than %u MiB", name,
		               TASK_IMAGE_MAX_BYTES >> 20);
	if ((buf = malloc(len / 4 * 3 + 3)) == NULL)
		return ERR_INTERNAL(e, "out of memory");
	im->buf[im->n] = buf;
	im->v[im->n++] = (struct task_image){.name = name, .data = buf};
	if (vault_base64_decode(data, len, buf, len / 4 * 3 + 3, &got) < 0)
		return ERR_BAD(e, "image %s: data is not base64", name);
	if (got > TASK_IMAGE_MAX_BYTES)
		return err_set(e, 413, "too_large",
		               "image %s is larger than %u MiB", name,
		               TASK_IMAGE_MAX_BYTES >> 20);
	if (task_image_type(buf, got) == NULL)
		return ERR_BAD(e,
		               "image %s is not a PNG, JPEG, GIF or WebP image "
		               "(by its first bytes)",
		               name);
	im->v[im->n - 1].len = got;
	return 0;
}

static int
images_from(const struct jv *body, struct images *im, struct err *e)
{
	const struct jv *a = jv_get(body, "images");

	im->n = 0;
	if (a == NULL || jv_type(a) == JV_NULL)
		return 0;
	if (jv_type(a) != JV_ARRAY)
		return ERR_BAD(e, "images must be an array of {\"name\", "
		                  "\"data\"}");
	if (jv_len(a) > TASK_IMAGES_MAX)
		return err_set(e, 413, "too_large",
		               "at most %d images a task, not %zu",
		               TASK_IMAGES_MAX, jv_len(a));
	for (size_t i = 0; i < jv_len(a); i++)
		if (image_one(jv_at(a, i), i, im, e) < 0)
			return -1;
	return 0;
}

/* The task's attached images, [{"name","path","bytes"}]. */
static struct jv *
images_json(struct core *c, const char *sandbox_id, const char *id)
{
	char ws[WORKSPACE_PATH_MAX];
	struct sandbox sb = {0};
	struct wsnode_ref at = {.ws = ws, .wn = c->wn, .sb = &sb};

	if (store_sandbox_get(c->store, sandbox_id, &sb) != 0)
		return jv_arr();
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	return task_attach_list(&at, id);
}

/* An optional string field: NULL when absent or null; -1 on a wrong type. */
static int
opt_string(struct jv *body, const char *key, const char **out, struct err *e)
{
	struct jv *v = jv_get(body, key);

	*out = NULL;
	if (v == NULL || jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_STRING)
		return ERR_BAD(e, "%s must be a string, not %s", key,
		               jv_type_name(jv_type(v)));
	if (strlen(jv_str(v)) != jv_str_len(v))
		return ERR_BAD(e, "%s must not contain NUL", key);
	*out = jv_str(v);
	return 0;
}

static int
request_from(struct jv *body, struct task_request *tr, struct err *e)
{
	struct jv *v;

	memset(tr, 0, sizeof(*tr));
	tr->cont = -1;
	if (opt_string(body, "prompt", &tr->prompt, e) < 0 ||
	    opt_string(body, "agent", &tr->agent, e) < 0 ||
	    opt_string(body, "model", &tr->model, e) < 0)
		return -1;
	if (tr->prompt == NULL)
		return ERR_BAD(e, "prompt is required");
	if (tr->agent && *tr->agent == '\0')
		tr->agent = NULL;
	v = jv_get(body, "timeout_s");
	if (v && jv_type(v) != JV_NULL) {
		if (jv_type(v) != JV_INT)
			return ERR_BAD(e, "timeout_s must be an integer number "
			                  "of seconds");
		tr->timeout_s = jv_int(v);
	}
	v = jv_get(body, "continue");
	if (v && jv_type(v) != JV_NULL) {
		if (jv_type(v) != JV_BOOL)
			return ERR_BAD(e, "continue must be true or false");
		tr->cont = jv_is_true(v) ? 1 : 0;
	}
	return 0;
}

void
tasks_create(struct req *r, struct resp *w)
{
	struct task_request tr;
	struct images im = {0};
	struct sandbox sb;
	int rc;
	struct task t;
	struct jv *body, *o;
	struct err e = {0};
	char url[160];

	if (api_body_object(r, w, false, &body) < 0)
		return;
	if (api_load_sandbox(r, w, &sb) < 0) {
		jv_free(body);
		return;
	}
	rc = request_from(body, &tr, &e) < 0 || images_from(body, &im, &e) < 0
	         ? -1
	         : 0;
	tr.images = im.v;
	tr.nimages = im.n;
	if (rc < 0 || task_submit(r->core, sb.id, &tr, &t, &e) < 0) {
		images_free(&im);
		jv_free(body);
		api_reply_err(w, &e);
		return;
	}
	images_free(&im);
	jv_free(body);
	/* Sorted keys; the task's "id" is the last "id" of the body. */
	snprintf(url, sizeof(url), "/v1/sandboxes/%s/tasks/%s/events", sb.id,
	         t.id);
	o = jv_obj();
	jv_set_str(o, "agent", t.agent);
	jv_set_str(o, "events_url", url);
	jv_set_str(o, "id", t.id);
	if (t.model[0])
		jv_set_str(o, "model", t.model);
	jv_set_str(o, "sandbox_id", sb.id);
	jv_set_str(o, "status", task_state_name(TASK_RUNNING));
	jv_set_int(o, "timeout_s", t.timeout_s);
	jv_set(o, "images", images_json(r->core, sb.id, t.id));
	store_task_release(&t);
	api_reply_json(w, 202, o);
}

/* The task named in the path, in the tenant's sandbox, or a 404. */
static int
load_task(struct req *r, struct resp *w, struct task *t)
{
	struct sandbox sb;
	int rc;

	if (api_load_sandbox(r, w, &sb) < 0)
		return -1;
	rc = store_task_get(r->core->store, sb.id, r->ids[1], t);
	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such task in this sandbox");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot read the task");
	return rc == 0 ? 0 : -1;
}

void
tasks_get(struct req *r, struct resp *w)
{
	struct task t;

	struct store_spend s;
	struct jv *o;

	if (load_task(r, w, &t) < 0)
		return;
	o = task_json(&t);
	/* What the proxy counted for it (the agent's own figures are in
	 * "tokens"). */
	if (store_spend_get(r->core->store, "task", t.id, &s) == 0)
		jv_set(o, "spend", spend_json(&s));
	jv_set(o, "images", images_json(r->core, t.sandbox_id, t.id));
	api_reply_json(w, 200, o);
	store_task_release(&t);
}

struct list_ctx {
	struct jv *arr;
};

static int
list_one(const struct task *t, void *arg)
{
	struct list_ctx *x = arg;
	struct jv *o = task_json(t), *msg;

	/* The list is an overview: the final message, not the whole result. */
	msg = jv_get(o, "agent_message_final");
	if (msg == NULL)
		msg = jv_get(o, "error_message");
	if (msg)
		jv_set(o, "agent_message", jv_copy(msg));
	jv_push(x->arr, o);
	return 0;
}

/*
 * For a sandbox on another node: the tasks that have attachments there
 * (one ws_list of the attachments' directory, not one per task); NULL
 * for a local sandbox, whose tasks are each looked at.
 */
static struct jv *
remote_with_images(struct core *c, const struct sandbox *sb)
{
	struct jv *ls = NULL;
	struct err e = {0};

	if (!wsnode_remote(sb))
		return NULL;
	if (wsnode_list(c->wn, sb, TASK_ATTACH_DIR, &ls, &e) < 0)
		return jv_arr(); /* none there (or the node is down) */
	return ls;
}

static bool
listed(const struct jv *ls, const char *name)
{
	for (size_t i = 0; i < jv_len(ls); i++)
		if (strcmp(jv_str(jv_get(jv_at(ls, i), "name")), name) == 0)
			return true;
	return false;
}

void
tasks_list(struct req *r, struct resp *w)
{
	struct list_ctx x;
	struct sandbox sb;
	struct jv *o, *with;

	if (api_load_sandbox(r, w, &sb) < 0)
		return;
	x.arr = jv_arr();
	if (store_task_list(r->core->store, sb.id, TASK_HISTORY_MAX, list_one,
	                    &x) < 0) {
		jv_free(x.arr);
		api_fail(w, 500, "internal", "cannot list the tasks");
		return;
	}
	/* After the list, not in it: its rows are handed out under no lock,
	 * but one query at a time reads more plainly. */
	with = remote_with_images(r->core, &sb);
	for (size_t i = 0; i < jv_len(x.arr); i++) {
		struct jv *t = jv_at(x.arr, i);
		const char *id = jv_str(jv_get(t, "id"));
		struct store_spend s;
		if (id == NULL)
			continue;
		if (store_spend_get(r->core->store, "task", id, &s) == 0)
			jv_set(t, "spend", spend_json(&s));
		jv_set(t, "images",
		       with && !listed(with, id)
		           ? jv_arr()
		           : images_json(r->core, sb.id, id));
	}
	jv_free(with);
	o = jv_obj();
	jv_set(o, "tasks", x.arr);
	api_reply_json(w, 200, o);
}

void
tasks_cancel(struct req *r, struct resp *w)
{
	struct sandbox sb;
	struct err e = {0};
	enum task_state status;
	struct jv *o;

	if (api_load_sandbox(r, w, &sb) < 0)
		return;
	if (task_cancel(r->core, sb.id, r->ids[1], &status, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	o = jv_obj();
	jv_set_str(o, "id", r->ids[1]);
	jv_set_str(o, "status", task_state_name(status));
	api_reply_json(w, 200, o);
}

void
tasks_revert(struct req *r, struct resp *w)
{
	struct sandbox sb;
	struct err e = {0};
	struct jv *o;

	if (api_load_sandbox(r, w, &sb) < 0)
		return;
	if (task_revert(r->core, sb.id, r->ids[1], &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	o = jv_obj();
	jv_set_str(o, "status", "reverted");
	jv_set_str(o, "task_id", r->ids[1]);
	api_reply_json(w, 200, o);
}

/* A non-negative event id, or -2 when malformed. */
static int64_t
event_id(const char *s)
{
	char *end;
	long long v;

	if (s == NULL || *s < '0' || *s > '9' || strlen(s) > 18)
		return -2;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno || *end ? -2 : v;
}

void
tasks_events(struct req *r, struct resp *w)
{
	const char *q, *h;
	struct evlog_sub *sub;
	struct err e = {0};
	struct task t;
	int64_t since = -1;
	bool bad = false;

	if (load_task(r, w, &t) < 0)
		return;
	store_task_release(&t);
	q = api_query(r, w, "since", &bad);
	if (bad)
		return;
	h = api_header(r, "Last-Event-ID");
	/* ?since= wins over the header, as a client that reconnects by
	 * itself sends the header and a caller may want to override it. */
	if (q || h) {
		since = event_id(q ? q : h);
		if (since == -2) {
			api_fail(w, 400, "invalid_request",
			         "%s must be a non-negative event id",
			         q ? "since" : "Last-Event-ID");
			return;
		}
	}
	if (evlog_sub_open(r->core, t.id, since, api_stream_suspend,
	                   api_stream_resume, r->conn, &sub, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	w->status = 200;
	w->stream = sub;
}

/* The routes of this file, in the router's order (routes.c). */
const struct route tasks_routes[] = {
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/tasks",
     .fn = tasks_create,
     .max_body = TASK_MAX_PROMPT_BYTES * 2 + 4096 + TASK_IMAGES_BODY_BYTES},
    {.method = "GET", .pattern = "/v1/sandboxes/{id}/tasks", .fn = tasks_list},
    {.method = "GET",
     .pattern = "/v1/sandboxes/{id}/tasks/{id}",
     .fn = tasks_get},
    {.method = "GET",
     .pattern = "/v1/sandboxes/{id}/tasks/{id}/events",
     .fn = tasks_events},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/tasks/{id}/cancel",
     .fn = tasks_cancel},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/tasks/{id}/revert",
     .fn = tasks_revert},
    {0},
};
