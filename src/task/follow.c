/*
 * The follower (see internal.h): one thread that owns every live task's
 * derivation, event log and end.
 *
 * Other threads only add a task (submit, recovery) or ask for something
 * under ts->mu (a failure to record, a cancel, forgetting it) and wake
 * the follower.  Each live task therefore holds three kinds of state,
 * kept apart by type: struct live_shared, which others write under
 * ts->mu; the derivation, log and watch, which only the follower
 * touches; and struct task_end, copied from the shared part under the
 * lock once the task ends, so finishing reads a reason nobody can change
 * underneath it.
 *
 * The follower wakes on inotify (the task directories), on the eventfd
 * (new work) or every 250 ms, and once a second ticks: heartbeats for
 * subscribers, activity for the idle reaper, a sandbox that stopped, a
 * result overdue.  A task ends when its steps say so, when a failure was
 * recorded, or when its steps are malformed; finishing writes `done` and
 * then the row, retried every turn until both went through.
 *
 * Calls go one way: the starters (start.c) report here, the follower
 * writes the logs (evlog.c) and never calls back into either; a task a
 * restart finds unstarted is handed to a starter by task.c
 * (recover_one), and the logs' subscribers reach follow_committed
 * through the ts->committed hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "agent/agent.h"
#include "disk/dedup.h"
#include "sandbox/activity.h"
#include "sandbox/runtime.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/metrics.h"
#include "lib/log.h"
#include "task/derive.h"
#include "task/evlog.h"
#include "task/internal.h"
#include "task/tlnote.h"
#include "task/result.h"
#include "task/task.h"

#define TICK_MS 1000

/* Upstream failures waiting for the follower; more are dropped. */
#define UPSTREAM_PENDING_MAX 4

/* One upstream failure, copied from the proxy's call. */
struct upstream_note {
	char upstream[16];
	char host[128];
	char kind[16];
	long status;
	bool permanent;
	char msg[384];
};

/* Set by other threads under ts->mu; read by the follower under it. */
struct live_shared {
	bool started;   /* the supervisor accepted it (or has its files) */
	bool cancelled; /* a cancel was asked for */
	bool forget;    /* the sandbox is being deleted */
	char fail_reason[32];
	char fail_msg[384];
	char provider_err[384]; /* the proxy's, for the sandbox */
	/* The task is to stop (a spend budget reached, a provider that
	 * cannot be reached): its reason and message. */
	char stop_reason[32];
	char stop_msg[384];
	/* The proxy's upstream failures, not yet in the log. */
	struct upstream_note pend[UPSTREAM_PENDING_MAX];
	unsigned npend;
	unsigned timeouts; /* upstream timeouts in a row */
};

struct live {
	struct live *next; /* ts->lives, under ts->mu */
	/* Fixed once listed. */
	struct task row; /* prompt owned, result NULL */
	enum agent_kind kind;
	char ws[WORKSPACE_PATH_MAX];
	/* Under ts->mu. */
	struct live_shared sh;
	/* The follower's own (finished and log.done are also read by
	 * follow_active_id, log.committed by follow_committed, through
	 * ts->committed). */
	struct derive d;
	struct evlog log;
	int wd; /* inotify watch, -1 */
	int64_t deadline_mono;
	int64_t stop_asked_mono; /* the agent was asked to stop (0: not) */
	bool finished;
	struct jv *done_result; /* the log's done event after a restart */
	/* Copied from sh once the task ends. */
	struct task_end end;
};

/* ---- events ---------------------------------------------------------- */

struct emit_ctx {
	struct tasks *ts;
	struct live *lv;
};

static void
emit(void *ctx, const char *type, struct jv *data)
{
	struct emit_ctx *x = ctx;

	if (x->lv->log.failed || x->lv->log.n >= TASK_EVENTS_MAX ||
	    x->lv->log.committed >= (off_t)TASK_EVLOG_MAX_BYTES) {
		jv_free(data);
		return;
	}
	evlog_append(x->ts, x->lv->row.id, &x->lv->log, type, data);
}

/* A write failed: the rest of this step's events would be lost. */
static bool
log_failed(void *ctx)
{
	struct emit_ctx *x = ctx;

	return x->lv->log.failed;
}

