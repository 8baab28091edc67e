/*
 * Keeping Docker and the store in step.
 *
 * core_reconcile() converges the engine to the store, which is the truth:
 * sandbox containers of this instance (label sandboxd.sandbox) without
 * a row are removed, and other containers of this instance (a release's
 * production or build container, publish/) are left to their module; rows left
 * "creating" by a crash become "error" (their container removed, their
 * workspace kept until the sandbox is deleted); a "running" row whose
 * container is gone or dead becomes "stopped" with the reason; a
 * "stopped" row whose container runs gets it stopped; a running row
 * takes its frozen flag from the container's Paused state.
 *
 * The watcher thread follows the engine's event stream, filtered to this
 * instance's label, so a container that dies (or is OOM-killed) shows in
 * its sandbox's status within a second, and a pause or unpause (ours,
 * a backup's, an operator's) in its frozen flag.  When the stream breaks, the
 * engine is presumed down: the thread pings once a second and, when the
 * engine answers again, reconciles (events were missed meanwhile) and
 * resubscribes.  Each row written here is copied into the routing table
 * (sandbox/routes.c) under the sandbox's lock.  Nothing here ever exits the
 * daemon.
 */
#include "sandbox/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orch/orch.h"
#include "sandbox/container.h"
#include "sandbox/routes.h"
#include "sandbox/runtime.h"
#include "timeline/timeline.h"
#include "ws/workspace.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/ulid.h"

struct orphan_scan {
	struct core *c;
	int removed;
};

static void
check_container(const char *id, const struct jv *labels, void *arg)
{
	struct orphan_scan *scan = arg;
	const char *sid = jv_str(jv_get(labels, "sandboxd.sandbox"));
	char msg[DOCKER_MSG_LEN];
	struct sandbox sb;
	int rc;

	if (sid == NULL)
		return; /* not a sandbox's: a release's (publish/runner.c) */
	rc = store_sandbox_get(scan->c->store, sid, &sb);
	if (rc == 0 && sb.status != SANDBOX_CREATING &&
	    sb.status != SANDBOX_ERROR)
		return;
	if (rc < 0)
		return; /* database trouble: never delete on a guess */
	if (orch_remove(scan->c->orch, id, msg) == DOCKER_OK) {
		scan->removed++;
		log_info("reconcile: removed container %.12s (sandbox %s: %s)",
		         id, sid ? sid : "?",
		         rc == 0 ? sandbox_state_name(sb.status)
		                 : "no such sandbox");
	}
}

/* An event of the sandbox sid on its app's timeline; a container that
 * exited behind our back is "sandbox.stopped" with what it said. */
static void
watch_note(struct core *c, const char *sid, const char *type, int exit_code,
           bool oom)
{
	struct sandbox sb;
	char pl[96];

	if (store_sandbox_get(c->store, sid, &sb) != 0)
		return;
	if (strcmp(type, "sandbox.oom_killed") == 0) {
		timeline_note(c->tl,
		              &(struct tl_event){.app_id = sb.app_id,
		                                 .type = type,
		                                 .sandbox_id = sid},
		              "A process of the sandbox was killed at its "
		              "memory limit.");
		return;
	}
	snprintf(pl, sizeof(pl), "{\"reason\":\"%s\",\"exit_code\":%d}",
	         oom ? "oom_killed" : "exited", exit_code);
	timeline_note(c->tl,
	              &(struct tl_event){.app_id = sb.app_id,
	                                 .type = type,
	                                 .severity = "warning",
	                                 .sandbox_id = sid,
	                                 .payload_json = pl},
	              "The sandbox's container exited (code %d%s).", exit_code,
	              oom ? ", out of memory" : "");
}

