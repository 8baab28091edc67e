/*
 * GET /v1/apps/{id}/export (or …/export.zip): the app's files as a zip,
 * made while it is sent (export/zipstream.h says what is in it and what
 * is left out).  The files are read on the host, from the workspace of
 * the app's sandbox, so an export works while the sandbox runs, sleeps
 * or is stopped; a sandbox's own writes meanwhile may or may not be in
 * it.  The body is pulled by the server a step at a time, only when the
 * client takes more, so a slow client holds memory of one step and two
 * descriptors, no thread and no lock, until the server's connection
 * timeout; a file that cannot be read ends the body unfinished (the
 * chunked transfer has no last chunk, the zip no central directory).
 * A sandbox on another node is exported from a copy of its workspace
 * fetched here first (its node's tar stream), removed once sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "export/zipstream.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"

#define EXPORT_SLUG_MAX 64 /* bytes of the file name's stem */

/* The archive being sent, and the local copy of a remote workspace it
 * reads ("" for a local one), removed once it is sent. */
struct export_pull {
	struct zipstream *z;
	int tmpfd;
	char tmp[WORKSPACE_PATH_MAX];
};

static ssize_t
pull_read(void *arg, char *buf, size_t max)
{
	struct export_pull *p = arg;

	return zipstream_read(p->z, buf, max);
}

static void
pull_free(void *arg)
{
	struct export_pull *p = arg;
	size_t files, left_out;

	zipstream_counts(p->z, &files, &left_out);
	log_info("export: %zu files stored, %zu entries left out", files,
	         left_out);
	zipstream_free(p->z);
	if (p->tmp[0])
		wsnode_shadow_drop(p->tmpfd, p->tmp);
	free(p);
}

/*
 * The app directory to zip: the local workspace's, or, for a sandbox on
 * another node, that of a copy of its workspace fetched here (its
 * dependency trees left out, as the archive leaves them out).
 */
static int
open_app(struct core *c, const char *id, struct export_pull *p, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];
	struct sandbox sb;

	p->tmpfd = -1;
	if (store_sandbox_get(c->store, id, &sb) == 0 && wsnode_remote(&sb)) {
		p->tmpfd = wsnode_fetch_tmp(c->wn, &sb, true, p->tmp,
		                            sizeof(p->tmp), e);
		if (p->tmpfd < 0)
			return -1;
		return wsfs_open_dir(p->tmp, "workspace/app", e);
	}
	workspace_path(c->cfg->data_dir, id, ws, sizeof(ws));
	return wsfs_open_dir(ws, "workspace/app", e);
}

/* ?git=true|false (default false); -1 with 400 in w. */
static int
git_param(struct req *r, struct resp *w, bool *out)
{
	bool bad;
	const char *v = api_query(r, w, "git", &bad);

	if (bad)
		return -1;
	*out = v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
	if (v && !*out && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
		api_fail(w, 400, "invalid_request",
		         "git must be true or false");
		return -1;
	}
	return 0;
}

void
apps_export(struct req *r, struct resp *w)
{
	char name[EXPORT_SLUG_MAX + 1];
	struct export_pull *p;
	struct err e = {0};
	struct app a;
	bool git;
	int fd;

	if (api_load_app(r, w, &a) < 0 || git_param(r, w, &git) < 0)
		return;
	if (a.current_sandbox_id[0] == '\0') {
		api_fail(w, 409, "conflict",
		         "app %s has no files: it has no sandbox (create one "
		         "with POST /v1/sandboxes)",
		         a.id);
		return;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		api_fail(w, 500, "internal", "out of memory");
		return;
	}
	fd = open_app(r->core, a.current_sandbox_id, p, &e);
	if (fd < 0 || zipstream_open(fd, git, &p->z) < 0) {
		if (fd < 0)
			api_reply_err(w, &e);
		else
			api_fail(w, 500, "internal",
			         "cannot start the archive");
		if (p->tmp[0])
			wsnode_shadow_drop(p->tmpfd, p->tmp);
		free(p);
		return;
	}
	utf8_slug(a.name, EXPORT_SLUG_MAX, name, sizeof(name));
	snprintf(w->disposition, sizeof(w->disposition),
	         "attachment; filename=\"%s.zip\"", name);
	w->status = 200;
	w->content_type = "application/zip";
	w->pull =
	    (struct api_pull){.read = pull_read, .free = pull_free, .arg = p};
}

const struct route export_routes[] = {
    {.method = "GET", .pattern = "/v1/apps/{id}/export", .fn = apps_export},
    {.method = "GET", .pattern = "/v1/apps/{id}/export.zip", .fn = apps_export},
    {0},
};
