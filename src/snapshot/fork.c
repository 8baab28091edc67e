/*
 * Fork: a new app from a snapshot of another (snapshot.h).
 *
 * The new app's row copies what makes the app the same program: its
 * preset, description, tags, git remote, branch and credential, preview
 * visibility.  Not its config (it may hold secrets: API keys, database
 * passwords, meant for the source and its users, which a variant run
 * by others or for a test should not silently get) nor its spend
 * budgets (a limit is a decision about one app's spending; copied, it
 * would double what may be spent without anyone saying so): both only
 * when asked (copy_config, copy_budget).  Its sandbox is made by
 * core_sandbox_create with the snapshot's files put into the new
 * workspace before the container starts, so its first boot finds the
 * app (the preset's template is only copied into an empty app).  The
 * source is only read (a snapshot taken while it runs pauses it for the
 * copy alone), so it keeps serving.
 *
 * A failure after the new app's row exists deletes the new app again:
 * a fork either makes a whole app or none.  A crash cannot run that
 * undo, so a marker, <data>/snapshots/.forking/<new app id>, is written
 * before the app's row and removed once its sandbox runs; the next start
 * deletes the app of every marker it finds (snapshot_recover).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preview/pvauth.h"
#include "snapshot/internal.h"
#include "snapshot/snapshot.h"
#include "lib/clock.h"
#include "lib/log.h"

static int
seed(struct core *c, const char *sandbox_id, void *arg, struct err *e)
{
	const struct snapshot *sn = arg;
	char src[PATH_MAX + 8], dst[PATH_MAX];
	struct copytree_stats st;

	snprintf(src, sizeof(src), "%s/app", sn->path);
	snap_app_dir(c, sandbox_id, "app", dst, sizeof(dst));
	/* workspace_create made it empty: the copy takes its place. */
	if (rmdir(dst) < 0 && errno != ENOENT)
		return ERR_INTERNAL(e, "cannot prepare the workspace");
	if (snap_copy(c, src, dst, &st) < 0)
		return snap_copy_err(errno, "the fork was not made", e);
	return 0;
}

/* The source's snapshot: the one named (of app, ready) or a new one. */
static int
source(struct core *c, const struct app *app, const struct snapshot_fork *f,
       struct snapshot *sn, struct err *e)
{
	char name[SNAPSHOT_NAME_MAX + 1];
	int rc;

	if (f->snapshot_id == NULL) {
		snprintf(name, sizeof(name), "fork of %.100s", app->name);
		return snapshot_take(c, app, name, "fork", f->actor, sn, e);
	}
	rc = store_snapshot_get(c->store, app->owner, f->snapshot_id, sn);
	if (rc == STORE_NOT_FOUND || (rc == 0 && strcmp(sn->app_id, app->id)))
		return ERR_NOTFOUND(e, "no such snapshot of this app");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (strcmp(sn->status, "ready") != 0)
		return err_set(e, 409, "snapshot_busy",
		               "the snapshot is being taken; try again");
	return 0;
}

/* A free name: f's (409 when taken), else "<source>-fork[-N]". */
static int
pick_name(struct core *c, const struct app *app, const char *want, char *out,
          size_t len, struct err *e)
{
	for (int i = 1; i <= 20; i++) {
		int rc;
		if (want)
			snprintf(out, len, "%s", want);
		else if (i == 1)
			snprintf(out, len, "%.180s-fork", app->name);
		else
			snprintf(out, len, "%.180s-fork-%d", app->name, i);
		rc = store_app_name_taken(c->store, app->owner, out, "");
		if (rc < 0)
			return ERR_INTERNAL(e, "database error");
		if (rc == 0)
			return 0;
		if (want)
			return ERR_CONFLICT(e,
			                    "an app named \"%s\" exists; "
			                    "fork under another name",
			                    want);
	}
	return ERR_CONFLICT(e, "name the fork (\"name\"): the default names "
	                       "are taken");
}

static int
copy_one_config(const struct app_config *cf, void *arg)
{
	struct core *c = ((void **)arg)[0];
	const char *to = ((void **)arg)[1];
	struct vault_secret v = {0};
	bool created;
	int rc;

	if (!cf->sensitive)
		return store_app_config_put(c->store, to, cf->key, cf->value,
		                            false, cf->expose_env,
		                            &created) != 0;
	if (store_secret_get(c->store, STORE_SECRET_APP_CONFIG, cf->app_id,
	                     cf->key, &v) != 0)
		return 1;
	/* A sealed value is text without NUL (config.c checks it). */
	rc = store_app_config_put(c->store, to, cf->key, v.data, true,
	                          cf->expose_env, &created);
	vault_secret_free(&v);
	return rc != 0;
}

