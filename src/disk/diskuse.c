/*
 * Disk use per app (diskuse.h).  A pass copies the sandbox rows (id,
 * app) out of the store first, so no store lock is held while a tree is
 * walked, then walks each workspace (ws_usage_walk: no symlinks, no
 * other mounts, at most WS_USAGE_MAX_MS and WS_USAGE_MAX_ENTRIES each)
 * and swaps the new table in under the table's mutex, which readers
 * hold only to copy one entry.  Apps gone since the last pass drop out
 * with the swap.  The table is open-addressed by the app id's hash.
 * The table is the handle's (struct diskuse), made by serve(), whose
 * periodic jobs (lib/periodic.h) run the passes; a pass watches the
 * handle's own stop flag.
 */
#include "disk/diskuse.h"

#include "disk/dedup.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/hash.h"
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
	atomic_bool stopping;         /* diskuse_stop: a pass in flight ends */
};

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

static struct slot *
find(struct slot *s, const char *app, bool make)
{
	size_t i = hash_fnv1a(app) % DISKUSE_SLOTS;

	for (size_t k = 0; k < DISKUSE_SLOTS;
	     k++, i = (i + 1) % DISKUSE_SLOTS) {
		if (strcmp(s[i].app, app) == 0)
			return &s[i];
		if (s[i].app[0] == '\0')
			return make ? &s[i] : NULL;
	}
	return NULL;
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
	memcpy(rows->r[rows->n].id, sb->id, sizeof(sb->id));
	memcpy(rows->r[rows->n].app, sb->app_id, sizeof(sb->app_id));
	rows->n++;
	return 0;
}

void
diskuse_pass(struct diskuse *du)
{
	struct rows rows = {.r = calloc(DISKUSE_SLOTS, sizeof(*rows.r))};
	struct slot *next = calloc(DISKUSE_SLOTS, sizeof(*next));
	struct ws_inoset shared_set = {0};
	char path[PATH_MAX + 64];

	if (rows.r == NULL || next == NULL ||
	    store_sandbox_list(du->store, copy_row, &rows) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/store", du->cfg->data_dir);
	ws_inoset_load(path, &shared_set);
	for (size_t i = 0; i < rows.n && !atomic_load(&du->stopping); i++) {
		struct slot *s = find(next, rows.r[i].app, true);
		bool partial = false;
		int64_t b, shared = 0;

		workspace_path(du->cfg->data_dir, rows.r[i].id, path,
		               sizeof(path));
		b = ws_usage_walk_shared(path, &shared_set, &shared, &partial);
		if (s == NULL || b < 0)
			continue;
		/* Also a dedup pass now and then: one missed at a boot (the
		 * supervisor slow to answer) or files installed outside a
		 * task.  Over a done tree it only reads directories. */
		dedup_kick(du->dedup, rows.r[i].id);
		memcpy(s->app, rows.r[i].app, sizeof(s->app));
		s->v.bytes = b;
		s->v.shared = shared;
		s->v.partial = partial;
		s->v.measured_at = clock_now();
	}
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
	if ((s = find(du->s, app_id, false)) != NULL) {
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
