/*
 * The API server on libmicrohttpd.
 *
 * Threads: MHD's internal pool of API_THREADS threads, each with its own
 * epoll loop; handlers run on them and may block on Docker.  A request is
 * handled once its body is complete: the body is collected into a buffer
 * capped at API_MAX_BODY_BYTES (or its route's cap).
 *
 * Order of checks for every request: request id, then, from the head
 * alone and before a byte of the body is read, the Host guard when
 * authentication is off (loopback names only: DNS rebinding) and
 * authentication (every /v1 path, known or not, needs a token, so the
 * API's shape is not visible to strangers), then a declared
 * Content-Length over the cap (413, still unread); then routing (404,
 * then 405 with Allow), the path's ids (400 when malformed), then the
 * handler.  A refusal from the head is queued on libmicrohttpd's first
 * call, so it answers without reading the body and closes the
 * connection: a stranger costs the server a head, not 16 MiB.  Every
 * error leaves through api_reply_err(): the one place that writes the
 * envelope.
 */
#include "api/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/session.h"
#include "ws/wsfs.h"
#include "task/task.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "task/evlog.h"

struct api {
	struct core *core;
	struct auth *auth;
	struct MHD_Daemon *mhd;
};

struct route {
	const char *method;
	const char *pattern; /* "{id}" matches one ULID segment */
	api_handler fn;
	bool open;       /* no token needed */
	size_t max_body; /* 0: API_MAX_BODY_BYTES */
};

static const struct route routes[] = {
    {.method = "GET", .pattern = "/healthz", .fn = health_get, .open = true},
    {.method = "GET",
     .pattern = "/v1/auth/status",
     .fn = signin_status,
     .open = true},
    {.method = "POST",
     .pattern = "/v1/auth/setup",
     .fn = signin_setup,
     .open = true},
    {.method = "POST",
     .pattern = "/v1/auth/login",
     .fn = signin_login,
     .open = true},
    {.method = "POST", .pattern = "/v1/auth/logout", .fn = signin_logout},
    {.method = "POST", .pattern = "/v1/auth/password", .fn = signin_password},
    {.method = "GET", .pattern = "/v1/status", .fn = status_get},
    {.method = "GET", .pattern = "/metrics", .fn = metrics_get},
    {.method = "GET", .pattern = "/v1/presets", .fn = presets_list},
    {.method = "GET", .pattern = "/v1/apps", .fn = apps_list},
    {.method = "POST", .pattern = "/v1/apps", .fn = apps_create},
    {.method = "GET", .pattern = "/v1/apps/{id}", .fn = apps_get},
    {.method = "PATCH", .pattern = "/v1/apps/{id}", .fn = apps_patch},
    {.method = "DELETE", .pattern = "/v1/apps/{id}", .fn = apps_delete},
    {.method = "GET", .pattern = "/v1/trash", .fn = trash_list},
    {.method = "GET", .pattern = "/v1/trash/{id}", .fn = trash_get},
    {.method = "POST",
     .pattern = "/v1/trash/{id}/restore",
     .fn = trash_restore_post},
    {.method = "DELETE", .pattern = "/v1/trash/{id}", .fn = trash_delete},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/preview-link",
     .fn = apps_preview_link},
    {.method = "DELETE",
     .pattern = "/v1/apps/{id}/preview-links",
     .fn = apps_preview_revoke},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/sandbox",
     .fn = sandboxes_create},
    {.method = "GET", .pattern = "/v1/sandboxes/{id}", .fn = sandboxes_get},
    {.method = "DELETE",
     .pattern = "/v1/sandboxes/{id}",
     .fn = sandboxes_delete},
    {.method = "PATCH", .pattern = "/v1/sandboxes/{id}", .fn = sandboxes_patch},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/stop",
     .fn = sandboxes_stop},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/start",
     .fn = sandboxes_start},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/freeze",
     .fn = sandboxes_freeze},
    {.method = "GET",
     .pattern = "/v1/sandboxes/{id}/processes/{name}/logs",
     .fn = processes_logs},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/processes/{name}/restart",
     .fn = processes_restart},
    {.method = "GET", .pattern = "/v1/sandboxes/{id}/files", .fn = files_list},
    {.method = "PUT",
     .pattern = "/v1/sandboxes/{id}/files",
     .fn = files_put,
     .max_body = WSFS_MAX_WRITE},
    {.method = "DELETE",
     .pattern = "/v1/sandboxes/{id}/files",
     .fn = files_delete},
    {.method = "GET",
     .pattern = "/v1/sandboxes/{id}/files/content",
     .fn = files_content},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/files/move",
     .fn = files_move},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/tasks",
     .fn = tasks_create,
     .max_body = TASK_MAX_PROMPT_BYTES * 2 + 4096},
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
    {.method = "GET", .pattern = "/v1/agents", .fn = agents_list},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/api-key",
     .fn = agents_set_key,
     .max_body = AGENT_KEY_BODY_BYTES},
    {.method = "DELETE",
     .pattern = "/v1/agents/{name}/api-key",
     .fn = agents_delete_key},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/disconnect",
     .fn = agents_disconnect},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/oauth/start",
     .fn = agents_oauth_start},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/oauth/finish",
     .fn = agents_oauth_finish,
     .max_body = AGENT_KEY_BODY_BYTES},
    {.method = "GET", .pattern = "/v1/spend", .fn = spend_get},
    {.method = "PATCH", .pattern = "/v1/spend", .fn = spend_patch},
    {.method = "GET", .pattern = "/v1/settings", .fn = settings_get},
    {.method = "PATCH", .pattern = "/v1/settings", .fn = settings_patch},
    {.method = "GET", .pattern = "/v1/apps/{id}/config", .fn = config_list},
    /*
     * {name} is the config key here.  r->name keeps 79 bytes of it and
     * keys may have 128, so config.c reads the key from the path's last
     * segment itself.
     */
    {.method = "GET",
     .pattern = "/v1/apps/{id}/config/{name}",
     .fn = config_get},
    {.method = "PUT",
     .pattern = "/v1/apps/{id}/config/{name}",
     .fn = config_put},
    {.method = "DELETE",
     .pattern = "/v1/apps/{id}/config/{name}",
     .fn = config_delete},
    {.method = "GET",
     .pattern = "/v1/apps/{id}/git/status",
     .fn = apps_git_status},
    {.method = "GET", .pattern = "/v1/apps/{id}/git/diff", .fn = apps_git_diff},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/git/commit",
     .fn = apps_git_commit},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/git/push",
     .fn = apps_git_push},
    {.method = "GET", .pattern = "/v1/git-credentials", .fn = gitcreds_list},
    {.method = "POST",
     .pattern = "/v1/git-credentials",
     .fn = gitcreds_create,
     .max_body = GIT_CRED_BODY_BYTES},
    {.method = "DELETE",
     .pattern = "/v1/git-credentials/{id}",
     .fn = gitcreds_delete},
    {.method = "GET", .pattern = "/v1/tokens", .fn = tokens_list},
    {.method = "POST", .pattern = "/v1/tokens", .fn = tokens_create},
    {.method = "DELETE", .pattern = "/v1/tokens/{name}", .fn = tokens_delete},
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* --- replies ----------------------------------------------------------- */