static void
reconcile_running(struct core *c, struct sandbox *sb)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;
	int rc;

	core_container_name(c, sb->id, name, sizeof(name));
	rc = orch_inspect(c->orch, name, &st, msg);
	if (rc == DOCKER_NOT_FOUND) {
		sb->status = SANDBOX_STOPPED;
		snprintf(sb->status_reason, sizeof(sb->status_reason),
		         "container_missing");
		if (store_sandbox_update(c->store, sb) == 0)
			routes_put(c->routes, sb);
		log_info("reconcile: sandbox %s: container missing", sb->id);
	} else if (rc == DOCKER_OK && st.d.running &&
	           st.d.paused != sb->frozen) {
		/* Paused or thawed while we were not looking. */
		if (store_sandbox_set_frozen(c->store, sb->id, st.d.paused) ==
		    0)
			core_route_refresh(c, sb->id);
		log_info("reconcile: sandbox %s: container %s", sb->id,
		         st.d.paused ? "paused (frozen)" : "not paused");
	} else if (rc == DOCKER_OK && !st.d.running) {
		if (store_sandbox_mark_exited(c->store, sb->id, st.d.exit_code,
		                              st.d.oom_killed) == 0)
			watch_note(c, sb->id, "sandbox.stopped", st.d.exit_code,
			           st.d.oom_killed);
		core_route_refresh(c, sb->id);
		log_info("reconcile: sandbox %s: container exited (%d%s)",
		         sb->id, st.d.exit_code,
		         st.d.oom_killed ? ", OOM" : "");
	}
}

static void
reconcile_stopped(struct core *c, const struct sandbox *sb)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;

	core_container_name(c, sb->id, name, sizeof(name));
	if (orch_inspect(c->orch, name, &st, msg) == DOCKER_OK &&
	    st.d.running) {
		log_info("reconcile: sandbox %s is stopped; stopping its "
		         "container",
		         sb->id);
		orch_stop(c->orch, name, DOCKER_STOP_GRACE_S, msg);
	}
}

static int
reconcile_row(const struct sandbox *row, void *arg)
{
	struct core *c = arg;
	struct sandbox sb;

	/*
	 * Re-read under the operation lock: a create or stop in flight
	 * finishes first, so only a row really abandoned is touched.
	 */
	core_sandbox_lock(c, row->id);
	sb.status = SANDBOX_STOPPED;
	if (store_sandbox_get(c->store, row->id, &sb) != 0)
		goto out;
	if (sb.status == SANDBOX_CREATING) {
		sb.status = SANDBOX_ERROR;
		snprintf(sb.status_reason, sizeof(sb.status_reason),
		         "interrupted");
		snprintf(sb.error_message, sizeof(sb.error_message),
		         "interrupted while creating (the daemon stopped); "
		         "create a new sandbox to replace it");
		if (store_sandbox_update(c->store, &sb) == 0)
			routes_put(c->routes, &sb);
		log_warn("reconcile: sandbox %s was interrupted while "
		         "creating",
		         sb.id);
	} else if (sb.status == SANDBOX_RUNNING) {
		reconcile_running(c, &sb);
	} else if (sb.status == SANDBOX_STOPPED) {
		reconcile_stopped(c, &sb);
	}
out:
	core_sandbox_unlock(c, row->id);
	/* Running on from before: the edge learns whether it has a web
	 * process (its configure did not run in this daemon).  Outside the
	 * lock: the manifest is the sandbox's to make slow. */
	if (sb.status == SANDBOX_RUNNING)
		runtime_note_manifest(c, row->id);
	return 0;
}

int
core_reconcile(struct core *c)
{
	struct orphan_scan scan = {.c = c};
	char msg[DOCKER_MSG_LEN];

	if (store_sandbox_list(c->store, reconcile_row, c) < 0)
		return -1;
	/* After the rows: interrupted creates are now "error", so their
	 * containers go too. */
	if (orch_list(c->orch, "sandboxd.instance", c->instance,
	              check_container, &scan, msg) != DOCKER_OK) {
		log_warn("reconcile: %s", msg);
		return -1;
	}
	workspace_empty_trash(c->cfg->data_dir);
	log_info("reconcile: done (%d orphan container%s removed)",
	         scan.removed, scan.removed == 1 ? "" : "s");
	return 0;
}

