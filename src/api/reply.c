/*
 * What handlers call to answer (api.h): the replies and the error
 * envelope (api_reply_err(), the one place that writes it), the query,
 * headers and body of the request as the handlers read them, and the
 * loaders of the app or sandbox a path names.  It includes
 * libmicrohttpd for the request's query and headers and the stream's
 * suspend and resume; it names no handler, so every handler file may
 * call it and it calls none of them (routes.c).
 */
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "timeline/timeline.h"

void
api_set_time(struct jv *o, const char *key, int64_t t)
{
	char s[CLOCK_RFC3339_LEN];

	clock_rfc3339(t, s);
	jv_set_str(o, key, s);
}

void
api_set_time_or_null(struct jv *o, const char *key, int64_t t)
{
	if (t > 0)
		api_set_time(o, key, t);
	else
		jv_set(o, key, jv_new_null());
}

int
api_opt_str(struct resp *w, const struct jv *body, const char *key, size_t max,
            const char **out)
{
	const struct jv *v = body ? jv_get(body, key) : NULL;

	*out = NULL;
	if (v == NULL || jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_STRING || jv_str_len(v) == 0 ||
	    jv_str_len(v) > max || strlen(jv_str(v)) != jv_str_len(v)) {
		api_fail(w, 400, "invalid_request",
		         "%s must be a non-empty string of at most %zu bytes",
		         key, max);
		return -1;
	}
	*out = jv_str(v);
	return 0;
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

/* --- the request ------------------------------------------------------ */

struct auth *
api_auth(const struct req *r)
{
	return r->auth;
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

void
api_note(struct req *r, const char *app_id, const char *type,
         const char *sandbox_id, struct jv *payload, const char *fmt, ...)
{
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];
	struct tl_event ev = {.app_id = app_id,
	                      .type = type,
	                      .sandbox_id = sandbox_id,
	                      .payload_json =
	                          tl_payload(payload, pl, sizeof(pl))};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ev.message, sizeof(ev.message), fmt, ap);
	va_end(ap);
	timeline_note(r->core->tl, &ev, "%s", ev.message);
}
