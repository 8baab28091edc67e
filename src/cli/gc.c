/*
 * `sandboxd gc [--yes] [--repo NAME]`: what can go.  Dry run by default
 * (it lists and removes nothing); --yes removes.
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
 * --repo NAME limits the images to those tagged NAME:<tag>.
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
 * Exit status: 0, 1 when a removal failed, 2 usage or configuration.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config/config.h"
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
	const struct used *used;
	const char *keep; /* the configured image's id */
	const char *repo; /* NULL: any */
	bool yes;
	int64_t bytes;
	int listed, failed;
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

	if (strcmp(im->label, "base") != 0 || strcmp(im->id, s->keep) == 0 ||
	    is_used(s->used, im->id))
		return;
	if (s->repo && (im->dangling || !in_repo(im->tag, s->repo)))
		return;
	s->listed++;
	s->bytes += im->size;
	printf("%s image %.19s %s (%lld MiB): %s\n",
	       s->yes ? "removing" : "would remove", im->id,
	       im->dangling ? "<dangling>" : im->tag,
	       (long long)(im->size >> 20),
	       im->dangling ? "a dangling layer of an old base image"
	                    : "a base image no sandbox uses");
	/* By id: an image with another tag too is refused, not untagged. */
	if (s->yes && docker_image_remove(s->d, im->id, msg) != DOCKER_OK) {
		printf("  not removed: %s\n", msg);
		s->failed++;
	}
}

static void
sweep_trash(const struct config *cfg, bool yes, int64_t *bytes, int *n)
{
	char path[PATH_MAX + 16], entry[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/trash", cfg->data_dir);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int64_t b;
		if (de->d_name[0] == '.' ||
		    strcmp(de->d_name, WORKSPACE_KEPT_DIR) == 0)
			continue;
		snprintf(entry, sizeof(entry), "%s/%s", path, de->d_name);
		b = ws_usage_walk(entry, NULL);
		*bytes += b > 0 ? b : 0;
		(*n)++;
		printf("%s trash %s (%lld MiB)\n",
		       yes ? "removing" : "would remove", entry,
		       (long long)((b > 0 ? b : 0) >> 20));
	}
	closedir(d);
	if (yes && *n)
		workspace_empty_trash(cfg->data_dir);
}

static void
count_kept(const struct config *cfg)
{
	char path[PATH_MAX + 32], entry[PATH_MAX + 300];
	int64_t bytes = 0;
	struct dirent *de;
	int n = 0;
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
		bytes += b > 0 ? b : 0;
		n++;
	}
	closedir(d);
	if (n)
		printf("keeping %d deleted app%s in the trash (%lld MiB): "
		       "purged after SANDBOXD_TRASH_RETENTION_SECONDS "
		       "(%llds), or now with `sandboxd trash purge ID`\n",
		       n, n == 1 ? "" : "s", (long long)(bytes >> 20),
		       (long long)cfg->trash_retention_s);
}

static int
gc(const struct config *cfg, bool yes, const char *repo)
{
	struct used u = {.ids = calloc(GC_IDS_MAX, 80)};
	struct sweep s = {.used = &u, .repo = repo, .yes = yes};
	char keep[80], msg[DOCKER_MSG_LEN];
	int64_t trash = 0, store = 0;
	int ntrash = 0, nstore = 0, rc = 1;

	if (u.ids == NULL || docker_new(&s.d, cfg->docker_socket) < 0)
		goto out;
	if (docker_image_id(s.d, cfg->image, keep, msg) != DOCKER_OK)
		keep[0] = '\0'; /* missing: nothing matches it */
	s.keep = keep;
	if (docker_containers_all(s.d, note_used, &u, msg) != DOCKER_OK ||
	    u.n == GC_IDS_MAX) {
		fprintf(stderr, "sandboxd gc: %s\n",
		        u.n == GC_IDS_MAX ? "too many containers to be sure "
		                            "which images they use"
		                          : msg);
		goto out;
	}
	if (docker_images(s.d, sweep_image, &s, msg) != DOCKER_OK) {
		fprintf(stderr, "sandboxd gc: %s\n", msg);
		goto out;
	}
	sweep_trash(cfg, yes, &trash, &ntrash);
	count_kept(cfg);
	if (dedup_gc(cfg->data_dir, yes, &nstore, &store) < 0)
		fprintf(stderr, "sandboxd gc: cannot read %s/store\n",
		        cfg->data_dir);
	printf("%s %d unused store entr%s (%lld KiB)\n",
	       yes ? "removed" : "would remove", nstore,
	       nstore == 1 ? "y" : "ies", (long long)(store >> 10));
	printf("%s %d image%s (%lld MiB) and %d trash entr%s (%lld MiB)%s\n",
	       yes ? "removed" : "would remove", s.listed - s.failed,
	       s.listed - s.failed == 1 ? "" : "s", (long long)(s.bytes >> 20),
	       ntrash, ntrash == 1 ? "y" : "ies", (long long)(trash >> 20),
	       yes ? "" : "; run with --yes to remove them");
	rc = s.failed ? 1 : 0;
out:
	docker_free(s.d);
	free(u.ids);
	return rc;
}

int
cmd_gc(int argc, char **argv)
{
	const char *repo = NULL;
	struct config cfg;
	char err[512];
	bool yes = false;
	int rc;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--yes") == 0) {
			yes = true;
		} else if (strcmp(argv[i], "--repo") == 0 && i + 1 < argc) {
			repo = argv[++i];
		} else {
			fprintf(stderr,
			        "usage: sandboxd gc [--yes] [--repo NAME]\n");
			return 2;
		}
	}
	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	rc = gc(&cfg, yes, repo);
	config_release(&cfg);
	return rc;
}
