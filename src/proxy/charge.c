/*
 * What a model call holds on the budgets and what it is charged: the
 * credential proxy's side of spend (spend/spend.h), between the request
 * (proxy.c, once its body is in) and the answer (upstream.c, once the
 * transfer ended).
 *
 * Before the call goes upstream (charge_begin) the request's body is
 * read for the few fields that decide how it can be metered
 * (meter_request): a Responses call in the background, whose answer is
 * fetched later and never passes here, is refused while a budget
 * applies; an OpenAI-compatible stream that did not ask for its usage
 * is made to (stream_options.include_usage spliced in, when the request
 * has no stream_options of its own); and the call reserves an estimate,
 * its input from the body's size and its output up to its max_tokens
 * (PROXY_OUTPUT_DEFAULT_TOKENS without one) for each of its "n"
 * answers, at its model's price.  A
 * reservation that would pass a budget refuses the call with 403
 * permission_error, which no agent CLI sends again, and ends the task.
 *
 * After (charge_settle) the answer's count replaces the reservation in
 * one step: the provider's usage, or what passed when it reported none
 * (meter_result).  An error answer is not charged; its reservation, and
 * that of a call that never went (preq_unref), is dropped.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/limits.h"
#include "lib/log.h"
#include "proxy/internal.h"
#include "task/task.h"
#include "timeline/timeline.h"
#include "lib/clock.h"

/* Asks an OpenAI-compatible stream for its usage (best effort: when the
 * body is at its cap the answer is charged from what passed). */
static void
ask_usage(struct preq *r, const struct meter_req *rq)
{
	static const char opt[] =
	    "\"stream_options\":{\"include_usage\":true},";
	size_t k = sizeof(opt) - 1, at = rq->open_at + 1;

	if (strcmp(r->path.rest, "/chat/completions") != 0 || !rq->stream ||
	    rq->include_usage || rq->stream_options || !rq->object ||
	    at > r->body.len || buf_append(&r->body, opt, k) < 0)
		return;
	memmove(r->body.data + at + k, r->body.data + at, r->body.len - k - at);
	memcpy(r->body.data + at, opt, k);
}

/*
 * A budget reached, on the app's timeline: once a minute per app at
 * most (every refused call says the same), for the last few apps seen.
 */
#define CHARGE_NOTE_APPS 16
#define CHARGE_NOTE_S    60

static void
note_budget(struct preq *r, const char *why)
{
	static struct {
		char app[ULID_LEN + 1];
		int64_t at;
	} seen[CHARGE_NOTE_APPS];
	static unsigned next;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	int64_t now = clock_now();
	bool fresh = true;

	pthread_mutex_lock(&mu);
	for (unsigned i = 0; i < CHARGE_NOTE_APPS; i++)
		if (strcmp(seen[i].app, r->app) == 0) {
			fresh = now - seen[i].at >= CHARGE_NOTE_S;
			if (fresh)
				seen[i].at = now;
			goto out;
		}
	snprintf(seen[next].app, sizeof(seen[next].app), "%s", r->app);
	seen[next].at = now;
	next = (next + 1) % CHARGE_NOTE_APPS;
out:
	pthread_mutex_unlock(&mu);
	if (fresh)
		timeline_note(
		    r->px->core->tl,
		    &(struct tl_event){.app_id = r->app,
		                       .type = "app.budget_reached",
		                       .sandbox_id = r->sandbox,
		                       .task_id = r->task[0] ? r->task : NULL},
		    "A spend budget was reached: %s", why);
}

int
charge_begin(struct preq *r, char *why, size_t len)
{
	struct store *st = r->px->core->store;
	struct meter_req rq;
	int64_t in, out;

	meter_request(r->body.data ? r->body.data : "", r->body.len, &rq);
	if (rq.background &&
	    spend_budget_applies(st, r->app, r->owner, r->own)) {
		snprintf(
		    why, len,
		    "sandboxd proxy: a background call cannot be metered "
		    "(its answer is fetched later, not through the proxy), "
		    "so it is refused while a spend budget applies; call "
		    "without \"background\": true");
		return 1;
	}
	ask_usage(r, &rq);
	snprintf(r->hold.app, sizeof(r->hold.app), "%s", r->app);
	snprintf(r->hold.tenant, sizeof(r->hold.tenant), "%s", r->owner);
	r->hold.own = r->own;
	in = meter_tokens_of_bytes((int64_t)r->body.len);
	out = rq.max_tokens >= 0 ? rq.max_tokens : PROXY_OUTPUT_DEFAULT_TOKENS;
	out *= rq.choices; /* "n" answers, each up to the cap */
	if (spend_reserve(st, &r->hold, r->path.up.name,
	                  rq.model[0] ? rq.model : "unknown", in, out, why,
	                  len) == 1) {
		log_warn("proxy: sandbox %s: %s", r->sandbox, why);
		task_budget_reached(r->px->core, r->sandbox, why);
		note_budget(r, why);
		return 1;
	}
	r->metered = true;
	meter_init(&r->meter, false);
	return 0;
}

void
charge_settle(struct preq *r, long status)
{
	struct meter_usage u;
	struct store_spend d = {0};
	struct meter_req rq;
	char why[SPEND_REASON_MAX];
	const char *model = r->meter.model;

	if (!r->metered)
		return;
	if (status < 200 || status >= 300) {
		spend_release(&r->hold);
		return;
	}
	if (!meter_result(&r->meter, (int64_t)r->body.len, &u))
		log_info("proxy: sandbox %s: %s reported no usage; charged "
		         "from the bytes (%lld in, %lld out)",
		         r->sandbox, r->path.up.name, (long long)u.input,
		         (long long)u.output);
	if (model[0] == '\0') {
		/* The answer named no model: the request's. */
		meter_request(r->body.data ? r->body.data : "", r->body.len,
		              &rq);
		model = rq.model[0] ? rq.model : "unknown";
	}
	d.input = u.input;
	d.output = u.output;
	d.cache_write = u.cache_write;
	d.cache_read = u.cache_read;
	if (spend_settle(r->px->core->store, &r->hold, r->task, r->path.up.name,
	                 model, &d, why, sizeof(why)) == 1) {
		log_warn("proxy: sandbox %s: %s", r->sandbox, why);
		task_budget_reached(r->px->core, r->sandbox, why);
		note_budget(r, why);
	}
}