/*
 * A container died.  Under the sandbox's lock, so a stop in flight
 * writes its row (and its own event) first: its container's die then
 * finds the row stopped and is no event of its own.  The edge's copy is
 * refreshed under the same lock.
 */
static void
on_die(struct core *c, const char *sid, int exit_code)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;

	core_container_name(c, sid, name, sizeof(name));
	core_sandbox_lock(c, sid);
	if (orch_inspect(c->orch, name, &st, msg) == DOCKER_OK) {
		if (st.d.running) {
			core_sandbox_unlock(c, sid);
			return; /* restarted meanwhile */
		}
	} else {
		memset(&st, 0, sizeof(st));
		st.d.exit_code = exit_code;
	}
	if (store_sandbox_mark_exited(c->store, sid, st.d.exit_code,
	                              st.d.oom_killed) == 0) {
		log_info("sandbox %s: container exited (%d%s)", sid,
		         st.d.exit_code, st.d.oom_killed ? ", OOM" : "");
		watch_note(c, sid, "sandbox.stopped", st.d.exit_code,
		           st.d.oom_killed);
	}
	core_route_refresh(c, sid);
	core_sandbox_unlock(c, sid);
}

static void
on_event(const struct orch_event *ev, void *arg)
{
	struct core *c = arg;
	const char *action = ev->action;
	char sid[ULID_LEN + 1], name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;

	if (!container_sandbox_of(c, ev->name, sid, sizeof(sid)))
		return;
	if (strcmp(action, "pause") == 0 || strcmp(action, "unpause") == 0) {
		/*
		 * Under the lock, so a freeze or thaw in flight writes first,
		 * and from what the container is now, not from the event:
		 * an event read late (a pause, then an unpause, then a freeze)
		 * must not set the flag back to a state long gone.
		 */
		core_container_name(c, sid, name, sizeof(name));
		core_sandbox_lock(c, sid);
		if (orch_inspect(c->orch, name, &st, msg) == DOCKER_OK &&
		    st.d.running &&
		    store_sandbox_set_frozen(c->store, sid, st.d.paused) == 0)
			core_route_refresh(c, sid);
		core_sandbox_unlock(c, sid);
	} else if (strcmp(action, "oom") == 0) {
		store_sandbox_mark_oom(c->store, sid);
		watch_note(c, sid, "sandbox.oom_killed", 0, true);
		log_warn("sandbox %s: a process was killed at the memory limit",
		         sid);
	} else if (strcmp(action, "die") == 0) {
		on_die(c, sid, ev->exit_code);
	}
}

static void
nap(struct core *c, int ms)
{
	for (int i = 0; i < ms / 50 && !c->stopping; i++)
		usleep(50 * 1000);
}

static void *
watch_main(void *arg)
{
	struct core *c = arg;
	char msg[DOCKER_MSG_LEN];
	bool was_up = orch_is_up(c->orch);
	int64_t since;

	while (!c->stopping) {
		if (orch_ping(c->orch, msg) != DOCKER_OK) {
			if (was_up)
				log_warn("docker engine down: %s", msg);
			was_up = false;
			nap(c, 1000);
			continue;
		}
		since = clock_now() - 1;
		if (!was_up) {
			log_info("docker engine is back; reconciling");
			core_reconcile(c);
		}
		was_up = true;
		orch_events(c->orch, "sandboxd.instance", c->instance, since,
		            on_event, c, &c->stopping);
		if (!c->stopping)
			nap(c, 200);
	}
	return NULL;
}

int
core_watch_start(struct core *c)
{
	if (pthread_create(&c->watcher, NULL, watch_main, c) != 0)
		return -1;
	c->watcher_started = true;
	return 0;
}

void
core_watch_stop(struct core *c)
{
	c->stopping = true;
	if (c->watcher_started)
		pthread_join(c->watcher, NULL);
	c->watcher_started = false;
}