static void
emit_starting(struct tasks *ts, struct live *lv)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "phase", "starting");
	emit(&(struct emit_ctx){ts, lv}, "status", o);
}

/* Opens the task directory once it exists, watches it, derives. */
static void
step(struct tasks *ts, struct live *lv)
{
	struct emit_ctx x = {ts, lv};
	struct derive_sink sink = {emit, log_failed, &x};

	if (!lv->d.opened) {
		char rel[64], proc[64];
		int dirfd;
		snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s", lv->row.id);
		dirfd = wsfs_open_dir(lv->ws, rel, NULL);
		if (dirfd < 0)
			return;
		derive_open(&lv->d, dirfd, lv->kind);
		if (lv->wd < 0) {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
			lv->wd =
			    inotify_add_watch(ts->inotify_fd, proc,
			                      IN_MODIFY | IN_CREATE |
			                          IN_CLOSE_WRITE | IN_MOVED_TO);
		}
	}
	derive_step(&lv->d, &sink);
}

/* ---- finishing ------------------------------------------------------- */

/*
 * How the result says the task ended.  It is ours, but one read back
 * from the log after a restart is bytes on disk: one that names no
 * final state (a damaged log) ends the task failed.
 */
static enum task_state
result_state(const struct jv *r)
{
	int st = task_state_parse(jv_str(jv_get(r, "status")));

	return st == TASK_SUCCEEDED || st == TASK_CANCELLED
	           ? (enum task_state)st
	           : TASK_FAILED;
}

/* Writes done and the row.  0 when finished, -1 to try again later. */
static int
finish(struct tasks *ts, struct core *c, struct live *lv)
{
	struct emit_ctx x = {ts, lv};
	struct derive_sink sink = {emit, NULL, &x};
	struct result_outcome o;
	struct sandbox sb;
	struct jv *r;
	struct buf text;
	int64_t fin;
	enum task_state outcome;
	int rc;

	if (!lv->log.done) {
		derive_abandon_agent(&lv->d, &sink);
		if (store_sandbox_get(c->store, lv->row.sandbox_id, &sb) == 0)
			lv->end.sb_oom = sb.oom_killed;
		result_classify(&lv->row, &lv->d, &lv->end, &o);
		fin = lv->d.ended && lv->d.ended_ms ? lv->d.ended_ms
		                                    : clock_now_ms();
		r = result_json(&lv->row, &lv->d, &o, fin);
		result_add_spend(c->store, lv->row.id, r);
		/* done is written after whatever the log holds. */
		lv->log.failed = false;
		if (lv->log.n < lv->log.have)
			lv->log.n = lv->log.have;
		if (evlog_append(ts, lv->row.id, &lv->log, "done", jv_copy(r)) <
		    0) {
			jv_free(r);
			return -1;
		}
	} else {
		/* A restart found done in the log: its data is the result. */
		r = lv->done_result ? lv->done_result : jv_obj();
		lv->done_result = NULL;
	}
	buf_init(&text, 0);
	jv_dump(r, &text);
	outcome = result_state(r);
	rc = store_task_finish(c->store, lv->row.id, outcome,
	                       jv_str(jv_get(r, "failure_reason")) ?: "",
	                       jv_str(jv_get(r, "checkpoint_id")) ?: "",
	                       text.data ? text.data : "{}", clock_now_ms());
	if (rc == 0)
		tlnote_end(c, &lv->row, outcome,
		           jv_str(jv_get(r, "failure_reason")));
	if (rc == 0)
		metric_inc(outcome == TASK_SUCCEEDED   ? METRIC_TASKS_SUCCEEDED
		           : outcome == TASK_CANCELLED ? METRIC_TASKS_CANCELLED
		                                       : METRIC_TASKS_FAILED);
	buf_release(&text);
	log_info("task %s: %s%s%s", lv->row.id,
	         jv_str(jv_get(r, "status")) ?: "?",
	         jv_str(jv_get(r, "failure_reason")) ? " / " : "",
	         jv_str(jv_get(r, "failure_reason")) ?: "");
	jv_free(r);
	if (rc < 0)
		return -1; /* database trouble: keep it and retry */
	evlog_subs_finish(ts, lv->row.id);
	dedup_kick(c->dedup, lv->row.sandbox_id); /* what the agent installed */
	runtime_after_task(c, lv->row.sandbox_id); /* a new install key? */
	return 0;
}

