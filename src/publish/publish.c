/*
 * The publish module's handle (c->pub): made by serve() before the API
 * and the edge, recovered after the reconcile (recover.c), stopped
 * after the API (the builds under way fail and are joined).  And what
 * switches a release without a build: rollback and unpublish, and the
 * app's trash, restore and delete.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "disk/copytree.h"
#include "lib/clock.h"
#include "lib/jv.h"
#include "lib/log.h"
#include "publish/internal.h"
#include "timeline/timeline.h"

void
publish_app_host(struct core *c, const char *label, char *out, size_t len)
{
	const char *d = c->pub ? c->pub->domain : "";

	snprintf(out, len, "%s.%s", label, d);
}

int
publish_init(struct core *c)
{
	struct publish *p = calloc(1, sizeof(*p));
	char dir[PATH_MAX];

	if (p == NULL)
		return -1;
	p->c = c;
	if (c->cfg->publish_domain[0])
		snprintf(p->domain, sizeof(p->domain), "%s",
		         c->cfg->publish_domain);
	else
		snprintf(p->domain, sizeof(p->domain), "apps.%s",
		         c->cfg->preview_domain);
	for (char *s = p->domain; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
	pthread_mutex_init(&p->hmu, NULL);
	pthread_mutex_init(&p->jmu, NULL);
	pthread_mutex_init(&p->pmu, NULL);
	snprintf(dir, sizeof(dir), "%s/%s", c->cfg->data_dir, PUBLISH_DIR);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_error("publish: cannot make %s: %s", dir, strerror(errno));
		free(p);
		return -1;
	}
	c->pub = p;
	return 0;
}

/* --- the switch alone: rollback, unpublish ------------------------------- */

int
publish_rollback(struct core *c, const struct app *app, const char *release_id,
                 const char *actor, struct err *e)
{
	struct tl_event ev = {.app_id = app->id, .type = "release.rolled_back"};
	struct publication pb;
	struct release r;
	char pl[128];
	int rc;

	if (store_release_get(c->store, app->owner, release_id, &r) != 0 ||
	    strcmp(r.app_id, app->id) != 0)
		return ERR_NOTFOUND(e, "the app has no release %s", release_id);
	if (strcmp(r.status, "ready") != 0)
		return err_set(e, 409, "release_not_ready",
		               "release %lld is %s: only a ready release can "
		               "serve",
		               (long long)r.number, r.status);
	rc = store_publication_get(c->store, app->id, &pb);
	if (rc != 0)
		return err_set(e, 409, "not_published",
		               "the app was never published");
	if (pub_activate(c, &r, false, e) < 0)
		return -1;
	tl_set_actor(actor);
	snprintf(pl, sizeof(pl), "{\"release_id\":\"%s\",\"number\":%lld}",
	         r.id, (long long)r.number);
	ev.payload_json = pl;
	timeline_note(c->tl, &ev, "Release %lld serves again",
	              (long long)r.number);
	return 0;
}

int
publish_unpublish(struct core *c, const struct app *app, const char *actor,
                  struct err *e)
{
	struct tl_event ev = {.app_id = app->id, .type = "app.unpublished"};
	char old[ULID_LEN + 1];
	struct publication pb;
	struct release r;
	int rc;

	pthread_mutex_lock(&c->pub->pmu);
	rc = store_publication_get(c->store, app->id, &pb);
	if (rc != 0 || pb.release_id[0] == '\0')
		rc = err_set(e, 409, "not_published",
		             "the app is not published");
	if (rc == 0) {
		snprintf(old, sizeof(old), "%s", pb.release_id);
		pb.release_id[0] = '\0';
		pb.updated_at = clock_now();
		if (store_publication_put(c->store, &pb) != 0)
			rc = ERR_INTERNAL(e, "the publication cannot be "
			                     "written");
	}
	if (rc == 0) {
		pub_serve_none(c, app->id, pb.label);
		if (store_release_get(c->store, NULL, old, &r) == 0 &&
		    strcmp(r.kind, "server") == 0)
			publish_runner_stop(c, old);
	}
	pthread_mutex_unlock(&c->pub->pmu);
	if (rc < 0)
		return -1;
	tl_set_actor(actor);
	timeline_note(c->tl, &ev, "Unpublished: %s.%s answers no more",
	              pb.label, c->pub->domain);
	return 0;
}

