/*
 * gc's part of publishing (gc.h): the release directories of apps that
 * no longer exist, and the build containers a crash left behind.
 *
 * An app's releases live in <data>/releases/<app id> (publish/publish.h)
 * and go with the app (publish_app_gone, at a delete or a purge); a
 * directory whose app has no row in the database is left over from an
 * interrupted removal.  The directory is listed first and the app ids
 * read after, so an app made in between cannot be taken for gone: its
 * row exists before its first release directory.  Without a database
 * that can be read nothing is judged (every directory would look
 * orphaned).  An app in the trash keeps its row, so its releases stay.
 *
 * A build container carries the label sandboxd.build (its release) and
 * the instance's label; one that is not running belongs to a build that
 * ended without its daemon removing it (a kill -9: the next start
 * removes it too).  A running one may be a build under way, and is
 * never touched here.
 */
#include "ops/gc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "docker/docker.h"
#include "lib/ulid.h"
#include "store/backup.h"
#include "ws/usage.h"

#define GC_RELEASE_APPS_MAX 8192 /* app directories judged in one run */

struct ids {
	char (*v)[ULID_LEN + 1];
	bool *known;
	size_t n;
};

static void
mark_known(const char *id, void *arg)
{
	struct ids *d = arg;

	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i], id) == 0)
			d->known[i] = true;
}

/* The ids of <data>/releases' app directories into d; -1 unreadable. */
static int
list_app_dirs(const char *dir, struct ids *d)
{
	char id[ULID_LEN + 1];
	struct dirent *de;
	DIR *dp = opendir(dir);

	if (dp == NULL)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(dp)) != NULL && d->n < GC_RELEASE_APPS_MAX)
		if (ulid_parse(de->d_name, id) && strcmp(id, de->d_name) == 0)
			memcpy(d->v[d->n++], id, sizeof(id));
	closedir(dp);
	return 0;
}

void
gc_releases(const struct config *cfg, bool yes, gc_note_fn *note, void *arg,
            struct gc_result *r)
{
	char dir[PATH_MAX], db[PATH_MAX + 32], entry[PATH_MAX + 64], err[256];
	struct gc_found f = {.kind = GC_RELEASES, .name = entry};
	struct ids d = {0};

	snprintf(dir, sizeof(dir), "%s/releases", cfg->data_dir);
	snprintf(db, sizeof(db), "%s/state/sandboxd.db", cfg->data_dir);
	d.v = calloc(GC_RELEASE_APPS_MAX, sizeof(*d.v));
	d.known = calloc(GC_RELEASE_APPS_MAX, sizeof(*d.known));
	if (d.v == NULL || d.known == NULL || list_app_dirs(dir, &d) < 0) {
		r->releases_unreadable = true;
		goto out;
	}
	if (d.n == 0)
		goto out;
	if (access(db, F_OK) < 0 ||
	    store_db_app_ids(db, mark_known, &d, err, sizeof(err)) < 0) {
		r->releases_unreadable = true;
		goto out;
	}
	for (size_t i = 0; i < d.n; i++) {
		if (d.known[i])
			continue;
		snprintf(entry, sizeof(entry), "%s/%s", dir, d.v[i]);
		f.bytes = ws_usage_walk(entry, NULL);
		f.bytes = f.bytes > 0 ? f.bytes : 0;
		f.error =
		    yes && copytree_remove(entry) < 0 ? strerror(errno) : NULL;
		r->releases++;
		r->releases_bytes += f.bytes;
		note(&f, arg);
	}
out:
	free(d.v);
	free(d.known);
}

struct builds {
	struct docker *d;
	const char *instance;
	bool yes;
	gc_note_fn *note;
	void *arg;
	struct gc_result *r;
};

static void
sweep_build(const struct docker_container *c, void *arg)
{
	struct builds *b = arg;
	char msg[DOCKER_MSG_LEN];
	struct gc_found f = {.kind = GC_BUILD, .name = c->id, .tag = c->build};

	if (c->build[0] == '\0' || strcmp(c->instance, b->instance) != 0 ||
	    strcmp(c->state, "running") == 0)
		return;
	if (b->yes && docker_remove(b->d, c->id, msg) != DOCKER_OK)
		f.error = msg;
	b->r->builds++;
	b->note(&f, b->arg);
}

int
gc_builds(struct docker *d, const struct config *cfg, bool yes,
          gc_note_fn *note, void *arg, struct gc_result *r, char *err,
          size_t errlen)
{
	char db[PATH_MAX + 32], msg[DOCKER_MSG_LEN];
	struct store_db_info info;
	struct builds b = {
	    .d = d, .yes = yes, .note = note, .arg = arg, .r = r};

	snprintf(db, sizeof(db), "%s/state/sandboxd.db", cfg->data_dir);
	/* No database, no instance: no container can be told ours. */
	if (access(db, F_OK) < 0 || store_db_peek(db, &info, err, errlen) < 0 ||
	    !info.instance[0])
		return 0;
	b.instance = info.instance;
	if (docker_containers_all(d, sweep_build, &b, msg) != DOCKER_OK) {
		snprintf(err, errlen, "%s", msg);
		return -1;
	}
	return 0;
}
