/*
 * publish_start: what it checks at once (the source, the plan, the
 * disk, the label), the row "building" (one per app: the store's partial
 * unique index answers 409 publish_in_progress), the release's
 * directory, and the build's thread (release.c).  The label is the
 * publication's, made at the app's first publish: the app's name as a
 * slug, "-2" to "-9" or its id's end after it when another app has it;
 * one asked for is the app's or 409 host_taken.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/utf8.h"
#include "publish/internal.h"
#include "timeline/timeline.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"

/* --- publish_start --------------------------------------------------- */

static bool
valid_label(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PUB_LABEL_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '-'))
			return false;
	return true;
}

/* Puts pb with label, or the label's derivations when derive. */
static int
label_put(struct core *c, struct publication *pb, const char *label,
          bool derive, struct err *e)
{
	char want[PUB_LABEL_MAX + 1];
	int rc = STORE_CONFLICT;

	for (int i = 1; rc == STORE_CONFLICT && i <= (derive ? 10 : 1); i++) {
		if (i == 1)
			snprintf(want, sizeof(want), "%s", label);
		else if (i < 10)
			snprintf(want, sizeof(want), "%.*s-%d",
			         PUB_LABEL_MAX - 2, label, i);
		else /* the app's id is unique */
			snprintf(want, sizeof(want), "%.*s-%.6s",
			         PUB_LABEL_MAX - 7, label,
			         pb->app_id + ULID_LEN - 6);
		for (char *p = want; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		snprintf(pb->label, sizeof(pb->label), "%s", want);
		rc = store_publication_put(c->store, pb);
	}
	if (rc == STORE_CONFLICT)
		return err_set(e, 409, "host_taken",
		               "%s.%s is another app's address", want,
		               c->pub->domain);
	return rc == 0 ? 0
	               : ERR_INTERNAL(e, "the publication cannot be written");
}

/* The app's publication, made at its first publish; label changed when
 * asked.  Under pmu. */
static int
claim_label(struct core *c, const struct app *app, const char *label,
            struct publication *pb, struct err *e)
{
	char slug[PUB_LABEL_MAX + 1];
	struct pub_serve s;
	int rc = store_publication_get(c->store, app->id, pb);

	if (rc < 0)
		return ERR_INTERNAL(e, "the publication cannot be read");
	if (label && !valid_label(label))
		return ERR_BAD(e,
		               "label: 1 to %d lower-case letters, digits "
		               "and inner hyphens",
		               PUB_LABEL_MAX);
	if (rc == 0 && (label == NULL || strcmp(label, pb->label) == 0))
		return 0;
	if (rc == STORE_NOT_FOUND) {
		memset(pb, 0, sizeof(*pb));
		snprintf(pb->app_id, sizeof(pb->app_id), "%s", app->id);
		snprintf(pb->owner, sizeof(pb->owner), "%s", app->owner);
		snprintf(pb->visibility, sizeof(pb->visibility), "public");
		pb->updated_at = clock_now();
	}
	if (label == NULL) {
		utf8_slug(app->name, PUB_LABEL_MAX - 7, slug, sizeof(slug));
		return label_put(c, pb, slug, true, e);
	}
	if (label_put(c, pb, label, false, e) < 0)
		return -1;
	/* A new label: the host table follows at once. */
	if (pub_hosts_get(c->pub, app->id, &s))
		pub_hosts_set(c->pub, app->id, pb->label, &s);
	return 0;
}

/*
 * start_checks' part for a sandbox on another node (an API thread: a few
 * ops on the node, never the whole tree): whether its first boot made
 * the app's files (one stat), and the plan read from wsnode's shadow of
 * the app's root (its top files), so a wrong sandbox.yaml answers 400
 * at once as for a local app.  Detection can look into subdirectories
 * the shadow does not hold: a plan not found there is left to the
 * build, which plans again on the whole copy (source.c).
 */
static int
remote_checks(struct core *c, const struct app *app, const struct sandbox *sb,
              struct pub_plan *plan, struct err *e)
{
	char shadow[PATH_MAX];
	int fd, rc;

	/* A first boot still copying the template: the build waits. */
	if (!pub_remote_seeded(c, sb))
		return 0;
	fd = wsnode_shadow(c->wn, sb, "workspace/app", NULL, 0, shadow,
	                   sizeof(shadow), e);
	if (fd < 0)
		return e->status == 404
		           ? ERR_CONFLICT(e, "the app has no files yet")
		           : -1;
	rc = pub_plan(c, fd, app->runtime_preset, plan, e);
	wsnode_shadow_drop(fd, shadow);
	if (rc < 0 && e->status == 400 && strcmp(e->msg, PUB_NO_PLAN) == 0) {
		memset(plan, 0, sizeof(*plan));
		*e = (struct err){0};
		rc = 0;
	}
	return rc;
}

/* The checks a publish makes before its row: 0, or -1 with e. */
static int
start_checks(struct core *c, const struct app *app,
             const struct publish_request *q, struct pub_plan *plan,
             struct err *e)
{
	char dir[PATH_MAX];
	struct snapshot sn;
	struct sandbox sb;
	bool remote = false;
	int64_t free_b;
	int fd;

	if (q->commit && q->snapshot)
		return ERR_BAD(e, "commit and snapshot: one or the other");
	if (q->commit && (strlen(q->commit) < 4 || strlen(q->commit) > 40 ||
	                  q->commit[strspn(q->commit, "0123456789abcdef")]))
		return ERR_BAD(e, "commit: 4 to 40 lower-case hexadecimal "
		                  "digits");
	if (q->snapshot) {
		if (store_snapshot_get(c->store, app->owner, q->snapshot,
		                       &sn) != 0 ||
		    strcmp(sn.app_id, app->id) != 0)
			return ERR_BAD(e,
			               "snapshot %s: the app has no such "
			               "snapshot",
			               q->snapshot);
		if (strcmp(sn.status, "ready") != 0)
			return ERR_BAD(e, "snapshot %s is %s, not ready",
			               q->snapshot, sn.status);
		snprintf(dir, sizeof(dir), "%s", sn.path);
	} else if (app->current_sandbox_id[0] == '\0') {
		return ERR_CONFLICT(e, "the app has no sandbox, so no files "
		                       "to publish: create one first");
	} else if (pub_remote_of(c, app->current_sandbox_id, &sb)) {
		remote = true;
	} else {
		workspace_path(c->cfg->data_dir, app->current_sandbox_id, dir,
		               sizeof(dir));
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir),
		         "/workspace");
	}
	if (core_data_full(c, &free_b))
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full (%lld bytes free): "
		               "nothing was built, the serving release is "
		               "untouched",
		               (long long)free_b);
	if (remote)
		return remote_checks(c, app, &sb, plan, e);
	/* A first boot still copying the template: its build waits for
	 * it, and reads the plan then. */
	if (!q->snapshot && !pub_seeded(c, app->current_sandbox_id))
		return 0;
	fd = wsfs_open_dir(dir, "app", e);
	if (fd < 0)
		return ERR_CONFLICT(e, "the app has no files yet");
	if (pub_plan(c, fd, app->runtime_preset, plan, e) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The new row, "building", and its directory. */
static int
release_begin(struct core *c, const struct app *app,
              const struct publish_request *q, const struct pub_plan *plan,
              struct release *r, struct err *e)
{
	char dir[PATH_MAX];
	int rc;

	memset(r, 0, sizeof(*r));
	ulid_new(r->id);
	snprintf(r->owner, sizeof(r->owner), "%s", app->owner);
	snprintf(r->app_id, sizeof(r->app_id), "%s", app->id);
	snprintf(r->source, sizeof(r->source), "%s",
	         q->commit     ? "commit"
	         : q->snapshot ? "snapshot"
	                       : "files");
	snprintf(r->source_ref, sizeof(r->source_ref), "%s",
	         q->commit     ? q->commit
	         : q->snapshot ? q->snapshot
	                       : "");
	snprintf(r->recipe, sizeof(r->recipe), "%s", plan->recipe);
	snprintf(r->image, sizeof(r->image), "%s", c->cfg->image);
	pub_release_dir(c, app->id, r->id, r->path, sizeof(r->path));
	snprintf(r->created_by, sizeof(r->created_by), "%s",
	         q->actor && q->actor[0] ? q->actor : "system");
	r->created_at = clock_now();
	rc = store_release_insert(c->store, r);
	if (rc == STORE_CONFLICT)
		return err_set(e, 409, "publish_in_progress",
		               "a release of the app is being built: wait for "
		               "it to end");
	if (rc != 0)
		return ERR_INTERNAL(e, "the release's row cannot be written");
	pub_app_dir(c, app->id, dir, sizeof(dir));
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) ||
	    mkdir(r->path, 0700) < 0) {
		rc = errno;
		snprintf(r->status, sizeof(r->status), "failed");
		snprintf(r->error, sizeof(r->error), "%s", strerror(rc));
		store_release_finish(c->store, r);
		return pub_dir_err(rc, "the release's directory", e);
	}
	return 0;
}

