/*
 * Sandbox lifecycle: create, start, stop, delete.
 *
 * Order of writes makes every crash point recoverable by core_reconcile():
 * the row is inserted as "creating" before any Docker call, so a container
 * can never exist without a row that names it; the row only becomes
 * "running" after the container started.  Delete removes the container,
 * then moves the workspace to the trash, then drops the row, so a crash
 * leaves either a row without a container (recreated on start) or a
 * workspace in the trash (emptied at start), never a lost workspace under
 * a live row.
 *
 * Every write of a row is followed, under the same sandbox lock, by the
 * routing table's copy of it (sandbox/routes.c), so the edge sees what the
 * store says without reading it.
 */
#include "sandbox/core.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cred/credentials.h"
#include "orch/orch.h"
#include "sandbox/container.h"
#include "sandbox/gitops.h"
#include "sandbox/manifest.h"
#include "sandbox/presets.h"
#include "sandbox/activity.h"
#include "sandbox/routes.h"
#include "sandbox/runtime.h"
#include "sbnet/sbnet.h"
#include "timeline/timeline.h"
#include "ws/workspace.h"
#include "lib/hash.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "lib/ulid.h"

/* The sandbox's event of type on its app's timeline. */
#define SB_EVENT(sb, t, pl)                                                    \
	(&(struct tl_event){.app_id = (sb)->app_id,                            \
	                    .type = (t),                                       \
	                    .sandbox_id = (sb)->id,                            \
	                    .payload_json = (pl)})

static pthread_mutex_t *
lock_for(struct core *c, const char *id)
{
	return &c->locks[hash_fnv1a(id) % CORE_LOCK_STRIPES];
}

void
core_sandbox_lock(struct core *c, const char *id)
{
	pthread_mutex_lock(lock_for(c, id));
}

void
core_sandbox_unlock(struct core *c, const char *id)
{
	pthread_mutex_unlock(lock_for(c, id));
}

void
core_route_refresh(struct core *c, const char *id)
{
	struct sandbox sb;
	int rc = store_sandbox_get(c->store, id, &sb);

	if (rc == 0)
		routes_put(c->routes, &sb);
	else if (rc == STORE_NOT_FOUND)
		routes_drop(c->routes, id);
}

/* Writes the row and, when that worked, the routing table's copy. */
static int
row_update(struct core *c, struct sandbox *sb)
{
	int rc = store_sandbox_update(c->store, sb);

	if (rc == 0)
		routes_put(c->routes, sb);
	return rc;
}

static void
mark(struct sandbox *sb, enum sandbox_state status, const char *reason)
{
	sb->status = status;
	snprintf(sb->status_reason, sizeof(sb->status_reason), "%s", reason);
}

/* Removes a failed create's container and records the error on the row
 * with why (its status_reason). */
static void
create_failed_why(struct core *c, struct sandbox *sb, const char *why,
                  const char *msg)
{
	char name[128], ignored[DOCKER_MSG_LEN];

	core_container_name(c, sb->id, name, sizeof(name));
	orch_remove(c->orch, name, ignored);
	mark(sb, SANDBOX_ERROR, why);
	snprintf(sb->error_message, sizeof(sb->error_message), "%s", msg);
	row_update(c, sb);
	log_warn("sandbox %s: create failed: %s", sb->id, msg);
}

static void
create_failed(struct core *c, struct sandbox *sb, const char *msg)
{
	create_failed_why(c, sb, "create_failed", msg);
}

static int
replace_failed(struct core *c, const struct app *app, struct err *e)
{
	struct sandbox old;
	int rc = store_sandbox_by_app(c->store, app->id, &old);

	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	if (old.status != SANDBOX_ERROR)
		return ERR_CONFLICT(e,
		                    "app already has a sandbox (%s); "
		                    "delete it first",
		                    old.id);
	return core_sandbox_delete(c, old.id, e);
}

/*
 * The row, "creating", before anything else (create step 1): a crash
 * from here on leaves a row that names whatever was made.  Fails before
 * writing anything when the engine is known to be gone.
 */
static int
create_row(struct core *c, const struct app *app, const int *ports, int nports,
           struct sandbox *sb, struct err *e)
{
	char msg[DOCKER_MSG_LEN];
	int rc;