void
api_set_time(struct jv *o, const char *key, int64_t t)
{
	char s[CLOCK_RFC3339_LEN];

	clock_rfc3339(t, s);
	jv_set_str(o, key, s);
}

void
api_reply_json(struct resp *w, int status, struct jv *v)
{
	w->status = status;
	w->content_type = "application/json";
	buf_reset(&w->body);
	if (jv_dump(v, &w->body) < 0 || buf_append(&w->body, "\n", 1) < 0) {
		buf_reset(&w->body);
		w->status = 500;
	}
	jv_free(v);
}

void
api_reply_text(struct resp *w, int status, const char *text)
{
	w->status = status;
	w->content_type = "text/plain; charset=utf-8";
	buf_reset(&w->body);
	buf_append(&w->body, text, strlen(text));
}

void
api_reply_empty(struct resp *w, int status)
{
	w->status = status;
	w->content_type = NULL;
	buf_reset(&w->body);
}

void
api_reply_err(struct resp *w, const struct err *e)
{
	struct jv *env = jv_obj(), *inner = jv_obj();

	jv_set_str(inner, "code", e->code);
	jv_set_str(inner, "message", e->msg);
	jv_set_bool(inner, "retryable", e->status == 503);
	jv_set(env, "error", inner);
	api_reply_json(w, e->status, env);
}

