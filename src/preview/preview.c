/*
 * Preview routing: resolve, wakes, admission (host names are parsed by
 * the edge, src/edge/host.c).
 *
 * The edge's loop calls in here for every new app connection, so nothing
 * here may wait on Docker, the store or a sandbox's lock: what a sandbox
 * is (address, state, ports) comes from the routing table
 * (sandbox/routes.c), which lifecycle and the watcher keep in step with the
 * store, and an unknown id costs one lookup there.  A stopped sandbox
 * gets a wake thread (at most one per sandbox at a time — twenty first
 * requests share one container start) and the caller answers "waking"
 * at once.  Use and start times live in
 * sandbox/activity.c; here only the wake state of each sandbox (waking, and
 * the last failure to show once), in a fixed array (lib/idtab.h).
 * When it is full the entry touched longest ago that is not waking is
 * reused: at worst a failure is not shown and the next request wakes
 * again.
 */
#include "preview/preview.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orch/orch.h"
#include "sandbox/activity.h"
#include "sandbox/membudget.h"
#include "sandbox/routes.h"
#include "lib/idtab.h"
#include "lib/clock.h"
#include "lib/metrics.h"
#include "lib/log.h"

struct pv_entry {
	char id[ULID_LEN + 1]; /* "" when free */
	bool waking;
	bool wake_failed;
	int64_t used_ms; /* monotonic time of the last wake asked for */
	char wake_error[160];
};

struct preview {
	pthread_mutex_t mu;
	struct idtab tab; /* over e */
	struct pv_entry e[PREVIEW_SLOTS];
};

/* Of a full table, the entry touched longest ago that is not waking is
 * reused. */
static int64_t
pv_keep(const void *entry)
{
	const struct pv_entry *e = entry;

	return e->waking ? IDTAB_PINNED : e->used_ms;
}

/* Called with pv->mu held. */
static struct pv_entry *
slot(struct core *c, const char *id, bool create)
{
	return create ? idtab_put(&c->pv->tab, id) : idtab_get(&c->pv->tab, id);
}

int
preview_init(struct core *c)
{
	c->pv = calloc(1, sizeof(*c->pv));
	if (c->pv == NULL)
		return -1;
	pthread_mutex_init(&c->pv->mu, NULL);
	idtab_init(&c->pv->tab, c->pv->e, PREVIEW_SLOTS, sizeof(c->pv->e[0]),
	           pv_keep);
	return 0;
}

void
preview_release(struct core *c)
{
	if (c->pv == NULL)
		return;
	pthread_mutex_destroy(&c->pv->mu);
	free(c->pv);
	c->pv = NULL;
}

struct wake_job {
	struct core *c;
	char id[ULID_LEN + 1];
};

static void *
wake_main(void *arg)
{
	struct wake_job *job = arg;
	struct sandbox sb;
	struct err e = {0};
	struct pv_entry *pe;
	struct route rt;
	int64_t t0 = clock_mono_ms();
	bool thaw = routes_get(job->c->routes, job->id, &rt) && rt.frozen;
	int rc;

	rc = core_sandbox_start(job->c, job->id, &sb, &e);
	metric_inc(rc < 0 ? METRIC_WAKES_FAILED : METRIC_WAKES_OK);
	if (rc == 0) {
		int64_t ms = clock_mono_ms() - t0;
		char num[24];
		const char *kv[] = {"sandbox", job->id, "wake_ms", num, NULL};

		snprintf(num, sizeof(num), "%lld", (long long)ms);
		metric_observe(METRIC_WAKE_SECONDS, ms);
		log_with("info", kv, "sandbox %s: %s in %lld ms", job->id,
		         thaw ? "thawed" : "woke", (long long)ms);
	}
	pthread_mutex_lock(&job->c->pv->mu);
	if ((pe = slot(job->c, job->id, true)) != NULL) {
		pe->waking = false;
		pe->wake_failed = rc < 0;
		snprintf(pe->wake_error, sizeof(pe->wake_error), "%s",
		         rc < 0 ? e.msg : "");
	}
	pthread_mutex_unlock(&job->c->pv->mu);
	if (rc < 0)
		log_warn("sandbox %s: wake failed: %s", job->id, e.msg);
	free(job);
	return NULL;
}

/* Starts a wake unless one runs; the caller holds pv->mu. */
static void
wake_begin(struct core *c, struct pv_entry *pe)
{
	struct wake_job *job;
	pthread_attr_t attr;
	pthread_t t;

	if (pe->waking)
		return;
	job = malloc(sizeof(*job));
	if (job == NULL)
		return;
	job->c = c;
	memcpy(job->id, pe->id, sizeof(job->id));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, wake_main, job) == 0) {
		pe->waking = true;
		pe->wake_failed = false;
		log_info("sandbox %s: waking for a preview request", pe->id);
	} else {
		free(job);
	}
	pthread_attr_destroy(&attr);
}

/* A frozen sandbox: a wake thread thaws it (one at a time). */
static void
thaw_begin(struct core *c, const char *id)
{
	struct pv_entry *pe;

	pthread_mutex_lock(&c->pv->mu);
	if ((pe = slot(c, id, true)) != NULL) {
		pe->used_ms = clock_mono_ms();
		wake_begin(c, pe);
	}
	pthread_mutex_unlock(&c->pv->mu);
}

static bool
port_declared(const struct route *rt, int port)
{
	for (int i = 0; i < rt->nports; i++)
		if (rt->ports[i] == port)
			return true;
	return false;
}