static int
copy_extras(struct core *c, const struct app *from, const struct app *to,
            const struct snapshot_fork *f, struct err *e)
{
	void *arg[2] = {c, (void *)to->id};
	struct store_budget b;

	if (f->copy_config && store_app_config_list(c->store, from->id,
	                                            copy_one_config, arg) != 0)
		return ERR_INTERNAL(e, "cannot copy the app's config");
	if (!f->copy_budget)
		return 0;
	if (store_budget_get(c->store, "app", from->id, &b) == 0 &&
	    store_budget_set(c->store, "app", to->id, &b) != 0)
		return ERR_INTERNAL(e, "cannot copy the app's budget");
	if (store_budget_get(c->store, "app_calls", from->id, &b) == 0 &&
	    store_budget_set(c->store, "app_calls", to->id, &b) != 0)
		return ERR_INTERNAL(e, "cannot copy the app's budget");
	return 0;
}

/* The new app's row (and its config and budgets when asked). */
static int
new_app(struct core *c, const struct app *app, const struct snapshot_fork *f,
        struct app *out, struct err *e)
{
	*out = *app;
	ulid_new(out->id);
	out->current_sandbox_id[0] = '\0';
	out->preview_epoch = 0;
	out->last_import_at = app->last_import_at;
	out->created_at = out->updated_at = clock_now();
	if (pick_name(c, app, f->name, out->name, sizeof(out->name), e) < 0)
		return -1;
	if (snap_fork_mark(c, out->id, true) < 0)
		return snap_copy_err(errno, "the fork was not made", e);
	if (store_app_insert(c->store, out) != 0)
		return core_data_full(c, NULL)
		           ? err_set(e, 507, "insufficient_storage",
		                     "the data filesystem is full; the fork "
		                     "was not made")
		           : ERR_INTERNAL(e, "cannot store the app");
	pvauth_put(c, out->id, out->preview_visibility, out->preview_epoch);
	return 0;
}

/* app.created on the fork (before its sandbox's events). */
static void
note_created(struct core *c, const struct app *from, const struct app *to,
             const struct snapshot *sn)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "forked_from", from->id);
	jv_set_str(o, "snapshot_id", sn->id);
	snap_note(c, to->id, "app.created", sn->id, NULL, o,
	          "The app was created as a fork of \"%.80s\".", from->name);
}

/* app.forked on the source. */
static void
note_forked(struct core *c, const struct app *from, const struct app *to,
            const struct snapshot *sn)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "app_id", to->id);
	jv_set_str(o, "name", to->name);
	snap_note(c, from->id, "app.forked", sn->id, NULL, o,
	          "The app was forked into \"%.80s\".", to->name);
}

int
snapshot_fork(struct core *c, const struct app *app,
              const struct snapshot_fork *f, struct app *out_app,
              struct sandbox *out_sb, char snapshot_id[ULID_LEN + 1],
              struct err *e)
{
	struct snapshot sn;
	struct sandbox src;
	struct err ignored = {0};
	const int *ports = NULL;
	int nports = 0;

	if (source(c, app, f, &sn, e) < 0)
		return -1;
	snprintf(snapshot_id, ULID_LEN + 1, "%s", sn.id);
	if (store_sandbox_by_app(c->store, app->id, &src) == 0) {
		ports = src.ports;
		nports = src.nports;
	}
	if (new_app(c, app, f, out_app, e) < 0) {
		snap_fork_mark(c, out_app->id, false);
		return -1;
	}
	note_created(c, app, out_app, &sn);
	if (copy_extras(c, app, out_app, f, e) < 0 ||
	    core_sandbox_create(c, out_app, ports, nports, seed, &sn, out_sb,
	                        e) < 0) {
		if (core_app_delete(c, out_app, &ignored) < 0)
			log_error("app %s: a failed fork left it (the next "
			          "start deletes it): %s",
			          out_app->id, ignored.msg);
		else
			snap_fork_mark(c, out_app->id, false);
		return -1;
	}
	snap_fork_mark(c, out_app->id, false);
	note_forked(c, app, out_app, &sn);
	log_info("app %s: forked from app %s (snapshot %s)", out_app->id,
	         app->id, sn.id);
	return 0;
}
