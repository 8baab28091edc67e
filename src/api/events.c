/*
 * An app's activity timeline (timeline/timeline.h): GET
 * /v1/apps/{id}/events pages it newest first by a cursor (the id of the
 * last event seen, ?before=), GET /v1/apps/{id}/events/stream follows it
 * live as text/event-stream, from Last-Event-ID (or ?after=) when given.
 * Another tenant's app is 404, as everywhere.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "lib/num.h"
#include "timeline/timeline.h"

/* A type prefix: lower-case letters, digits, '.' and '_' only. */
static bool
type_ok(const char *t)
{
	if (strlen(t) > STORE_EVENT_TYPE_MAX)
		return false;
	for (; *t; t++)
		if (!((*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9') ||
		      *t == '.' || *t == '_'))
			return false;
	return true;
}

/*
 * The query's cursor (key) and type: -1 with the answer in w when either
 * is bad.  cursor is "" when absent.
 */
static int
cursor_and_type(struct req *r, struct resp *w, const char *key, const char *hdr,
                char cursor[ULID_LEN + 1], const char **type)
{
	const char *c, *from = key;
	bool bad = false;

	c = api_query(r, w, key, &bad);
	if (!bad && c == NULL && hdr) {
		c = api_header(r, hdr);
		from = hdr;
	}
	*type = bad ? NULL : api_query(r, w, "type", &bad);
	if (bad)
		return -1;
	cursor[0] = '\0';
	if (c && *c && !ulid_parse(c, cursor)) {
		api_fail(w, 400, "invalid_request",
		         "%s must be an event id (a 26-character ULID)", from);
		return -1;
	}
	if (*type && !type_ok(*type)) {
		api_fail(w, 400, "invalid_request",
		         "type must be an event type or its prefix (a-z, 0-9, "
		         "'.', '_'; at most %d bytes)",
		         STORE_EVENT_TYPE_MAX);
		return -1;
	}
	return 0;
}

struct page {
	struct jv *arr;
	int n, limit;
	char last[ULID_LEN + 1];
};

static int
page_one(const struct app_event *ev, void *arg)
{
	struct page *p = arg;

	if (p->n == p->limit)
		return 1; /* one more than the page: there is a next one */
	jv_push(p->arr, timeline_event_json(ev));
	memcpy(p->last, ev->id, sizeof(p->last));
	p->n++;
	return 0;
}

void
events_list(struct req *r, struct resp *w)
{
	char before[ULID_LEN + 1];
	struct page p = {0};
	const char *lim, *type;
	struct app a;
	struct jv *o;
	bool bad = false;
	int rc;

	if (api_load_app(r, w, &a) < 0)
		return;
	lim = api_query(r, w, "limit", &bad);
	if (bad || cursor_and_type(r, w, "before", NULL, before, &type) < 0)
		return;
	p.limit = lim ? (int)num_long(lim, -1) : TL_PAGE_DEFAULT;
	if (p.limit < 1 || p.limit > TL_PAGE_MAX) {
		api_fail(w, 400, "invalid_request",
		         "limit must be an integer from 1 to %d", TL_PAGE_MAX);
		return;
	}
	p.arr = jv_arr();
	rc = store_event_list(r->core->store, a.id, before[0] ? before : NULL,
	                      NULL, type, p.limit + 1, page_one, &p);
	if (rc < 0) {
		jv_free(p.arr);
		api_fail(w, 500, "internal", "cannot read the events");
		return;
	}
	o = jv_obj();
	jv_set(o, "events", p.arr);
	jv_set(o, "next_before", rc == 1 ? jv_new_str(p.last) : jv_new_null());
	api_reply_json(w, 200, o);
}

static ssize_t
sub_read(void *arg, char *buf, size_t max)
{
	return timeline_sub_read(arg, buf, max);
}

static void
sub_free(void *arg)
{
	timeline_sub_close(arg);
}

void
events_stream(struct req *r, struct resp *w)
{
	char after[ULID_LEN + 1];
	struct tl_sub *sub;
	const char *type;
	struct app a;

	if (api_load_app(r, w, &a) < 0 ||
	    cursor_and_type(r, w, "after", "Last-Event-ID", after, &type) < 0)
		return;
	if (timeline_sub_open(r->core->tl, a.id, after[0] ? after : NULL, type,
	                      api_stream_suspend, api_stream_resume, r->conn,
	                      &sub) < 0) {
		api_fail(w, 503, "event_streams_full",
		         "%d event streams are open; try again later",
		         TL_SUBS_MAX);
		return;
	}
	w->status = 200;
	w->sse = (struct api_sse){sub_read, sub_free, sub};
}

/* The routes of this file, in the router's order (routes.c). */
const struct route events_routes[] = {
    {.method = "GET", .pattern = "/v1/apps/{id}/events", .fn = events_list},
    {.method = "GET",
     .pattern = "/v1/apps/{id}/events/stream",
     .fn = events_stream},
    {0},
};
