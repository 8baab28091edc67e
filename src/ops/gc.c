/*
 * gc (gc.h): what `sandboxd gc` may remove.  Dry run by default (it
 * finds and removes nothing); yes removes.  The command line prints.
 *
 * An image is a candidate when it carries our label sandboxd.image
 * (the base image sets it; a rebuilt base leaves the old one behind,
 * tagged or dangling), is not the image SANDBOXD_IMAGE names (compared
 * by ID, not by tag), and no container on the engine uses it, running
 * or stopped, ours or not.  A sleeping sandbox is a stopped container,
 * so its image is never a candidate: this is why gc never runs `docker
 * image prune -a`, which would take it.  Images without our label are
 * never ours to judge, dangling or not.  The engine's own refusal to
 * remove an image a container uses (409 without force, which we never
 * send) is a second guard against a container made meanwhile.
 * A repo limits the images to those tagged NAME:<tag>.
 *
 * The trash (<data>/trash: workspaces of deleted sandboxes whose
 * removal was interrupted) is listed and, with --yes, emptied.  The
 * kept workspaces of deleted apps (<data>/trash/kept, trash/trash.h) are
 * counted, never removed here: the daemon purges them after the
 * retention, `sandboxd trash purge` at once (gc runs without the
 * daemon, which owns their database rows).  The dependency store files
 * they link stay in use (their link count is above 1).
 * The dependency store (<data>/store, disk/dedup.h): an entry whose
 * link count is 1 is linked by no workspace any more and goes, with a
 * temporary a crashed pass left behind over an hour ago.
 * The dependency cache (<data>/depcache, depcache/depcache.h): an entry
 * no app was seeded from for SANDBOXD_DEPCACHE_MAX_AGE_DAYS, and a
 * temporary of a save that died over an hour ago, go first, so the
 * store entries only they held go in the same run (a dry run cannot
 * count those: they are still linked).
 * The release directories of apps that are gone and the build
 * containers left over are gc_publish.c's (its opening comment).
 * Rejected: printing here (the command line owns what it says, and a
 * caller other than it may want the findings).
 */
#include "ops/gc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depcache/depcache.h"
#include "disk/dedup.h"
#include "docker/docker.h"
#include "ws/usage.h"
#include "ws/workspace.h"

#define GC_IDS_MAX 8192 /* image ids containers use, remembered */

struct used {
	char (*ids)[80];
	size_t n;
};

static void
note_used(const struct docker_container *c, void *arg)
{
	struct used *u = arg;

	if (u->n < GC_IDS_MAX)
		snprintf(u->ids[u->n++], 80, "%s", c->image_id);
}

static bool
is_used(const struct used *u, const char *id)
{
	for (size_t i = 0; i < u->n; i++)
		if (strcmp(u->ids[i], id) == 0)
			return true;
	return false;
}

struct sweep {
	struct docker *d;
	struct used used; /* the image ids containers use */
	const char *keep; /* the configured image's id */
	const char *repo; /* NULL: any */
	bool yes;
	gc_note_fn *note;
	void *arg;
	struct gc_result *r;
};

static bool
in_repo(const char *tag, const char *repo)
{
	size_t n = repo ? strlen(repo) : 0;

	return repo == NULL || (strncmp(tag, repo, n) == 0 && tag[n] == ':');
}

static void
sweep_image(const struct docker_image *im, void *arg)
{
	struct sweep *s = arg;
	char msg[DOCKER_MSG_LEN];
	struct gc_found f = {.kind = GC_IMAGE,
	                     .name = im->id,
	                     .tag = im->tag,
	                     .dangling = im->dangling,
	                     .bytes = im->size};

	if (strcmp(im->label, "base") != 0 || strcmp(im->id, s->keep) == 0 ||
	    is_used(&s->used, im->id))
		return;
	if (s->repo && (im->dangling || !in_repo(im->tag, s->repo)))
		return;
	s->r->images++;
	s->r->image_bytes += im->size;
	/* By id: an image with another tag too is refused, not untagged. */
	if (s->yes && docker_image_remove(s->d, im->id, msg) != DOCKER_OK) {
		f.error = msg;
		s->r->images_failed++;
	}
	s->note(&f, s->arg);
}