int
publish_start(struct core *c, const struct app *app,
              const struct publish_request *q, struct release *out,
              struct err *e)
{
	struct pub_plan *plan = calloc(1, sizeof(*plan));
	struct publication pb;
	int rc;

	if (c->pub == NULL || atomic_load(&c->pub->stopping)) {
		free(plan);
		return ERR_CONFLICT(e, "the daemon is stopping");
	}
	if (plan == NULL) {
		free(plan);
		return ERR_INTERNAL(e, "out of memory");
	}
	pub_jobs_reap(c->pub);
	rc = start_checks(c, app, q, plan, e);
	if (rc == 0) {
		pthread_mutex_lock(&c->pub->pmu);
		rc = claim_label(c, app, q->label, &pb, e);
		pthread_mutex_unlock(&c->pub->pmu);
	}
	if (rc == 0)
		rc = release_begin(c, app, q, plan, out, e);
	free(plan);
	if (rc < 0)
		return -1;
	tl_set_actor(q->actor);
	pub_note(c, out, "publish.started", "Release %lld is being built (%s)",
	         (long long)out->number, out->recipe);
	if (pub_job_start(c, app, out, e) < 0) {
		snprintf(out->status, sizeof(out->status), "failed");
		snprintf(out->error, sizeof(out->error), "%s", e->msg);
		out->finished_at = clock_now();
		store_release_finish(c->store, out);
		return -1;
	}
	return 0;
}

int
publish_configure(struct core *c, const struct app *app, const char *visibility,
                  const char *label, struct publication *out, struct err *e)
{
	struct pub_serve s;
	int rc;

	if (visibility && strcmp(visibility, "public") != 0 &&
	    strcmp(visibility, "private") != 0)
		return ERR_BAD(e, "visibility: \"public\" or \"private\"");
	pthread_mutex_lock(&c->pub->pmu);
	rc = claim_label(c, app, label, out, e);
	if (rc == 0 && visibility && strcmp(visibility, out->visibility)) {
		snprintf(out->visibility, sizeof(out->visibility), "%s",
		         visibility);
		out->updated_at = clock_now();
		if (store_publication_put(c->store, out) != 0)
			rc = ERR_INTERNAL(e, "the publication cannot be "
			                     "written");
	}
	/* The gate follows at once. */
	if (rc == 0 && pub_hosts_get(c->pub, app->id, &s)) {
		s.private_gate = strcmp(out->visibility, "private") == 0;
		pub_hosts_set(c->pub, app->id, out->label, &s);
	}
	pthread_mutex_unlock(&c->pub->pmu);
	return rc;
}