	if (replace_failed(c, app, e) < 0)
		return -1;
	if (!orch_is_up(c->orch) && orch_ping(c->orch, msg) != DOCKER_OK)
		return ERR_DOCKER(e, "%s", msg);
	if (sbnet_check_ready(c->net, e) < 0)
		return -1;
	memset(sb, 0, sizeof(*sb));
	ulid_new(sb->id);
	snprintf(sb->app_id, sizeof(sb->app_id), "%s", app->id);
	snprintf(sb->owner, sizeof(sb->owner), "%s", app->owner);
	snprintf(sb->image, sizeof(sb->image), "%s", c->cfg->image);
	snprintf(sb->idle_policy, sizeof(sb->idle_policy), "%s",
	         preset_idle_policy(app->runtime_preset));
	snprintf(sb->preset, sizeof(sb->preset), "%s", app->runtime_preset);
	mark(sb, SANDBOX_CREATING, "");
	memcpy(sb->ports, ports, sizeof(int) * (size_t)nports);
	sb->nports = nports;
	if (nports == 0) {
		sb->ports[0] = 3000;
		sb->nports = 1;
	}
	sb->created_at = sb->updated_at = sb->last_active_at = clock_now();
	rc = store_sandbox_insert(c->store, sb);
	if (rc == STORE_CONFLICT)
		return ERR_CONFLICT(e, "app already has a sandbox; delete it "
		                       "first");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	return 0;
}

/* The routing table's entry from the row, under the sandbox's lock. */
static void
route_refresh_now(struct core *c, const char *id)
{
	core_sandbox_lock(c, id);
	core_route_refresh(c, id);
	core_sandbox_unlock(c, id);
}

/* Marks a failed create on its row, under the sandbox's lock. */
static void
create_failed_now(struct core *c, struct sandbox *sb, const char *why,
                  const char *msg)
{
	core_sandbox_lock(c, sb->id);
	create_failed_why(c, sb, why, msg);
	core_sandbox_unlock(c, sb->id);
}

/*
 * An imported app's clone, before the lock is taken (it may take
 * minutes, and the lock's stripe is shared); the row is "creating"
 * meanwhile, and read again under the lock after.  Then the web.port of
 * the sandbox.yaml the import brought, or detection wrote.
 */
static int
create_import(struct core *c, const struct app *app, int nports,
              struct sandbox *sb, struct err *e)
{
	struct manifest m;

	if (app->git_repo_url[0] == '\0')
		return 0;
	if (workspace_create(c->cfg->data_dir, sb->id) < 0 ||
	    gitops_import(c, app, sb->id, e) < 0) {
		bool cloned = e->status != 0;
		if (!cloned)
			ERR_INTERNAL(e,
			             "cannot create the workspace directory");
		/* "import_failed": the repository, not the machine; retried
		 * by creating the sandbox again (its URL fixed first). */
		create_failed_now(
		    c, sb, cloned ? "import_failed" : "create_failed", e->msg);
		return -1;
	}
	if (nports == 0 && runtime_manifest(c, sb->id, &m) == 0 && m.has_web)
		sb->ports[0] = m.web.port;
	return 0;
}

/* The workspace and the container, under the sandbox's lock; the row
 * "running" once the container started. */
static int
create_locked(struct core *c, struct sandbox *sb, struct err *e)
{
	char msg[DOCKER_MSG_LEN], name[128];
	struct sandbox now;
	int rc;

	core_sandbox_lock(c, sb->id);
	if (store_sandbox_get(c->store, sb->id, &now) != 0) {
		rc = ERR_CONFLICT(e, "the sandbox was deleted while it was "
		                     "being created");
		goto out;
	}
	if (workspace_create(c->cfg->data_dir, sb->id) < 0) {
		create_failed(c, sb, "cannot create the workspace directory");
		rc = ERR_INTERNAL(e, "cannot create the workspace directory");
		goto out;
	}
	rc = container_make(c, sb, msg);
	if (rc == DOCKER_OK) {
		core_container_name(c, sb->id, name, sizeof(name));
		rc = orch_start(c->orch, name, msg);
	}
	if (rc != DOCKER_OK) {
		create_failed(c, sb, msg);
		rc = container_err(rc, msg, e);
		goto out;
	}
	container_started(c, sb);
	mark(sb, SANDBOX_RUNNING, "");
	sb->last_active_at = clock_now();
	if (row_update(c, sb) != 0)
		rc = ERR_INTERNAL(e, "database error");
out:
	core_sandbox_unlock(c, sb->id);
	return rc;
}

/* A fork's files, before the container starts (instead of an import). */
static int
create_seed(struct core *c, core_seed_fn seed, void *arg, struct sandbox *sb,
            struct err *e)
{
	if (workspace_create(c->cfg->data_dir, sb->id) < 0)
		ERR_INTERNAL(e, "cannot create the workspace directory");
	else if (seed(c, sb->id, arg, e) == 0)
		return 0;
	create_failed_now(c, sb, "create_failed", e->msg);
	return -1;
}

