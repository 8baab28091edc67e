/*
 * The idle and pressure reapers (see reaper.h for the rules).
 *
 * serve()'s periodic jobs (lib/periodic.h) run each pass on its period,
 * on the "reaper" lane.  The idle pass first flushes the edge's in-memory
 * activity into the store, so the decision and the deadline that survives a
 * restart are the same number.  Stops go through core_sandbox_stop_why(), which
 * takes the sandbox's lock, so a reaper never races an API start or delete.
 * Memory is the host's, or the daemon's own budget (sandbox/membudget.h).
 * With more than one server each node is its own pool: the manager's
 * sandboxes (node "") against this host as above, and each other node's
 * against the memory its agent reported at the last heartbeat
 * (store/nodes.c, cluster/nodes.c), one stop per short node per pass.
 * A node not heard from (never, or down) is left alone: its figures are
 * stale, and a down node's sandboxes are stopped already.
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

#define REAPER_NODES_MAX 64 /* nodes the pressure pass looks at */

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
	const char *node; /* only sandboxes on this node ("" this host) */
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

	if (sb->status != SANDBOX_RUNNING || strcmp(sb->node, v->node) != 0)
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

/* Stops the best victim on v->node; why says what ran short. */
static void
stop_victim(struct core *c, struct victim *v, const char *why)
{
	struct sandbox out;
	struct err e = {0};

	store_sandbox_list(c->store, pressure_one, v);
	if (!v->found)
		return;
	log_warn("pressure reaper: %s; stopping %ssandbox %s (last active "
	         "%llds ago)",
	         why, v->best.frozen ? "frozen " : "", v->best.id,
	         (long long)(clock_now() - v->best_active));
	if (core_sandbox_stop_why(c, v->best.id, "pressure", &out, &e) < 0)
		log_warn("pressure reaper: sandbox %s: %s", v->best.id, e.msg);
	else
		metric_inc(METRIC_REAPER_PRESSURE_STOPS);
}

struct node_scan {
	struct node_row r[REAPER_NODES_MAX];
	size_t n;
};

static void
node_one(const struct node_row *n, void *arg)
{
	struct node_scan *l = arg;

	if (l->n < REAPER_NODES_MAX && n->last_seen > 0 && n->mem_bytes > 0 &&
	    (strcmp(n->status, "ready") == 0 ||
	     strcmp(n->status, "draining") == 0))
		l->r[l->n++] = *n;
}

/* Each other node against its last heartbeat's memory. */
static void
pressure_nodes(struct core *c)
{
	static struct node_scan l; /* the reaper lane's only */
	char why[160];

	l.n = 0;
	if (store_node_list(c->store, node_one, &l) != 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		const struct node_row *n = &l.r[i];
		struct victim v = {.c = c, .node = n->name};
		int64_t pct = n->mem_available * 100 / n->mem_bytes;

		if (pct >= c->cfg->mem_headroom_pct)
			continue;
		snprintf(why, sizeof(why),
		         "node %.63s has %lld%% of its memory available (< "
		         "%lld%%)",
		         n->name, (long long)pct,
		         (long long)c->cfg->mem_headroom_pct);
		stop_victim(c, &v, why);
	}
}

void
reaper_pressure_pass(struct core *c)
{
	struct victim v = {.c = c, .node = ""};
	struct membudget m;
	int avail = membudget_available_pct(c, &m);
	char budget[96] = "", why[192];

	pressure_nodes(c);
	if (avail < 0 || avail >= c->cfg->mem_headroom_pct)
		return;
	if (c->cfg->mem_budget_mb > 0)
		snprintf(budget, sizeof(budget),
		         " of the %lld MiB budget (%d sandboxes hold %lld MiB)",
		         (long long)c->cfg->mem_budget_mb, m.sandboxes,
		         (long long)(m.used_kb / 1024));
	snprintf(why, sizeof(why), "%d%% of memory available%s (< %lld%%)",
	         avail, budget, (long long)c->cfg->mem_headroom_pct);
	stop_victim(c, &v, why);
}
