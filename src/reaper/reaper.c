/*
 * The idle and pressure reapers (see reaper.h for the rules).
 *
 * serve()'s periodic jobs (lib/periodic.h) run each pass on its period,
 * on the "reaper" lane.  The idle pass first flushes the edge's in-memory
 * activity into the store, so the decision and the deadline that survives a
 * restart are the same number.  Stops go through core_sandbox_stop_why(), which
 * takes the sandbox's lock, so a reaper never races an API start or delete.
 * Memory is the host's, or the daemon's own budget (sandbox/membudget.h).
 */
#include "reaper/reaper.h"

#include <stdio.h>
#include <string.h>

#include "sandbox/activity.h"
#include "sandbox/membudget.h"
#include "sandbox/runtime.h"
#include "task/task.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"

/* The later of the store's and the edge's idea of the last activity. */
static int64_t
last_active(struct core *c, const struct sandbox *sb)
{
	int64_t mem = activity_last_active(c->act, sb->id);

	return mem > sb->last_active_at ? mem : sb->last_active_at;
}

struct idle_scan {
	struct core *c;
	int64_t now;
	int64_t threshold; /* one value for the whole pass */
};

static int
idle_one(const struct sandbox *sb, void *arg)
{
	struct idle_scan *s = arg;
	const char *policy = core_sleep_policy(s->c, sb);
	struct sandbox out;
	struct err e = {0};
	int64_t idle, seen;

	if (sb->status != SANDBOX_RUNNING || policy == NULL ||
	    task_running_on(s->c, sb->id))
		return 0;
	seen = last_active(s->c, sb);
	idle = s->now - seen;
	/* An install step that runs is work, as a task is (asked only of
	 * a sandbox due to sleep: one status request). */
	if (!sb->frozen &&
	    (idle > s->threshold || idle > s->c->cfg->freeze_after_s) &&
	    runtime_install_running(s->c, sb->id))
		return 0;
	if (idle > s->threshold) {
		log_info("idle reaper: sandbox %s idle for %llds (threshold "
		         "%llds); stopping",
		         sb->id, (long long)idle, (long long)s->threshold);
		if (core_sandbox_stop_why(s->c, sb->id, "idle", &out, &e) < 0)
			log_warn("idle reaper: sandbox %s: %s", sb->id, e.msg);
		else
			metric_inc(METRIC_REAPER_IDLE_STOPS);
	} else if (!sb->frozen && strcmp(policy, "freeze") == 0 &&
	           idle > s->c->cfg->freeze_after_s) {
		log_info("idle reaper: sandbox %s idle for %llds; freezing",
		         sb->id, (long long)idle);
		if (core_sandbox_freeze(s->c, sb->id, seen, &e) < 0)
			log_warn("idle reaper: sandbox %s: %s", sb->id, e.msg);
	}
	return 0;
}

void
reaper_idle_pass(struct core *c)
{
	struct idle_scan s = {
	    .c = c, .now = clock_now(), .threshold = core_idle_threshold(c)};

	activity_flush(c->act, c->store);
	store_sandbox_list(c->store, idle_one, &s);
}

struct victim {
	struct core *c;
	struct sandbox best;
	int64_t best_active;
	int best_rank;
	bool found;
};

/*
 * Ranks candidates: frozen sandboxes go first (nobody is using them),
 * sandboxes running a task go last, then "always_on"; within a rank the
 * least recently active goes first.
 */
static int
rank(struct core *c, const struct sandbox *sb)
{
	return (task_running_on(c, sb->id) ? 4 : 0) +
	       (strcmp(sb->idle_policy, "always_on") == 0 ? 2 : 0) +
	       (sb->frozen ? 0 : 1);
}

static int
pressure_one(const struct sandbox *sb, void *arg)
{
	struct victim *v = arg;
	int64_t at = last_active(v->c, sb);
	int r, best;

	if (sb->status != SANDBOX_RUNNING)
		return 0;
	r = rank(v->c, sb);
	best = v->found ? v->best_rank : 0;
	if (!v->found || r < best || (r == best && at < v->best_active)) {
		v->best_rank = r;
		v->best = *sb;
		v->best_active = at;
		v->found = true;
	}
	return 0;
}

void
reaper_pressure_pass(struct core *c)
{
	struct victim v = {.c = c};
	struct sandbox out;
	struct err e = {0};
	struct membudget m;
	int avail = membudget_available_pct(c, &m);
	char budget[96] = "";

	if (avail < 0 || avail >= c->cfg->mem_headroom_pct)
		return;
	if (c->cfg->mem_budget_mb > 0)
		snprintf(budget, sizeof(budget),
		         " of the %lld MiB budget (%d sandboxes hold %lld MiB)",
		         (long long)c->cfg->mem_budget_mb, m.sandboxes,
		         (long long)(m.used_kb / 1024));
	store_sandbox_list(c->store, pressure_one, &v);
	if (!v.found)
		return;
	log_warn("pressure reaper: %d%% of memory available%s (< %lld%%); "
	         "stopping %ssandbox %s (last active %llds ago)",
	         avail, budget, (long long)c->cfg->mem_headroom_pct,
	         v.best.frozen ? "frozen " : "", v.best.id,
	         (long long)(clock_now() - v.best_active));
	if (core_sandbox_stop_why(c, v.best.id, "pressure", &out, &e) < 0)
		log_warn("pressure reaper: sandbox %s: %s", v.best.id, e.msg);
	else
		metric_inc(METRIC_REAPER_PRESSURE_STOPS);
}