void
api_fail(struct resp *w, int status, const char *code, const char *fmt, ...)
{
	struct err e = {.status = status};
	va_list ap;

	snprintf(e.code, sizeof(e.code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	api_reply_err(w, &e);
}

void
api_reply_bytes(struct resp *w, int status, const char *content_type,
                const void *data, size_t len)
{
	w->status = status;
	w->content_type = content_type;
	buf_release(&w->body);
	buf_init(&w->body, len + 1);
	if (buf_append(&w->body, data, len) < 0)
		api_fail(w, 500, "internal", "out of memory");
}

struct query_find {
	const char *key;
	const char *value;
	size_t size;
	bool found;
};

static enum MHD_Result
query_cb(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
         const char *value, size_t value_size)
{
	struct query_find *q = cls;

	(void)kind, (void)key_size;
	if (strcmp(key, q->key) != 0)
		return MHD_YES;
	q->found = true;
	q->value = value ? value : "";
	q->size = value ? value_size : 0;
	return MHD_NO;
}

const char *
api_query(struct req *r, struct resp *w, const char *key, bool *bad)
{
	struct query_find q = {.key = key};

	*bad = false;
	MHD_get_connection_values_n(r->conn, MHD_GET_ARGUMENT_KIND, query_cb,
	                            &q);
	if (!q.found)
		return NULL;
	if (strlen(q.value) != q.size) {
		*bad = true;
		api_fail(w, 400, "invalid_request",
		         "query parameter %s must not contain NUL", key);
		return NULL;
	}
	return q.value;
}

int
api_scope(struct req *r, struct resp *w, const char **owner)
{
	bool bad;
	const char *v = api_query(r, w, "scope", &bad);

	*owner = r->owner;
	if (bad)
		return -1;
	if (v == NULL || strcmp(v, "tenant") == 0)
		return 0;
	if (strcmp(v, "instance") != 0) {
		api_fail(w, 400, "invalid_request",
		         "scope must be tenant or instance, not %.32s", v);
		return -1;
	}
	if (!r->operator) {
		api_fail(w, 403, "operator_only",
		         "scope=instance changes what every tenant uses: only "
		         "an operator token may (the first-start token "
		         "\"default\" or one named in SANDBOXD_OPERATORS); "
		         "without scope the call acts on your tenant (%.64s)",
		         r->owner);
		return -1;
	}
	*owner = "";
	return 0;
}

int
api_body_object(struct req *r, struct resp *w, bool optional, struct jv **out)
{
	char err[160];
	size_t i = 0;

	*out = NULL;
	if (r->body_too_big) {
		api_fail(w, 413, "payload_too_large",
		         "request body is larger than %u bytes",
		         API_MAX_BODY_BYTES);
		return -1;
	}
	while (i < r->body.len && strchr(" \t\r\n", r->body.data[i]))
		i++;
	if (i == r->body.len) {
		if (optional)
			return 0;
		api_fail(w, 400, "invalid_request",
		         "request body is empty; expected a JSON object");
		return -1;
	}
	*out = jv_parse(r->body.data, r->body.len, API_MAX_JSON_DEPTH, err,
	                sizeof(err));
	if (*out == NULL) {
		api_fail(w, 400, "invalid_request", "%s", err);
		return -1;
	}
	if (jv_type(*out) != JV_OBJECT) {
		api_fail(w, 400, "invalid_request",
		         "request body must be a JSON object, not %s",
		         jv_type_name(jv_type(*out)));
		jv_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* --- routing ----------------------------------------------------------- */

/*
 * Matches path against pattern segment by segment.  {id} segments are
 * copied (up to 2) into r->ids, a {name} segment into r->name; their
 * format is checked later (a malformed id is a 400, not a 404).
 */
static bool
route_match(const char *pattern, const char *path, struct req *r, bool *bad_id)
{
	const char *p = pattern, *s = path;
	int nid = 0;

	*bad_id = false;
	while (*p && *s) {
		const char *pe = strchr(p + 1, '/'), *se = strchr(s + 1, '/');
		size_t pl = pe ? (size_t)(pe - p) : strlen(p);
		size_t sl = se ? (size_t)(se - s) : strlen(s);
		char seg[80];

		snprintf(seg, sizeof(seg), "%.*s", (int)(sl ? sl - 1 : 0),
		         s + 1);
		if (pl == 5 && strncmp(p, "/{id}", 5) == 0) {
			if (sl < 2)
				return false;
			if (nid < 2 && !ulid_parse(seg, r->ids[nid]))
				*bad_id = true;
			nid++;
		} else if (pl == 7 && strncmp(p, "/{name}", 7) == 0) {
			if (sl < 2)
				return false;
			snprintf(r->name, sizeof(r->name), "%s", seg);
		} else if (pl != sl || strncmp(p, s, pl) != 0) {
			return false;
		}
		p += pl;
		s += sl;
	}
	return *p == '\0' && *s == '\0';
}

static bool
method_matches(const struct route *rt, const char *method)
{
	/* HEAD is GET without the body (libmicrohttpd drops it). */
	return strcmp(rt->method, method) == 0 ||
	       (strcmp(method, "HEAD") == 0 && strcmp(rt->method, "GET") == 0);
}

/*
 * Finds the route for r->method and r->path.  NULL when none: then
 * *path_known says whether another method would match, and allow lists
 * those methods.
 */
static const struct route *
route_find(struct req *r, bool *path_known, bool *bad_id, char *allow,
           size_t allowlen)
{
	*path_known = false;
	if (allow)
		allow[0] = '\0';
	for (size_t i = 0; i < NROUTES; i++) {
		bool bad;
		if (!route_match(routes[i].pattern, r->path, r, &bad))
			continue;
		*path_known = true;
		if (method_matches(&routes[i], r->method)) {
			*bad_id = bad;
			return &routes[i];
		}
		if (allow) {
			size_t n = strlen(allow);
			snprintf(allow + n, allowlen - n, "%s%s", n ? ", " : "",
			         routes[i].method);
		}
	}
	return NULL;
}

/* /metrics too: it tells a stranger how busy the host is. */
static bool
needs_token(const char *path)
{
	return strcmp(path, "/v1") == 0 || strncmp(path, "/v1/", 4) == 0 ||
	       strcmp(path, "/metrics") == 0;
}
/*
 * While the data filesystem is full, a call that would write answers
 * 507 before it starts, and a write that failed for it answers 507, not
 * 500: the client learns that nothing is broken and what to do.  Reads,
 * deletes (they free space), stops and cancels go on.
 */
static bool
writes_space(const char *method, const char *path)
{
	size_t n = strlen(path);

	if (strcmp(method, "POST") != 0 && strcmp(method, "PUT") != 0 &&
	    strcmp(method, "PATCH") != 0)
		return false;
	return !(n > 5 && strcmp(path + n - 5, "/stop") == 0) &&
	       !(n > 7 && strcmp(path + n - 7, "/cancel") == 0);
}

static void
full_disk_fail(struct req *r, struct resp *w, int64_t left)
{
	api_fail(w, 507, "insufficient_storage",
	         "the data filesystem is full (%lld KiB free): reads still "
	         "work, writes fail until space is freed on %s",
	         (long long)(left >> 10), r->core->cfg->data_dir);
}

static bool
full_disk_refuse(struct req *r, struct resp *w)
{
	int64_t left;

	if (!writes_space(r->method, r->path) ||
	    !core_data_full(r->core, &left))
		return false;
	full_disk_fail(r, w, left);
	return true;
}

static void
full_disk_answer(struct req *r, struct resp *w)
{
	int64_t left;

	if (w->status == 500 && core_data_full(r->core, &left))
		full_disk_fail(r, w, left);
}

/*
 * Who the caller is: a bearer token when Authorization is given (the
 * cookie is then ignored), else a console session from the Cookie.  0,
 * or -1 when neither authenticates.
 */
static int
authenticate(struct api *a, struct MHD_Connection *conn, struct req *r)
{
	const char *hdr = MHD_lookup_connection_value(
	    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);

	if (auth_disabled(a->auth)) {
		auth_check(a->auth, NULL, r->owner, sizeof(r->owner));
		r->operator= true;
		return 0;
	}
	if (hdr) {
		if (!auth_check(a->auth, hdr, r->owner, sizeof(r->owner)))
			return -1;
		r->via = API_VIA_TOKEN;
		r->operator= auth_operator(a->auth, r->owner);
		return 0;
	}
	hdr = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                  MHD_HTTP_HEADER_COOKIE);
	return hdr ? signin_session(r, hdr) : -1;
}

static bool
safe_method(const char *m)
{
	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

/*
 * What the head alone decides: true when the request is refused (the
 * answer is in w), else r->owner is the caller's tenant.  Open routes
 * (health, the sign-in's status, setup and login) are served to anyone,
 * who they are is still worked out for the status.  A write signed in
 * by the cookie must pass the CSRF check (signin_csrf).
 */
static bool
refused(struct api *a, struct MHD_Connection *conn, struct req *r,
        struct resp *w)
{
	const struct route *rt;
	bool known, bad;
	const char *hdr;

	hdr = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                  MHD_HTTP_HEADER_HOST);
	if (!auth_host_allowed(a->auth, hdr)) {
		api_fail(
		    w, 403, "host_not_allowed",
		    "authentication is off (SANDBOXD_API_AUTH_DISABLED), so "
		    "the API answers only requests for localhost, "
		    "127.0.0.1, [::1] or the console's host; Host: %.100s "
		    "is refused",
		    hdr ? hdr : "(none)");
		return true;
	}
	if (!needs_token(r->path))
		return false;
	rt = route_find(r, &known, &bad, NULL, 0);
	if (authenticate(a, conn, r) < 0) {
		if (rt && rt->open)
			return false;
		api_fail(w, 401, "unauthorized",
		         "missing or invalid bearer token "
		         "(Authorization: Bearer <token>) or console session");
		return true;
	}
	if (r->via == API_VIA_SESSION && !safe_method(r->method) &&
	    !(rt && rt->open) && signin_csrf(r, w) < 0)
		return true;
	return false;
}

/* Routing and the handler, once the body is in (or refused unread). */
static void
dispatch(struct req *r, struct resp *w)
{
	const struct route *found;
	bool bad_id = false, known;

	found = route_find(r, &known, &bad_id, w->allow, sizeof(w->allow));
	if (!known)
		api_fail(w, 404, "not_found", "no such path: %s", r->path);
	else if (found == NULL)
		api_fail(w, 405, "method_not_allowed",
		         "%s is not allowed on %s (allowed: %s)", r->method,
		         r->path, w->allow);
	else if (bad_id)
		api_fail(w, 400, "invalid_request",
		         "malformed id in path: ids are 26-character ULIDs");
	else if (r->body_too_big)
		api_fail(w, 413, "payload_too_large",
		         "request body is larger than %zu bytes", r->body.max);
	else if (!full_disk_refuse(r, w)) {
		found->fn(r, w);
		full_disk_answer(r, w);
	}
}

/* --- libmicrohttpd glue ------------------------------------------------- */

struct auth *
api_auth(const struct req *r)
{
	return r->api->auth;
}

const char *
api_header(struct req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

void
api_stream_suspend(void *conn)
{
	MHD_suspend_connection(conn);
}

void
api_stream_resume(void *conn)
{
	MHD_resume_connection(conn);
}

/*
 * An event stream: 0 bytes means the subscription suspended the
 * connection (it is resumed when there is more), as libmicrohttpd asks
 * of callbacks that have nothing yet.
 */
static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	ssize_t n = evlog_sub_read(cls, buf, max);

	(void)pos;
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
stream_free(void *cls)
{
	evlog_sub_close(cls);
}

static struct MHD_Response *
stream_response(struct resp *w)
{
	struct MHD_Response *mr = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, API_STREAM_BLOCK, stream_read, w->stream,
	    stream_free);

	if (mr == NULL) {
		evlog_sub_close(w->stream);
		w->stream = NULL;
		return NULL;
	}
	w->stream = NULL; /* the response owns it now */
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(mr, "X-Accel-Buffering", "no");
	w->content_type = "text/event-stream";
	return mr;
}

static enum MHD_Result
send_resp(struct MHD_Connection *conn, struct req *r, struct resp *w)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;

	if (w->stream)
		mr = stream_response(w);
	else
		mr = MHD_create_response_from_buffer(
		    w->body.len, w->body.data ? w->body.data : "",
		    MHD_RESPMEM_MUST_COPY);
	if (mr == NULL)
		return MHD_NO;
	MHD_add_response_header(mr, "X-Request-Id", r->request_id);
	if (w->content_type)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
		                        w->content_type);
	if (w->status == 405)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, w->allow);
	if (w->etag[0])
		MHD_add_response_header(mr, MHD_HTTP_HEADER_ETAG, w->etag);
	if (w->trash_id[0]) {
		char link[96];
		snprintf(link, sizeof(link),
		         "</v1/trash/%s/restore>; "
		         "rel=\"restore\"",
		         w->trash_id);
		MHD_add_response_header(mr, "Sandboxd-Trash-Id", w->trash_id);
		MHD_add_response_header(mr, "Link", link);
	}
	if (w->status == 401)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Bearer");
	if (r->set_cookie[0])
		MHD_add_response_header(mr, MHD_HTTP_HEADER_SET_COOKIE,
		                        r->set_cookie);
	if (w->retry_after > 0) {
		char s[16];
		snprintf(s, sizeof(s), "%d", w->retry_after);
		MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, s);
	}
	ret = MHD_queue_response(conn, (unsigned)w->status, mr);
	MHD_destroy_response(mr);
	return ret;
}

