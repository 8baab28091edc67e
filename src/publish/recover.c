/*
 * Recovery at start (publish_recover), what makes kill -9 mid-publish
 * harmless: a release left "building" is failed ("the daemon stopped
 * during the build"), its build container and half-made files removed;
 * a publication's active release was never touched by the build (a
 * release's directory is its own, and the switch to a new release is
 * one row written after its files are whole), so it is served as it
 * was: a static one loaded, a server one's container kept or made
 * running again (runner.c).  Directories under <data>/releases that no
 * row names (a crash between a prune's row delete and its files) are
 * removed, and so are build containers (none builds at start).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "disk/copytree.h"
#include "lib/clock.h"
#include "lib/jv.h"
#include "lib/log.h"
#include "publish/internal.h"
#include "publish/runner.h"
#include "timeline/timeline.h"

void
pub_release_abandon(struct core *c, const struct release *r)
{
	static const char *const sub[] = {"work", "site", "app", "out"};
	struct release f = *r;
	struct tl_event ev = {.app_id = r->app_id, .type = "publish.failed"};
	char path[PATH_MAX];

	pub_build_remove(c, r->id);
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", r->path, sub[i]);
		copytree_remove(path);
	}
	snprintf(f.status, sizeof(f.status), "failed");
	snprintf(f.error, sizeof(f.error),
	         "the daemon stopped during the build");
	f.finished_at = clock_now();
	if (store_release_finish(c->store, &f) != 0)
		log_error("publish: release %s: the row cannot be written",
		          r->id);
	log_info("publish: release %s of app %s failed: the daemon stopped "
	         "during its build",
	         r->id, r->app_id);
	timeline_note(c->tl, &ev, "Release %lld failed: %s",
	              (long long)r->number, f.error);
}

/* Build containers left by a crash (none builds at start). */
static void
stale_build(const char *id, const struct jv *labels, void *arg)
{
	struct core *c = arg;
	char msg[DOCKER_MSG_LEN];

	if (jv_get(labels, "sandboxd.build") != NULL &&
	    docker_remove(c->docker, id, msg) == DOCKER_OK)
		log_info("publish: removed build container %.12s", id);
}

static int
abandon(const struct release *r, void *arg)
{
	pub_release_abandon(arg, r);
	return 0;
}

static int
serve_publication(const struct publication *pb, void *arg)
{
	struct core *c = arg;
	struct release r;
	struct err e = {0};

	if (pb->release_id[0] == '\0') {
		pub_serve_none(c, pb->app_id, pb->label);
		return 0;
	}
	if (store_release_get(c->store, NULL, pb->release_id, &r) != 0) {
		log_error("publish: app %s: its active release %s is gone",
		          pb->app_id, pb->release_id);
		return 0;
	}
	if (pub_release_serve(c, pb, &r, &e) < 0)
		log_error("publish: app %s: release %s cannot be served: %s",
		          pb->app_id, r.id, e.msg);
	return 0;
}

struct known {
	const char *app_id;
	const char *id;
	bool found;
};

static int
find_release(const struct release *r, void *arg)
{
	struct known *k = arg;

	if (strcmp(r->id, k->id) == 0)
		k->found = true;
	return k->found;
}

/* Release directories no row names: a crash mid-prune, or mid-delete. */
static void
sweep_app(struct core *c, const char *app_id)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct dirent *de;
	DIR *d;

	pub_app_dir(c, app_id, dir, sizeof(dir));
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		struct known k = {.app_id = app_id, .id = de->d_name};

		if (de->d_name[0] == '.')
			continue;
		store_release_list(c->store, app_id, find_release, &k);
		if (k.found)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		log_info("publish: removing %s (no release names it)", path);
		copytree_remove(path);
	}
	closedir(d);
}

static void
sweep(struct core *c)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", c->cfg->data_dir, PUBLISH_DIR);
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && strlen(de->d_name) == ULID_LEN)
			sweep_app(c, de->d_name);
	closedir(d);
}

void
publish_recover(struct core *c)
{
	if (c->pub == NULL)
		return;
	char msg[DOCKER_MSG_LEN];

	store_release_building(c->store, abandon, c);
	if (docker_list(c->docker, "sandboxd.instance", c->instance,
	                stale_build, c, msg) != DOCKER_OK)
		log_warn("publish: build containers: %s", msg);
	sweep(c);
	publish_runner_recover(c);
	store_publication_each(c->store, serve_publication, c);
	publish_domain_recover(c);
}