int
core_sandbox_create(struct core *c, const struct app *app, const int *ports,
                    int nports, core_seed_fn seed, void *arg,
                    struct sandbox *sb, struct err *e)
{
	if (create_row(c, app, ports, nports, sb, e) < 0)
		return -1;
	/* "creating": the edge says "starting".  From the row, under the
	 * lock: a delete may have come between the insert and here. */
	route_refresh_now(c, sb->id);
	/* Its own proxy token (a task makes one if this fails). */
	cred_new_proxy_token(c->store, sb->id);
	if ((seed ? create_seed(c, seed, arg, sb, e)
	          : create_import(c, app, nports, sb, e)) < 0 ||
	    create_locked(c, sb, e) < 0)
		return -1;
	core_sandbox_reload(c, sb->id);
	timeline_note(c->tl, SB_EVENT(sb, "sandbox.created", NULL),
	              "The sandbox was created and started.");
	log_info("sandbox %s: created for app %s", sb->id, app->id);
	return 0;
}

/* Reads the row under its lock: 0 with the lock held (the caller
 * unlocks), or -1 with e and no lock. */
static int
lock_row(struct core *c, const char *id, struct sandbox *sb, struct err *e)
{
	int rc;

	core_sandbox_lock(c, id);
	rc = store_sandbox_get(c->store, id, sb);
	if (rc == 0)
		return 0;
	core_sandbox_unlock(c, id);
	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such sandbox");
	return ERR_INTERNAL(e, "database error");
}

/*
 * Thaws a frozen row's container, under the sandbox's lock.  An unpause
 * the engine refuses because the container is not paused (unpaused
 * behind our back) still clears the row.
 */
static int
thaw_locked(struct core *c, struct sandbox *sb, struct err *e)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;
	int64_t t0 = clock_mono_ms();
	int rc;

	core_container_name(c, sb->id, name, sizeof(name));
	rc = orch_pause(c->orch, name, false, msg);
	if (rc != DOCKER_OK &&
	    (rc == DOCKER_DOWN ||
	     orch_inspect(c->orch, name, &st, msg) != DOCKER_OK || st.d.paused))
		return container_err(rc, msg, e);
	sb->frozen = false;
	sb->last_active_at = clock_now();
	rc = row_update(c, sb);
	log_info("sandbox %s: unpaused in %lld ms", sb->id,
	         (long long)(clock_mono_ms() - t0));
	timeline_note(c->tl, SB_EVENT(sb, "sandbox.woken", NULL),
	              "The sandbox woke from its sleep.");
	return rc ? ERR_INTERNAL(e, "database error") : 0;
}

static int
thaw(struct core *c, const char *id, bool wait, struct err *e)
{
	struct sandbox sb;
	int rc = 0;

	/* Unlocked first: the common case (not frozen) takes no lock. */
	if (!wait && store_sandbox_get(c->store, id, &sb) == 0 && !sb.frozen)
		return 0;
	if (lock_row(c, id, &sb, e) < 0)
		return -1;
	if (sb.status == SANDBOX_RUNNING && sb.frozen)
		rc = thaw_locked(c, &sb, e);
	core_sandbox_unlock(c, id);
	return rc;
}

int
core_sandbox_thaw(struct core *c, const char *id, struct err *e)
{
	return thaw(c, id, false, e);
}

int
core_sandbox_thaw_wait(struct core *c, const char *id, struct err *e)
{
	return thaw(c, id, true, e);
}

/* Activity on id after the reaper saw it idle at idle_since. */
static bool
busy_since(struct core *c, const char *id, int64_t idle_since)
{
	return idle_since >= 0 && activity_last_active(c->act, id) > idle_since;
}