/* A stopped (or waking) sandbox: start or join a wake, or refuse it. */
static void
resolve_asleep(struct core *c, struct preview_target *t)
{
	struct pv_entry *pe;
	int avail = membudget_available_pct(c, NULL);

	pthread_mutex_lock(&c->pv->mu);
	pe = slot(c, t->id, true);
	if (pe)
		pe->used_ms = clock_mono_ms();
	if (pe && pe->wake_failed && !pe->waking) {
		t->state = PREVIEW_FAILED;
		snprintf(t->message, sizeof(t->message), "waking failed: %s",
		         pe->wake_error);
		pe->wake_failed = false; /* the next request tries again */
	} else if (pe && !pe->waking && avail >= 0 &&
	           avail < c->cfg->mem_refuse_pct) {
		t->state = PREVIEW_NO_HEADROOM;
		t->retry_after_s = 30;
		snprintf(t->message, sizeof(t->message),
		         "the server has %d%% of its memory free; waking is "
		         "refused below %lld%%",
		         avail, (long long)c->cfg->mem_refuse_pct);
	} else if (pe) {
		wake_begin(c, pe);
		t->state = PREVIEW_WAKING;
		t->retry_after_s = 1;
		snprintf(t->message, sizeof(t->message), "waking the app");
	}
	pthread_mutex_unlock(&c->pv->mu);
}

/*
 * A running sandbox on another node: the node tunnel's loopback address
 * and the preamble naming sandbox and port (orch_target never blocks).
 * A frozen one is thawed as a local one is (thaw_begin); the request
 * waits in the tunnel meanwhile.
 */
static void
remote_target(struct core *c, const struct route *rt, int port,
              struct preview_target *t)
{
	struct orch_target ot;

	memset(&ot, 0, sizeof(ot));
	if (rt->frozen)
		thaw_begin(c, rt->id);
	if (c->orch == NULL ||
	    orch_target(c->orch, rt->id, rt->node, NULL, port, &ot) < 0 ||
	    ot.addr.ss_family != AF_INET || ot.preamble_len == 0 ||
	    ot.preamble_len > sizeof(t->preamble)) {
		t->state = PREVIEW_NODE_DOWN;
		t->retry_after_s = 5;
		snprintf(t->message, sizeof(t->message),
		         "no way to reach node %s from here", rt->node);
		return;
	}
	t->state = PREVIEW_UP;
	memcpy(&t->addr, &ot.addr, sizeof(t->addr));
	memcpy(t->preamble, ot.preamble, ot.preamble_len);
	t->preamble_len = ot.preamble_len;
}

void
preview_resolve(struct core *c, const char *id, int port,
                struct preview_target *t)
{
	struct route rt;

	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	t->port = port;
	t->state = PREVIEW_UNKNOWN;
	if (!routes_get(c->routes, id, &rt)) {
		snprintf(t->message, sizeof(t->message), "no such sandbox");
		return;
	}
	if (!port_declared(&rt, port)) {
		snprintf(t->message, sizeof(t->message),
		         "port %d is not declared by this sandbox", port);
		return;
	}
	activity_touch(c->act, id);
	if (rt.node_down) {
		t->state = PREVIEW_NODE_DOWN;
		t->retry_after_s = 5;
		snprintf(t->message, sizeof(t->message),
		         "the server that runs this app (node %s) does not "
		         "answer",
		         rt.node);
	} else if (rt.node[0] && rt.state == SANDBOX_RUNNING) {
		remote_target(c, &rt, port, t);
	} else if (rt.state == SANDBOX_ERROR) {
		t->state = PREVIEW_FAILED;
		snprintf(t->message, sizeof(t->message), "%s", rt.error);
	} else if (rt.state == SANDBOX_RUNNING && rt.has_addr) {
		/*
		 * Frozen: proxied at once all the same.  The kernel accepts
		 * the connection into the frozen app's backlog and the request
		 * waits there for the thaw (milliseconds), so no warming page.
		 */
		if (rt.frozen)
			thaw_begin(c, id);
		t->state = PREVIEW_UP;
		t->addr.sin_family = AF_INET;
		t->addr.sin_addr = rt.addr;
		t->addr.sin_port = htons((uint16_t)port);
	} else if (rt.state == SANDBOX_STOPPED) {
		resolve_asleep(c, t);
	} else {
		t->state = PREVIEW_STARTING; /* creating, or no address yet */
		t->retry_after_s = 1;
		snprintf(t->message, sizeof(t->message), "starting");
	}
}

void
preview_connect_failed(struct core *c, struct preview_target *t)
{
	struct route rt;
	bool known = routes_get(c->routes, t->id, &rt);
	int64_t since = activity_since_start_ms(c->act, t->id);

	/* No web process will ever come: say so, not "starting". */
	if (known && rt.no_web) {
		t->state = PREVIEW_NO_WEB;
		snprintf(t->message, sizeof(t->message),
		         "this app has no web process; it runs workers: %s",
		         rt.workers[0] ? rt.workers : "none");
		return;
	}
	/*
	 * Not seen starting since this daemon started: the row's update
	 * that made it running is when its container started, near enough.
	 */
	if (since < 0 && known && rt.state == SANDBOX_RUNNING)
		since = (clock_now() - rt.started_at) * 1000;
	if (since >= 0 && since < c->cfg->wake_ready_s * 1000) {
		t->state = PREVIEW_STARTING;
		t->retry_after_s = 1;
		snprintf(t->message, sizeof(t->message),
		         "the app is starting (nothing on port %d yet)",
		         t->port);
		return;
	}
	t->state = PREVIEW_NOT_LISTENING;
	snprintf(t->message, sizeof(t->message),
	         "nothing listens on port %d in the sandbox: check web.port "
	         "in sandbox.yaml (and that the server binds 0.0.0.0)",
	         t->port);
}