/* --- the app's life: trash, restore, delete ----------------------------- */

static int
drop_release(const struct release *r, void *arg)
{
	struct core *c = arg;

	if (strcmp(r->kind, "server") == 0)
		publish_runner_stop(c, r->id);
	store_release_delete(c->store, r->id);
	return 0;
}

void
publish_app_gone(struct core *c, const char *app_id)
{
	char dir[PATH_MAX];

	if (c->pub == NULL)
		return;
	pub_jobs_cancel(c->pub, app_id, true);
	pthread_mutex_lock(&c->pub->pmu);
	pub_hosts_drop(c->pub, app_id);
	store_release_list(c->store, app_id, drop_release, c);
	store_publication_delete(c->store, app_id);
	pthread_mutex_unlock(&c->pub->pmu);
	publish_domain_app_gone(c, app_id);
	pub_app_dir(c, app_id, dir, sizeof(dir));
	copytree_remove(dir);
}

void
publish_app_trashed(struct core *c, const char *app_id)
{
	struct publication pb;
	struct release r;

	if (c->pub == NULL)
		return;
	pub_jobs_cancel(c->pub, app_id, false);
	pthread_mutex_lock(&c->pub->pmu);
	if (store_publication_get(c->store, app_id, &pb) == 0) {
		pub_serve_none(c, app_id, pb.label);
		if (pb.release_id[0] &&
		    store_release_get(c->store, NULL, pb.release_id, &r) == 0 &&
		    strcmp(r.kind, "server") == 0)
			publish_runner_stop(c, r.id);
	}
	pthread_mutex_unlock(&c->pub->pmu);
}

void
publish_app_restored(struct core *c, const char *app_id)
{
	struct publication pb;
	struct release r;
	struct sockaddr_in addr;
	struct err e = {0};

	if (c->pub == NULL)
		return;
	pthread_mutex_lock(&c->pub->pmu);
	if (store_publication_get(c->store, app_id, &pb) == 0 &&
	    pb.release_id[0] &&
	    store_release_get(c->store, NULL, pb.release_id, &r) == 0 &&
	    (strcmp(r.kind, "server") != 0 ||
	     publish_runner_start(c, &r, &addr, &e) == 0) &&
	    pub_release_serve(c, &pb, &r, &e) < 0)
		log_error("publish: app %s: release %s cannot be served: %s",
		          app_id, r.id, e.msg);
	pthread_mutex_unlock(&c->pub->pmu);
}

int
publish_log_path(struct core *c, const struct release *r, char *out, size_t len)
{
	(void)c;
	return snprintf(out, len, "%s/build.log", r->path) < (int)len ? 0 : -1;
}

static int
add_size(const struct release *r, void *arg)
{
	*(int64_t *)arg += r->size_bytes;
	return 0;
}

int64_t
publish_app_bytes(struct core *c, const char *app_id)
{
	int64_t n = 0;

	store_release_list(c->store, app_id, add_size, &n);
	return n;
}

void
publish_stop(struct core *c)
{
	struct publish *p = c->pub;

	if (p == NULL)
		return;
	atomic_store(&p->stopping, true);
	pub_jobs_cancel(p, NULL, true);
	publish_domain_stop(c);
	c->pub = NULL;
	pub_hosts_free(p);
	pthread_mutex_destroy(&p->hmu);
	pthread_mutex_destroy(&p->jmu);
	pthread_mutex_destroy(&p->pmu);
	free(p);
}