int
core_sandbox_freeze(struct core *c, const char *id, int64_t idle_since,
                    struct err *e)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct sandbox sb;
	int rc = 0;

	if (lock_row(c, id, &sb, e) < 0)
		return -1;
	if (sb.frozen)
		goto out;
	if (sb.status != SANDBOX_RUNNING) {
		rc = ERR_CONFLICT(e, "sandbox is %s; cannot freeze it",
		                  sandbox_state_name(sb.status));
		goto out;
	}
	if (busy_since(c, id, idle_since)) {
		rc = 1;
		goto out;
	}
	core_container_name(c, id, name, sizeof(name));
	rc = orch_pause(c->orch, name, true, msg);
	if (rc != DOCKER_OK) {
		rc = container_err(rc, msg, e);
		goto out;
	}
	sb.frozen = true;
	rc = row_update(c, &sb);
	if (rc == 0)
		timeline_note(c->tl, SB_EVENT(&sb, "sandbox.frozen", NULL),
		              "The sandbox was frozen while idle.");
	/*
	 * A request or a task that came while the engine paused it read the
	 * route before it said frozen, so nobody else would thaw it: thaw it
	 * here.  One that comes later finds the route frozen and thaws it
	 * itself (a task waits for this lock: core_sandbox_thaw_wait).
	 */
	if (rc == 0 && busy_since(c, id, idle_since)) {
		log_info("sandbox %s: used while it froze; thawing", id);
		rc = thaw_locked(c, &sb, e) < 0 ? -1 : 1;
		goto out;
	}
	log_info("sandbox %s: frozen", id);
	if (rc != 0)
		rc = ERR_INTERNAL(e, "database error");
out:
	core_sandbox_unlock(c, id);
	return rc;
}

const char *
core_sleep_policy(const struct core *c, const struct sandbox *sb)
{
	if (strcmp(sb->idle_policy, "always_on") == 0)
		return NULL;
	if (strcmp(sb->idle_policy, "freeze") == 0 ||
	    strcmp(sb->idle_policy, "stop") == 0)
		return sb->idle_policy;
	return c->cfg->sleep_policy;
}

int
core_sandbox_start(struct core *c, const char *id, struct sandbox *sb,
                   struct err *e)
{
	char msg[DOCKER_MSG_LEN];
	bool ran = false, was_stopped;
	int rc;

	/*
	 * A workspace that booted before gets its run.conf now, so the
	 * supervisor starts the processes without waiting for us.  Before
	 * the lock: sandbox.yaml is the sandbox's to make slow or strange,
	 * and the lock's stripe is shared with other sandboxes.  A start or
	 * a delete racing it finds a run.conf written whole (rename) or no
	 * workspace at all.
	 */
	if (store_sandbox_get(c->store, id, sb) == 0 &&
	    (sb->status == SANDBOX_RUNNING || sb->status == SANDBOX_STOPPED))
		runtime_configure(c, id, false);
	if (lock_row(c, id, sb, e) < 0)
		return -1;
	if (sb->status != SANDBOX_RUNNING && sb->status != SANDBOX_STOPPED) {
		rc = ERR_CONFLICT(e, "sandbox is %s; cannot start it",
		                  sandbox_state_name(sb->status));
		goto out;
	}
	if (sb->status == SANDBOX_STOPPED && sbnet_check_ready(c->net, e) < 0) {
		rc = -1;
		goto out;
	}
	if (sb->status == SANDBOX_RUNNING && sb->frozen) {
		rc = thaw_locked(c, sb, e);
		goto out;
	}
	/*
	 * Even a "running" row gets a real start: the row can be stale for
	 * a moment after the engine came back (its containers were stopped
	 * with it), and starting a running container is a no-op.
	 */
	was_stopped = sb->status == SANDBOX_STOPPED;
	rc = container_run(c, sb, msg);
	if (rc != DOCKER_OK) {
		rc = container_err(rc, msg, e);
		goto out;
	}
	mark(sb, SANDBOX_RUNNING, "");
	sb->frozen = false;
	sb->has_exit_code = false;
	sb->oom_killed = false;
	sb->stopped_at = 0;
	sb->last_active_at = clock_now();
	rc = row_update(c, sb) ? ERR_INTERNAL(e, "database error") : 0;
	ran = true;
out:
	core_sandbox_unlock(c, id);
	if (ran) {
		core_sandbox_reload(c, id);
		log_info("sandbox %s: started", id);
		if (was_stopped)
			timeline_note(c->tl,
			              SB_EVENT(sb, "sandbox.started", NULL),
			              "The sandbox was started.");
	}
	return rc;
}

int
core_sandbox_stop(struct core *c, const char *id, struct sandbox *sb,
                  struct err *e)
{
	return core_sandbox_stop_why(c, id, "stopped", sb, e);
}

/* "stopped" by a caller; "idle" or "pressure" by a reaper. */
static void
stopped_event(struct core *c, const struct sandbox *sb, const char *why)
{
	char pl[64];

	if (strcmp(why, "stopped") == 0) {
		timeline_note(c->tl, SB_EVENT(sb, "sandbox.stopped", NULL),
		              "The sandbox was stopped.");
		return;
	}
	snprintf(pl, sizeof(pl), "{\"reason\":\"%s\"}", why);
	timeline_note(c->tl, SB_EVENT(sb, "sandbox.reaped", pl),
	              "The sandbox was stopped by the %s reaper.", why);
}