static void
sweep_trash(const struct config *cfg, bool yes, gc_note_fn *note, void *arg,
            struct gc_result *r)
{
	char path[PATH_MAX + 16], entry[PATH_MAX + 300];
	struct gc_found f = {.kind = GC_TRASH, .name = entry};
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/trash", cfg->data_dir);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strcmp(de->d_name, WORKSPACE_KEPT_DIR) == 0)
			continue;
		snprintf(entry, sizeof(entry), "%s/%s", path, de->d_name);
		f.bytes = ws_usage_walk(entry, NULL);
		f.bytes = f.bytes > 0 ? f.bytes : 0;
		r->trash_bytes += f.bytes;
		r->trash++;
		note(&f, arg);
	}
	closedir(d);
	if (yes && r->trash)
		workspace_empty_trash(cfg->data_dir);
}

static void
count_kept(const struct config *cfg, struct gc_result *r)
{
	char path[PATH_MAX + 32], entry[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/trash/" WORKSPACE_KEPT_DIR,
	         cfg->data_dir);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int64_t b;
		if (de->d_name[0] == '.')
			continue;
		snprintf(entry, sizeof(entry), "%s/%s", path, de->d_name);
		b = ws_usage_walk(entry, NULL);
		r->kept_bytes += b > 0 ? b : 0;
		r->kept++;
	}
	closedir(d);
}

/* The images: those no container uses and not the configured one. */
static int
sweep_images(struct sweep *s, const struct config *cfg, char *err,
             size_t errlen)
{
	struct used *u = &s->used;
	char keep[80], msg[DOCKER_MSG_LEN];
	int rc = -1;

	err[0] = '\0';
	u->ids = calloc(GC_IDS_MAX, 80);
	if (u->ids == NULL || docker_new(&s->d, cfg->docker_socket) < 0)
		goto out;
	if (docker_image_id(s->d, cfg->image, keep, msg) != DOCKER_OK)
		keep[0] = '\0'; /* missing: nothing matches it */
	s->keep = keep;
	if (docker_containers_all(s->d, note_used, u, msg) != DOCKER_OK ||
	    u->n == GC_IDS_MAX) {
		snprintf(err, errlen, "%s",
		         u->n == GC_IDS_MAX ? "too many containers to be sure "
		                              "which images they use"
		                            : msg);
		goto out;
	}
	if (docker_images(s->d, sweep_image, s, msg) != DOCKER_OK) {
		snprintf(err, errlen, "%s", msg);
		goto out;
	}
	if (gc_builds(s->d, cfg, s->yes, s->note, s->arg, s->r, err, errlen) <
	    0)
		goto out;
	rc = 0;
out:
	docker_free(s->d);
	s->d = NULL;
	free(u->ids);
	u->ids = NULL;
	s->keep = NULL;
	return rc;
}

int
gc_run(const struct config *cfg, bool yes, const char *repo, gc_note_fn *note,
       void *arg, struct gc_result *r, char *err, size_t errlen)
{
	struct sweep s = {
	    .repo = repo, .yes = yes, .note = note, .arg = arg, .r = r};

	memset(r, 0, sizeof(*r));
	if (sweep_images(&s, cfg, err, errlen) < 0)
		return -1;
	sweep_trash(cfg, yes, note, arg, r);
	count_kept(cfg, r);
	gc_releases(cfg, yes, note, arg, r);
	r->depcache_unreadable =
	    depcache_gc(cfg->data_dir, cfg->depcache_max_age_days, yes,
	                &r->depcache, &r->depcache_bytes) < 0;
	r->store_unreadable =
	    dedup_gc(cfg->data_dir, yes, &r->store, &r->store_bytes) < 0;
	return 0;
}