/* ---- the follower ------------------------------------------------------ */

static void
live_free(struct tasks *ts, struct live *lv)
{
	if (lv->wd >= 0)
		inotify_rm_watch(ts->inotify_fd, lv->wd);
	task_mirror_stop(lv->row.id);
	derive_release(&lv->d);
	evlog_close(&lv->log);
	jv_free(lv->done_result);
	store_task_release(&lv->row);
	free(lv);
}

/* Records why the task ends unless a reason is there (ts->mu held). */
static void
fail_locked(struct live *lv, const char *reason, const char *msg)
{
	if (lv->sh.fail_reason[0])
		return;
	snprintf(lv->sh.fail_reason, sizeof(lv->sh.fail_reason), "%s", reason);
	snprintf(lv->sh.fail_msg, sizeof(lv->sh.fail_msg), "%s", msg);
}

static void set_fail(struct tasks *ts, struct live *lv, const char *reason,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
set_fail(struct tasks *ts, struct live *lv, const char *reason, const char *fmt,
         ...)
{
	char msg[sizeof(lv->sh.fail_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ts->mu);
	fail_locked(lv, reason, msg);
	pthread_mutex_unlock(&ts->mu);
}

/* Once a second: sandbox gone, overdue, activity. */
static void
live_tick(struct core *c, struct live *lv)
{
	struct sandbox sb;
	int rc;

	activity_touch(c->act, lv->row.sandbox_id);
	if (lv->d.ended)
		return;
	rc = store_sandbox_get(c->store, lv->row.sandbox_id, &sb);
	if (rc == 0 && sb.status != SANDBOX_RUNNING) {
		bool oom = sb.oom_killed ||
		           strcmp(sb.status_reason, "oom_killed") == 0;
		if (oom)
			set_fail(c->tasks, lv, "oom_killed",
			         "the sandbox was killed because it ran out of "
			         "memory");
		else
			set_fail(c->tasks, lv, "sandbox_stopped",
			         "the sandbox stopped (%s) while the task ran",
			         sb.status_reason[0]
			             ? sb.status_reason
			             : sandbox_state_name(sb.status));
	} else if (clock_mono_ms() > lv->deadline_mono) {
		char line[96];
		struct jv *ans = NULL;
		struct err e;
		snprintf(line, sizeof(line), "task cancel %s\n", lv->row.id);
		if (runtime_request(c, lv->ws, line, RUNTIME_SHARED_MS, &ans,
		                    &e) == 0)
			jv_free(ans);
		set_fail(c->tasks, lv, "internal",
		         "the sandbox reported no result within the task's "
		         "timeout plus %ds",
		         TASK_WINDOW_EXTRA_S);
	}
}

/*
 * The task is to stop (follow_stop: a spend budget reached, a provider
 * that cannot be reached): the supervisor is asked once to stop the
 * agent, as a cancel does, and the task fails with the stop's reason
 * when the supervisor says the agent ended, so the sandbox is free for
 * the next task when this one is over.  If the supervisor does not take
 * the cancel, or the agent has not ended STOP_WAIT_MS later, it fails
 * here and now.
 */
#define STOP_WAIT_MS 10000

static void
stop_turn(struct core *c, struct tasks *ts, struct live *lv)
{
	struct jv *ans = NULL;
	struct err e;
	char line[96], msg[sizeof(lv->sh.stop_msg)];
	char reason[sizeof(lv->sh.stop_reason)];
	bool send, now_fail = false;

	pthread_mutex_lock(&ts->mu);
	memcpy(msg, lv->sh.stop_msg, sizeof(msg));
	memcpy(reason, lv->sh.stop_reason, sizeof(reason));
	send = reason[0] && lv->stop_asked_mono == 0;
	pthread_mutex_unlock(&ts->mu);
	if (reason[0] == '\0')
		return;
	if (send) {
		lv->stop_asked_mono = clock_mono_ms();
		snprintf(line, sizeof(line), "task cancel %s\n", lv->row.id);
		if (runtime_request(c, lv->ws, line, RUNTIME_SHARED_MS, &ans,
		                    &e) < 0 ||
		    !jv_is_true(jv_get(ans, "ok")))
			now_fail = true;
		jv_free(ans);
	}
	if (now_fail || lv->d.ended ||
	    clock_mono_ms() - lv->stop_asked_mono > STOP_WAIT_MS)
		set_fail(ts, lv, reason, "%s", msg);
}

static struct jv *
upstream_json(const struct upstream_note *u)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "upstream", u->upstream);
	jv_set_str(o, "host", u->host);
	jv_set_str(o, "kind", u->kind);
	if (u->status)
		jv_set_int(o, "status", u->status);
	jv_set_bool(o, "permanent", u->permanent);
	jv_set_str(o, "message", u->msg);
	return o;
}

