/*
 * Disk use per app (diskuse.h).  A pass copies the sandbox rows (id,
 * app) out of the store first, so no store lock is held while a tree is
 * walked, then walks each workspace (ws_usage_walk: no symlinks, no
 * other mounts, at most WS_USAGE_MAX_MS and WS_USAGE_MAX_ENTRIES each),
 * then each app's directory of releases (<data>/releases/<app id>, by
 * its name: no store row is needed, and an app in the trash keeps its
 * releases there, counted), and swaps the new table in under the
 * table's mutex, which readers hold only to copy one entry.  Apps gone since
 * the last pass drop out with the swap.  The table is a lib/idtab over a fixed
 * array; a pass holds at most DISKUSE_SLOTS rows, so it never fills, and no
 * entry is ever reused (all are pinned: a full table takes no more). The table
 * is the handle's (struct diskuse), made by serve(), whose periodic jobs
 * (lib/periodic.h) run the passes; a pass watches the handle's own stop flag.
 */
#include "disk/diskuse.h"

#include "disk/dedup.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/idtab.h"
#include "lib/log.h"
#include "ws/usage.h"
#include "ws/workspace.h"

struct slot {
	char app[ULID_LEN + 1];
	struct diskuse_figure v;
};

struct diskuse {
	const struct config *cfg;
	struct store *store;
	struct dedup *dedup;
	pthread_mutex_t mu;
	struct slot s[DISKUSE_SLOTS]; /* under mu */
	struct idtab tab;             /* over s */
	atomic_bool stopping;         /* diskuse_stop: a pass in flight ends */
};

/* No entry is reused: a pass makes the table anew. */
static int64_t
slot_keep(const void *entry)
{
	(void)entry;
	return IDTAB_PINNED;
}

struct diskuse *
diskuse_new(const struct config *cfg, struct store *store, struct dedup *dedup)
{
	struct diskuse *du = calloc(1, sizeof(*du));

	if (du == NULL)
		return NULL;
	du->cfg = cfg;
	du->store = store;
	du->dedup = dedup;
	pthread_mutex_init(&du->mu, NULL);
	idtab_init(&du->tab, du->s, DISKUSE_SLOTS, sizeof(du->s[0]), slot_keep);
	return du;
}

void
diskuse_free(struct diskuse *du)
{
	if (du == NULL)
		return;
	diskuse_stop(du);
	pthread_mutex_destroy(&du->mu);
	free(du);
}

struct rows {
	struct {
		char id[ULID_LEN + 1];
		char app[ULID_LEN + 1];
	} * r;
	size_t n;
};

static int
copy_row(const struct sandbox *sb, void *arg)
{
	struct rows *rows = arg;

	if (rows->n == DISKUSE_SLOTS)
		return 1;
	if (sb->node[0]) /* on another node: its disk is measured there */
		return 0;
	memcpy(rows->r[rows->n].id, sb->id, sizeof(sb->id));
	memcpy(rows->r[rows->n].app, sb->app_id, sizeof(sb->app_id));
	rows->n++;
	return 0;
}

/* Whether name is exactly an id (ULID, upper case): a release or an app
 * directory; anything else (a build's temporary) is not counted. */
static bool
is_id(const char *name)
{
	char id[ULID_LEN + 1];

	return ulid_parse(name, id) && strcmp(id, name) == 0;
}

/* The release directories of one app's directory. */
static int64_t
count_releases(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int64_t n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) &&
		     is_id(de->d_name);
	closedir(d);
	return n;
}

/* Each app's releases (<data>/releases/<app id>) into tab. */
static void
releases_pass(struct diskuse *du, struct idtab *tab)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/" DISKUSE_RELEASES_DIR,
	         du->cfg->data_dir);
	if ((d = opendir(dir)) == NULL)
		return;
	while (!atomic_load(&du->stopping) && (de = readdir(d)) != NULL) {
		struct slot *s;
		bool partial = false;
		int64_t b;

		if (!is_id(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		b = ws_usage_walk(path, &partial);
		if (b < 0 || (s = idtab_put(tab, de->d_name)) == NULL)
			continue;
		s->v.releases = count_releases(path);
		s->v.releases_bytes = b;
		s->v.partial = s->v.partial || partial;
		s->v.measured_at = clock_now();
	}
	closedir(d);
}

void
diskuse_pass(struct diskuse *du)
{
	struct rows rows = {.r = calloc(DISKUSE_SLOTS, sizeof(*rows.r))};
	struct slot *next = calloc(DISKUSE_SLOTS, sizeof(*next));
	struct ws_inoset shared_set = {0};
	struct idtab tab;
	char path[PATH_MAX + 64];

	idtab_init(&tab, next, DISKUSE_SLOTS, sizeof(*next), slot_keep);
	if (rows.r == NULL || next == NULL ||
	    store_sandbox_list(du->store, copy_row, &rows) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/store", du->cfg->data_dir);
	ws_inoset_load(path, &shared_set);
	for (size_t i = 0; i < rows.n && !atomic_load(&du->stopping); i++) {
		struct slot *s;
		bool partial = false;
		int64_t b, shared = 0;

		workspace_path(du->cfg->data_dir, rows.r[i].id, path,
		               sizeof(path));
		b = ws_usage_walk_shared(path, &shared_set, &shared, &partial);
		/* Made only once measured: a failed walk leaves no figure. */
		if (b < 0 || (s = idtab_put(&tab, rows.r[i].app)) == NULL)
			continue;
		/* Also a dedup pass now and then: one missed at a boot (the
		 * supervisor slow to answer) or files installed outside a
		 * task.  Over a done tree it only reads directories. */
		dedup_kick(du->dedup, rows.r[i].id);
		s->v.bytes = b;
		s->v.shared = shared;
		s->v.workspace = true;
		s->v.partial = partial;
		s->v.measured_at = clock_now();
	}
	releases_pass(du, &tab);
	pthread_mutex_lock(&du->mu);
	memcpy(du->s, next, sizeof(du->s));
	pthread_mutex_unlock(&du->mu);
out:
	ws_inoset_release(&shared_set);
	free(rows.r);
	free(next);
}

bool
diskuse_get(struct diskuse *du, const char *app_id, struct diskuse_figure *out)
{
	struct slot *s;
	bool found = false;

	if (du == NULL)
		return false;
	pthread_mutex_lock(&du->mu);
	if ((s = idtab_get(&du->tab, app_id)) != NULL) {
		*out = s->v;
		found = true;
	}
	pthread_mutex_unlock(&du->mu);
	return found;
}

void
diskuse_stop(struct diskuse *du)
{
	if (du == NULL)
		return;
	atomic_store(&du->stopping, true);
}
