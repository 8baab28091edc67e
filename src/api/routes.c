/*
 * The API's router: the route tables and the matching (routes.h).
 *
 * Each handler file exports its own routes (NAME_routes[], api.h, ended
 * by a row whose method is NULL) next to the handlers they name, and
 * tables[] below lists those tables in the order they are matched: the
 * first route whose pattern and method match wins, and a 405's Allow
 * lists the methods in this order.  So the router names no handler and
 * a handler file names only its own handlers and the helpers below it
 * (reply.c): the calls between the files of api/ go one way.
 *
 * Rejected: one table of every row here (the order in one place, but
 * this file would name every handler of every file, and a resource's
 * routes would live away from its handlers); registration at start by
 * constructor functions (the order of matching would then be the
 * linker's, and it matters for the Allow header and for patterns that
 * overlap); and keeping the table in server.c, which made server.c and
 * every handler one cycle (each names the other).
 */
#include "api/routes.h"

#include <stdio.h>
#include <string.h>

#include "lib/limits.h"
#include "timeline/timeline.h"

/* The order of matching: do not sort. */
static const struct route *const tables[] = {
    health_routes,  signin_routes,    status_routes,    metrics_routes,
    presets_routes, apps_routes,      export_routes,    trash_routes,
    pvlinks_routes, sandboxes_routes, processes_routes, files_routes,
    tasks_routes,   agents_routes,    spend_routes,     settings_routes,
    config_routes,  git_routes,       gitpush_routes,   gitcreds_routes,
    tokens_routes,  events_routes,    snapshots_routes, terminal_routes,
    recipes_routes, publish_routes,   domains_routes,   releaselog_routes,
    nodes_routes,
};

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

const struct route *
api_route_find(struct req *r, bool *path_known, bool *bad_id, char *allow,
               size_t allowlen)
{
	*path_known = false;
	if (allow)
		allow[0] = '\0';
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (const struct route *rt = tables[t]; rt->method; rt++) {
			bool bad;
			if (!route_match(rt->pattern, r->path, r, &bad))
				continue;
			*path_known = true;
			if (method_matches(rt, r->method)) {
				*bad_id = bad;
				return rt;
			}
			if (allow) {
				size_t n = strlen(allow);
				snprintf(allow + n, allowlen - n, "%s%s",
				         n ? ", " : "", rt->method);
			}
		}
	}
	return NULL;
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

void
api_dispatch(struct req *r, struct resp *w)
{
	const struct route *found;
	bool bad_id = false, known;

	found = api_route_find(r, &known, &bad_id, w->allow, sizeof(w->allow));
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
		/* Who the timeline's events of this request name. */
		tl_set_actor(r->via == API_VIA_SESSION ? "console" : r->owner);
		found->fn(r, w);
		tl_set_actor(NULL);
		full_disk_answer(r, w);
	}
}