/* The proxy's upstream failures into the log, as they came. */
static void
upstream_turn(struct tasks *ts, struct live *lv)
{
	struct upstream_note pend[UPSTREAM_PENDING_MAX];
	unsigned n, done = 0;

	pthread_mutex_lock(&ts->mu);
	n = lv->sh.npend;
	memcpy(pend, lv->sh.pend, n * sizeof(*pend));
	pthread_mutex_unlock(&ts->mu);
	while (done < n && !lv->log.failed) {
		struct jv *o = upstream_json(&pend[done]);
		if (evlog_append_outside(ts, lv->row.id, &lv->log, o) == 1) {
			/* Replaying: once the derived events caught up. */
			jv_free(o);
			break;
		}
		done++; /* written, or dropped (over the cap, a failed
		           write) */
	}
	if (done == 0)
		return;
	pthread_mutex_lock(&ts->mu);
	/* Others may have come meanwhile: keep them. */
	memmove(lv->sh.pend, lv->sh.pend + done,
	        (lv->sh.npend - done) * sizeof(*pend));
	lv->sh.npend -= done;
	pthread_mutex_unlock(&ts->mu);
}

/* Works on one live task; true when it is done with. */
static bool
live_turn(struct core *c, struct live *lv, bool tick)
{
	struct tasks *ts = c->tasks;
	bool started, forget, cancelled, failing;

	pthread_mutex_lock(&ts->mu);
	started = lv->sh.started;
	forget = lv->sh.forget;
	cancelled = lv->sh.cancelled;
	pthread_mutex_unlock(&ts->mu);
	if (forget) {
		evlog_subs_finish(ts, lv->row.id);
		return true;
	}
	if (lv->log.failed) { /* derive again, skipping what is written */
		int64_t have = lv->log.n;
		derive_reset(&lv->d);
		lv->log.failed = false;
		lv->log.n = 0;
		lv->log.have = have;
		emit_starting(ts, lv);
	}
	if (started || lv->d.opened)
		step(ts, lv);
	if (tick)
		live_tick(c, lv);
	upstream_turn(ts, lv);
	stop_turn(c, ts, lv);
	pthread_mutex_lock(&ts->mu);
	failing = lv->sh.fail_reason[0] != '\0';
	pthread_mutex_unlock(&ts->mu);
	if (lv->d.ended || failing || lv->d.corrupt) {
		if (lv->d.corrupt && !failing)
			set_fail(ts, lv, "internal",
			         "the task's step records are malformed");
		/* From here on the reason is ours to read without the lock. */
		pthread_mutex_lock(&ts->mu);
		memcpy(lv->end.reason, lv->sh.fail_reason,
		       sizeof(lv->end.reason));
		memcpy(lv->end.msg, lv->sh.fail_msg, sizeof(lv->end.msg));
		memcpy(lv->end.provider, lv->sh.provider_err,
		       sizeof(lv->end.provider));
		pthread_mutex_unlock(&ts->mu);
		lv->end.cancelled = cancelled;
		if (failing && (started || lv->d.opened))
			step(ts, lv); /* what is there, first */
		return finish(ts, c, lv) == 0;
	}
	return false;
}

static void
drain(int fd)
{
	char b[4096];

	while (read(fd, b, sizeof(b)) > 0)
		;
}