static bool
declared_too_big(struct MHD_Connection *conn, size_t max)
{
	const char *cl = MHD_lookup_connection_value(
	    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return cl && strtoull(cl, NULL, 10) > max;
}

/* The body cap of the request's route (file uploads take more). */
static size_t
body_limit(struct req *r)
{
	bool known, bad;
	const struct route *rt = route_find(r, &known, &bad, NULL, 0);

	return rt && rt->max_body ? rt->max_body : API_MAX_BODY_BYTES;
}

/* Where the request came from: r->client (the login limit's key) and
 * r->https (the cookie's Secure). */
static void
request_origin(struct api *a, struct MHD_Connection *conn, struct req *r)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	const char *proto = api_header(r, "X-Forwarded-Proto");
	char peer[INET6_ADDRSTRLEN] = "unknown";
	bool loop = false;

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in4 = (const void *)sa;
		inet_ntop(AF_INET, &in4->sin_addr, peer, sizeof(peer));
		loop = (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, peer, sizeof(peer));
		loop = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	session_client_addr(peer, loop, api_header(r, "X-Forwarded-For"),
	                    r->client, sizeof(r->client));
	r->https =
	    auth_tls(a->auth) || (proto && strcasecmp(proto, "https") == 0);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **ctx)
{
	struct api *a = cls;
	struct req *r = *ctx;
	struct resp w = {.status = 500};
	enum MHD_Result ret;
	bool refuse = false;

	(void)version;
	buf_init(&w.body, 0);
	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return MHD_NO;
		r->api = a;
		r->core = a->core;
		r->conn = conn;
		r->method = method;
		r->path = url;
		ulid_new(r->request_id);
		buf_init(&r->body, body_limit(r));
		request_origin(a, conn, r);
		*ctx = r;
		/* Answered now, with nothing of the body read: a refusal, or
		 * a declared body over the cap. */
		refuse = refused(a, conn, r, &w);
		if (!refuse && !declared_too_big(conn, r->body.max))
			return MHD_YES;
		r->body_too_big = !refuse;
	} else if (*upload_size) {
		if (!r->body_too_big &&
		    buf_append(&r->body, upload, *upload_size) < 0)
			r->body_too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (!refuse)
		dispatch(r, &w);
	ret = send_resp(conn, r, &w);
	buf_release(&w.body);
	return ret;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **ctx,
             enum MHD_RequestTerminationCode toe)
{
	struct req *r = *ctx;