int
core_sandbox_stop_why(struct core *c, const char *id, const char *why,
                      struct sandbox *sb, struct err *e)
{
	char msg[DOCKER_MSG_LEN], name[128];
	int rc = 0;

	if (lock_row(c, id, sb, e) < 0)
		return -1;
	if (sb->status == SANDBOX_STOPPED)
		goto out;
	if (sb->status != SANDBOX_RUNNING) {
		rc = ERR_CONFLICT(e, "sandbox is %s; cannot stop it",
		                  sandbox_state_name(sb->status));
		goto out;
	}
	core_container_name(c, id, name, sizeof(name));
	/* A paused container's processes would not see the SIGTERM. */
	if (sb->frozen)
		orch_pause(c->orch, name, false, msg);
	/* Its terminals end first: an interactive shell ignores SIGTERM. */
	core_hooks_run(c, CORE_SANDBOX_STOPPING, id);
	rc = orch_stop(c->orch, name, DOCKER_STOP_GRACE_S, msg);
	if (rc != DOCKER_OK && rc != DOCKER_NOT_FOUND) {
		rc = container_err(rc, msg, e);
		goto out;
	}
	/* The die event may have marked it already; ours is the reason. */
	store_sandbox_get(c->store, id, sb);
	mark(sb, SANDBOX_STOPPED, why);
	sb->frozen = false;
	sb->container_ip[0] = '\0';
	sb->stopped_at = clock_now();
	rc = row_update(c, sb) ? ERR_INTERNAL(e, "database error") : 0;
	log_info("sandbox %s: stopped (%s)", id, why);
	stopped_event(c, sb, why);
out:
	core_sandbox_unlock(c, id);
	return rc;
}

int
core_sandbox_delete(struct core *c, const char *id, struct err *e)
{
	char msg[DOCKER_MSG_LEN], name[128];
	struct sandbox sb;
	int rc;

	if (lock_row(c, id, &sb, e) < 0)
		return -1;
	core_container_name(c, id, name, sizeof(name));
	if (sb.frozen)
		orch_pause(c->orch, name, false, msg);
	rc = orch_remove(c->orch, name, msg);
	if (rc != DOCKER_OK && rc != DOCKER_NOT_FOUND) {
		rc = container_err(rc, msg, e);
		goto out;
	}
	if (workspace_remove(c->cfg->data_dir, id) < 0) {
		rc = ERR_INTERNAL(e, "cannot remove the workspace");
		goto out;
	}
	rc = store_sandbox_delete(c->store, id);
	if (rc < 0) {
		rc = ERR_INTERNAL(e, "database error");
		goto out;
	}
	if (rc == 0) {
		routes_drop(c->routes, id);
		core_hooks_run(c, CORE_SANDBOX_DELETED, id);
		cred_drop_proxy_token(c->store, id);
		timeline_note(c->tl, SB_EVENT(&sb, "sandbox.deleted", NULL),
		              "The sandbox was deleted.");
	}
	log_info("sandbox %s: deleted", id);
	rc = 0;
out:
	core_sandbox_unlock(c, id);
	return rc;
}

int
core_app_delete(struct core *c, const struct app *app, struct err *e)
{
	struct sandbox sb;
	int rc = store_sandbox_by_app(c->store, app->id, &sb);

	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	if (rc == 0 && core_sandbox_delete(c, sb.id, e) < 0 && e->status != 404)
		return -1;
	/* Its events go with the row: a follower may still see this one. */
	timeline_note(
	    c->tl, &(struct tl_event){.app_id = app->id, .type = "app.deleted"},
	    "The app was deleted for good.");
	rc = store_app_delete(c->store, app->id);
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	/* Its preview links and cookies end with it (pvauth's hook). */
	core_hooks_run(c, CORE_APP_DELETED, app->id);
	log_info("app %s: deleted", app->id);
	return 0;
}

void
core_sandbox_reload(struct core *c, const char *id)
{
	struct err e = {0};

	/* A manifest changed in a frozen sandbox: it is reloaded awake. */
	core_sandbox_thaw(c, id, &e);
	runtime_schedule(c, id);
}

void
core_app_config_changed(struct core *c, const char *app_id)
{
	struct sandbox sb;
	struct err e = {0};

	/* A frozen supervisor would not answer: a change wakes it. */
	if (store_sandbox_by_app(c->store, app_id, &sb) == 0 &&
	    sb.status == SANDBOX_RUNNING &&
	    core_sandbox_thaw(c, sb.id, &e) == 0)
		runtime_send_env(c, sb.id);
}
