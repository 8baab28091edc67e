/*
 * /v1/sandboxes/{id}/processes/{name}/…: a declared process's log and
 * restart.  Logs are read from the workspace on the host (so they work
 * while the sandbox sleeps); restart asks the supervisor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "sandbox/activity.h"
#include "sandbox/runtime.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"
#include "lib/limits.h"

#define LOG_TAIL_DEFAULT 200
#define LOG_TAIL_MAX     5000
#define LOG_READ_MAX     (2u << 20) /* the supervisor caps a log at 1 MiB */

static bool
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

/* Appends to lines the last n lines of text (oldest first). */
static void
tail_lines(const char *text, size_t len, long n, struct jv *lines)
{
	size_t start, count = 0;

	if (len && text[len - 1] == '\n')
		len--;
	start = len;
	while (start > 0) {
		if (text[start - 1] == '\n' && ++count == (size_t)n)
			break;
		start--;
	}
	for (size_t i = start; i <= len && len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		jv_push(lines, jv_new_str_lossy(text + i, end - i));
		i = end + 1;
	}
}

/* Loads the sandbox for this tenant and checks the process name. */
static int
load(struct req *r, struct resp *w, struct sandbox *sb)
{
	if (api_load_sandbox(r, w, sb) < 0)
		return -1;
	if (!valid_name(r->name)) {
		api_fail(w, 400, "invalid_request",
		         "process names are lower-case letters, digits, _ and "
		         "-, at most 32");
		return -1;
	}
	return 0;
}

static long
tail_param(struct req *r, struct resp *w)
{
	bool bad;
	const char *v = api_query(r, w, "tail", &bad);
	char *end;
	long n;

	if (bad)
		return -1;
	if (v == NULL)
		return LOG_TAIL_DEFAULT;
	n = strtol(v, &end, 10);
	if (*v == '\0' || *end != '\0' || n < 1 || n > LOG_TAIL_MAX) {
		api_fail(w, 400, "invalid_request",
		         "tail must be a whole number from 1 to %d",
		         LOG_TAIL_MAX);
		return -1;
	}
	return n;
}

/* A remote sandbox's log (wsnode): its last LOG_READ_MAX bytes. */
static int
remote_log(struct core *c, const struct sandbox *sb, const char *rel,
           struct buf *text, struct err *e)
{
	char type[8];
	int64_t size, mtime;
	bool eof;

	buf_init(text, LOG_READ_MAX + 1);
	if (wsnode_stat(c->wn, sb, rel, type, &size, &mtime, e) < 0)
		return -1;
	if (strcmp(type, "file") != 0)
		return ERR_BAD(e, "%s is not a regular file", rel);
	return wsnode_read(c->wn, sb, rel,
	                   size > (int64_t)LOG_READ_MAX ? size - LOG_READ_MAX
	                                                : 0,
	                   LOG_READ_MAX, text, &eof, e);
}

/* The log at rel of sb's workspace, local or remote; text released by
 * the caller either way. */
static int
read_log(struct core *c, const struct sandbox *sb, const char *rel,
         struct buf *text, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];
	int wsfd, rc;

	if (wsnode_remote(sb))
		return remote_log(c, sb, rel, text, e);
	buf_init(text, LOG_READ_MAX);
	workspace_path(c->cfg->data_dir, sb->id, ws, sizeof(ws));
	if ((wsfd = wsfs_open_dir(ws, "", e)) < 0)
		return -1;
	rc = wsfs_read(wsfd, rel, LOG_READ_MAX, text, e);
	close(wsfd);
	return rc;
}

void
processes_logs(struct req *r, struct resp *w)
{
	char rel[128];
	struct jv *o, *lines;
	struct err e = {0};
	struct sandbox sb;
	struct buf text;
	long n;

	if (load(r, w, &sb) < 0 || (n = tail_param(r, w)) < 0)
		return;
	snprintf(rel, sizeof(rel), ".sandboxd/logs/%s.log", r->name);
	if (read_log(r->core, &sb, rel, &text, &e) < 0) {
		buf_release(&text);
		if (e.status == 404)
			ERR_NOTFOUND(&e, "no log for process \"%s\"", r->name);
		api_reply_err(w, &e);
		return;
	}
	lines = jv_arr();
	tail_lines(text.data, text.len, n, lines);
	buf_release(&text);
	o = jv_obj();
	jv_set_str(o, "process", r->name);
	jv_set(o, "lines", lines);
	api_reply_json(w, 200, o);
}

void
processes_restart(struct req *r, struct resp *w)
{
	char ws[WORKSPACE_PATH_MAX], line[128];
	struct err e = {0};
	struct sandbox sb;
	struct jv *ans, *o;

	if (load(r, w, &sb) < 0)
		return;
	if (sb.status != SANDBOX_RUNNING) {
		api_fail(w, 409, "conflict",
		         "sandbox is %s; start it to restart a process",
		         sandbox_state_name(sb.status));
		return;
	}
	if (core_sandbox_thaw(r->core, sb.id, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	workspace_path(r->core->cfg->data_dir, sb.id, ws, sizeof(ws));
	snprintf(line, sizeof(line), "restart %s\n", r->name);
	if (runtime_request(r->core, ws, line, RUNTIME_TIMEOUT_MS, &ans, &e) <
	    0) {
		api_reply_err(w, &e);
		return;
	}
	if (!jv_is_true(jv_get(ans, "ok"))) {
		api_fail(w, 404, "not_found", "no such process: %s", r->name);
		jv_free(ans);
		return;
	}
	jv_free(ans);
	activity_started(r->core->act,
	                 sb.id); /* the edge shows "starting" again */
	o = jv_obj();
	jv_set_str(o, "process", r->name);
	jv_set_bool(o, "restarted", true);
	api_reply_json(w, 200, o);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route processes_routes[] = {
    {.method = "GET",
     .pattern = "/v1/sandboxes/{id}/processes/{name}/logs",
     .fn = processes_logs},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/processes/{name}/restart",
     .fn = processes_restart},
    {0},
};