	(void)cls, (void)conn, (void)toe;
	if (r == NULL)
		return;
	buf_release(&r->body);
	free(r);
	*ctx = NULL;
}

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warn("http: %s", line);
}

static int
resolve(const struct config *cfg, struct sockaddr_storage *ss, bool *ipv6)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_NUMERICSERV},
	                *res;
	char port[8];

	snprintf(port, sizeof(port), "%u", cfg->api_port);
	if (getaddrinfo(cfg->api_host, port, &hints, &res) != 0)
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*ipv6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	return 0;
}

int
api_start(struct api **out, struct core *core)
{
	struct api *a = calloc(1, sizeof(*a));
	struct sockaddr_storage ss;
	bool ipv6 = false;
	unsigned flags;

	if (a == NULL)
		return -1;
	a->core = core;
	if (auth_init(&a->auth, (struct config *)core->cfg, core->store) < 0) {
		log_error("api: cannot set up authentication");
		goto fail;
	}
	if (resolve(core->cfg, &ss, &ipv6) < 0) {
		log_error("SANDBOXD_API_ADDR: cannot resolve \"%s\"",
		          core->cfg->api_host);
		goto fail;
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	        MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
	        (ipv6 ? MHD_USE_IPv6 : 0);
	a->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, a, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, a, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)API_THREADS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_CONN_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_MAX_CONNECTIONS,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, a, MHD_OPTION_END);
	if (a->mhd == NULL) {
		log_error("SANDBOXD_API_ADDR: cannot listen on %s (in use?)",
		          core->cfg->api_addr);
		goto fail;
	}
	*out = a;
	return 0;
fail:
	auth_free(a->auth);
	free(a);
	return -1;
}

void
api_stop(struct api *a)
{
	if (a == NULL)
		return;
	MHD_stop_daemon(a->mhd);
	auth_free(a->auth);
	free(a);
}