void *
follow_main(void *arg)
{
	struct core *c = arg;
	struct tasks *ts = c->tasks;
	int64_t last_tick = 0;

	while (!c->stopping) {
		struct pollfd p[2] = {{ts->wake_fd, POLLIN, 0},
		                      {ts->inotify_fd, POLLIN, 0}};
		int64_t now;
		bool tick;

		poll(p, 2, 250);
		drain(ts->wake_fd);
		drain(ts->inotify_fd);
		now = clock_mono_ms();
		tick = now - last_tick >= TICK_MS;
		if (tick) {
			last_tick = now;
			evlog_subs_heartbeat(ts, TASK_HEARTBEAT_MS);
		}
		pthread_mutex_lock(&ts->mu);
		struct live *list = ts->lives;
		pthread_mutex_unlock(&ts->mu);
		/* New tasks go to the head: the rest of the list is ours. */
		for (struct live *lv = list; lv; lv = lv->next)
			if (!lv->finished && live_turn(c, lv, tick))
				lv->finished = true;
		pthread_mutex_lock(&ts->mu);
		for (struct live **pp = &ts->lives; *pp;) {
			struct live *lv = *pp;
			if (lv->finished) {
				*pp = lv->next;
				live_free(ts, lv);
			} else {
				pp = &lv->next;
			}
		}
		pthread_mutex_unlock(&ts->mu);
	}
	return NULL;
}

void
follow_wake(struct tasks *ts)
{
	uint64_t one = 1;

	if (write(ts->wake_fd, &one, sizeof(one)) < 0)
		log_warn("tasks: wake: %s", strerror(errno));
}

void
follow_free_all(struct tasks *ts)
{
	while (ts->lives) {
		struct live *lv = ts->lives;
		ts->lives = lv->next;
		live_free(ts, lv);
	}
}

/* ---- the live list --------------------------------------------------- */

static struct live *
live_new(struct core *c, const struct task *row)
{
	struct live *lv = calloc(1, sizeof(*lv));

	if (lv == NULL)
		return NULL;
	lv->row = *row;
	lv->row.prompt = strdup(row->prompt ? row->prompt : "");
	lv->row.result = NULL;
	lv->kind = (enum agent_kind)agent_kind_parse(row->agent);
	lv->wd = -1;
	derive_init(&lv->d);
	workspace_path(c->cfg->data_dir, row->sandbox_id, lv->ws,
	               sizeof(lv->ws));
	task_mirror_start(c, row, lv->ws, sizeof(lv->ws)); /* a remote one */
	lv->deadline_mono = clock_mono_ms() +
	                    (row->timeout_s + TASK_WINDOW_EXTRA_S) * 1000 -
	                    (clock_now_ms() - row->created_at);
	if (lv->row.prompt == NULL ||
	    evlog_open(c->cfg->data_dir, row->id, &lv->log, &lv->done_result) <
	        0) {
		free(lv->row.prompt);
		free(lv);
		return NULL;
	}
	return lv;
}

static void
live_add(struct core *c, struct live *lv)
{
	pthread_mutex_lock(&c->tasks->mu);
	lv->next = c->tasks->lives;
	c->tasks->lives = lv;
	pthread_mutex_unlock(&c->tasks->mu);
	follow_wake(c->tasks);
}

int
follow_add(struct core *c, const struct task *row)
{
	struct live *lv = live_new(c, row);

	if (lv == NULL)
		return -1;
	emit_starting(c->tasks, lv);
	live_add(c, lv);
	return 0;
}

/* Called with ts->mu held (from evlog.c). */
int
follow_committed(struct tasks *ts, const char *id, off_t *out)
{
	for (struct live *lv = ts->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0 && !lv->log.done) {
			*out = lv->log.committed;
			return 0;
		}
	return -1;
}

void
follow_fail(struct core *c, const char *id, const char *reason, const char *msg)
{
	struct tasks *ts = c->tasks;

	pthread_mutex_lock(&ts->mu);
	for (struct live *lv = ts->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			fail_locked(lv, reason, msg);
	pthread_mutex_unlock(&ts->mu);
	follow_wake(ts);
}

void
follow_mark_started(struct core *c, const char *id)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			lv->sh.started = true;
	pthread_mutex_unlock(&c->tasks->mu);
	follow_wake(c->tasks);
}

bool
follow_wanted(struct core *c, const char *id)
{
	bool want = false;

	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			want = !lv->sh.fail_reason[0] && !lv->sh.cancelled;
	pthread_mutex_unlock(&c->tasks->mu);
	return want;
}

void
follow_cancel(struct core *c, const char *id)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			lv->sh.cancelled = true;
	pthread_mutex_unlock(&c->tasks->mu);
}

void
follow_provider_error(struct core *c, const char *sandbox_id, const char *msg)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0)
			snprintf(lv->sh.provider_err,
			         sizeof(lv->sh.provider_err), "%s", msg);
	pthread_mutex_unlock(&c->tasks->mu);
}

/* The first stop wins (ts->mu held). */
static void
stop_locked(struct live *lv, const char *reason, const char *msg)
{
	if (lv->sh.stop_reason[0])
		return;
	snprintf(lv->sh.stop_reason, sizeof(lv->sh.stop_reason), "%s", reason);
	snprintf(lv->sh.stop_msg, sizeof(lv->sh.stop_msg), "%s", msg);
}

void
follow_stop(struct core *c, const char *sandbox_id, const char *reason,
            const char *msg)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0)
			stop_locked(lv, reason, msg);
	pthread_mutex_unlock(&c->tasks->mu);
	follow_wake(c->tasks);
}

void
follow_upstream(struct core *c, const char *sandbox_id,
                const struct task_upstream *u)
{
	struct tasks *ts = c->tasks;

	pthread_mutex_lock(&ts->mu);
	for (struct live *lv = ts->lives; lv; lv = lv->next) {
		struct upstream_note *n;
		bool perm = u->reason != NULL;
		if (strcmp(lv->row.sandbox_id, sandbox_id) != 0 || lv->log.done)
			continue;
		if (strcmp(u->kind, "timeout") == 0 &&
		    ++lv->sh.timeouts >= TASK_UPSTREAM_TIMEOUTS_MAX)
			perm = true;
		if (perm)
			stop_locked(
			    lv, u->reason ? u->reason : "provider_unreachable",
			    u->msg);
		if (lv->sh.npend >= UPSTREAM_PENDING_MAX)
			continue;
		n = &lv->sh.pend[lv->sh.npend++];
		snprintf(n->upstream, sizeof(n->upstream), "%s", u->upstream);
		snprintf(n->host, sizeof(n->host), "%s", u->host);
		snprintf(n->kind, sizeof(n->kind), "%s", u->kind);
		snprintf(n->msg, sizeof(n->msg), "%s", u->msg);
		n->status = u->status;
		n->permanent = perm;
	}
	pthread_mutex_unlock(&ts->mu);
	follow_wake(ts);
}

void
follow_upstream_answered(struct core *c, const char *sandbox_id)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0)
			lv->sh.timeouts = 0;
	pthread_mutex_unlock(&c->tasks->mu);
}

bool
follow_active_id(struct core *c, const char *sandbox_id, char id[ULID_LEN + 1])
{
	bool found = false;

	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0 &&
		    !lv->finished && !lv->log.done) {
			snprintf(id, ULID_LEN + 1, "%s", lv->row.id);
			found = true;
		}
	pthread_mutex_unlock(&c->tasks->mu);
	return found;
}

void
follow_forget_sandbox(struct core *c, const char *sandbox_id)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0)
			lv->sh.forget = true;
	pthread_mutex_unlock(&c->tasks->mu);
	follow_wake(c->tasks);
}

/* ---- recovery -------------------------------------------------------- */

int
follow_again(struct core *c, const struct task *t)
{
	struct live *lv = live_new(c, t);
	struct sandbox sb;
	char ws[WORKSPACE_PATH_MAX], rel[96];
	int wsfd, fd;
	bool have_steps = false, started, done;

	if (lv == NULL) {
		log_error("task %s: cannot follow it again", t->id);
		return -1;
	}
	/* Event 0 again (the log has it: counted, not written). */
	emit_starting(c->tasks, lv);
	workspace_path(c->cfg->data_dir, t->sandbox_id, ws, sizeof(ws));
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/steps", t->id);
	if ((wsfd = wsfs_open_dir(ws, ".", NULL)) >= 0) {
		fd = wsfs_openat(wsfd, rel, O_PATH, 0);
		have_steps = fd >= 0;
		if (fd >= 0)
			close(fd);
		close(wsfd);
	}
	done = lv->log.done;
	started = lv->sh.started = have_steps || done;
	live_add(c, lv);
	return !started && !done &&
	               store_sandbox_get(c->store, t->sandbox_id, &sb) == 0 &&
	               sb.status == SANDBOX_RUNNING
	           ? 1
	           : 0;
}
