/*
 * A task's result (see result.h).
 *
 * The order of the checks in result_classify is the contract: a failure
 * the control plane recorded wins (it knows the sandbox stopped, the
 * result was overdue, the cancel never reached the supervisor); then a
 * task the supervisor could not finish; then how the agent ended, from
 * the `agent` record; then the agent's own error.  A cancel asked for
 * turns a success into a cancel, never a failure into one.
 */
#include "task/result.h"

#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "spend/spend.h"

void
result_set_time(struct jv *o, const char *key, int64_t ms)
{
	char t[CLOCK_RFC3339_LEN];

	if (ms <= 0)
		return;
	clock_rfc3339(ms / 1000, t);
	if (t[0]) /* a year past 9999 from a forged steps record */
		jv_set_str(o, key, t);
}

static void
outcome(struct result_outcome *o, enum task_state status, const char *reason)
{
	o->status = status;
	o->reason = reason;
}

void
result_classify(const struct task *row, const struct derive *d,
                const struct task_end *end, struct result_outcome *o)
{
	outcome(o, TASK_SUCCEEDED, NULL);
	o->msg[0] = '\0';
	if (end->reason[0]) {
		outcome(o,
		        strcmp(end->reason, "cancelled") == 0 ? TASK_CANCELLED
		                                              : TASK_FAILED,
		        end->reason);
		snprintf(o->msg, sizeof(o->msg), "%s", end->msg);
	} else if (d->interrupted || !d->agent_done) {
		outcome(o, TASK_FAILED, "sandbox_stopped");
		snprintf(o->msg, sizeof(o->msg),
		         "the task was interrupted: the sandbox stopped or "
		         "restarted while it ran");
	} else if (strcmp(d->how, "timeout") == 0) {
		outcome(o, TASK_FAILED, "agent_timeout");
		snprintf(o->msg, sizeof(o->msg),
		         "the agent did not finish within the task's timeout "
		         "(%llds)",
		         (long long)row->timeout_s);
	} else if (strcmp(d->how, "cancelled") == 0) {
		outcome(o, TASK_CANCELLED, "cancelled");
		snprintf(o->msg, sizeof(o->msg), "the task was cancelled");
	} else if (strcmp(d->how, "oom") == 0 ||
	           (end->sb_oom && d->agent_code == 137)) {
		outcome(o, TASK_FAILED, "oom_killed");
		snprintf(o->msg, sizeof(o->msg),
		         "the agent was killed because the sandbox ran out of "
		         "memory (exit code %d)",
		         d->agent_code);
	} else if (strcmp(d->how, "spawn_failed") == 0) {
		char why[256];
		derive_last_line(d, "agent.log", why, sizeof(why));
		outcome(o, TASK_FAILED, "agent_error");
		snprintf(o->msg, sizeof(o->msg),
		         "could not start the agent%s%s", why[0] ? ": " : "",
		         why);
	} else if (d->oc.error) {
		outcome(o, TASK_FAILED, "agent_error");
		/* The provider's own words beat the CLI's summary of them. */
		snprintf(o->msg, sizeof(o->msg), "%s",
		         end->provider[0] ? end->provider : d->oc.error);
	}
	if (end->cancelled && o->status == TASK_SUCCEEDED) {
		outcome(o, TASK_CANCELLED, "cancelled");
		snprintf(o->msg, sizeof(o->msg), "the task was cancelled");
	}
}

static struct jv *
tokens_json(const struct agent_tokens *t)
{
	struct jv *o = jv_obj();

	jv_set_int(o, "input", t->input);
	jv_set_int(o, "output", t->output);
	jv_set_int(o, "reasoning", t->reasoning);
	jv_set_int(o, "cache_read", t->cache_read);
	jv_set_int(o, "cache_write", t->cache_write);
	jv_set_int(o, "total",
	           t->input + t->output + t->reasoning + t->cache_read +
	               t->cache_write);
	jv_set_real(o, "cost", t->cost);
	return o;
}

struct jv *
result_json(const struct task *row, const struct derive *d,
            const struct result_outcome *o, int64_t finished_ms)
{
	struct jv *r = jv_obj();
	bool cancelled = o->status == TASK_CANCELLED;
	bool web = d->health_seen && strcmp(d->health, "none") != 0;
	bool ready = d->health_seen && strcmp(d->health, "ready") == 0;
	int64_t start = d->started_ms ? d->started_ms : row->created_at;

	jv_set_str(r, "id", row->id);
	jv_set_str(r, "sandbox_id", row->sandbox_id);
	jv_set_str(r, "agent", row->agent);
	if (row->model[0])
		jv_set_str(r, "model", row->model);
	jv_set_str(r, "prompt", row->prompt);
	jv_set_str(r, "status", task_state_name(o->status));
	jv_set_str(r, "failure_reason", o->reason);
	if (o->msg[0])
		jv_set_str(r, "error_message", o->msg);
	jv_set(r, "files_changed", d->files ? jv_copy(d->files) : jv_arr());
	if (d->nfiles > DERIVE_FILES_MAX)
		jv_set_int(r, "files_changed_total", d->nfiles);
	jv_set_str(r, "agent_message_final", d->oc.final_message);
	jv_set_bool(r, "build_ok",
	            d->built && strcmp(d->build_status, "passed") == 0);
	jv_set_str(r, "build_status", d->built ? d->build_status : "skipped");
	jv_set_str(r, "build_error_message", d->build_msg);
	if (d->health_seen) {
		jv_set_str(r, "preview_status_after", d->health);
		if (d->health_detail[0])
			jv_set_str(r, "preview_detail", d->health_detail);
		if (web)
			jv_set_bool(r, "preview_ok", ready);
	}
	jv_set_bool(r, "app_healthy",
	            !cancelled && d->health_seen &&
	                !(d->built && strcmp(d->build_status, "passed")) &&
	                (ready || !web));
	if (d->ckpt[0])
		jv_set_str(r, "checkpoint_id", d->ckpt);
	jv_set_int(r, "duration_ms",
	           finished_ms > start ? finished_ms - start : 0);
	jv_set(r, "tokens", tokens_json(&d->oc.tokens));
	result_set_time(r, "created_at", row->created_at);
	result_set_time(r, "started_at", d->started_ms);
	result_set_time(r, "finished_at", finished_ms);
	return r;
}

void
result_add_spend(struct store *s, const char *id, struct jv *r)
{
	struct store_spend sp;

	if (store_spend_get(s, "task", id, &sp) != 0)
		memset(&sp, 0, sizeof(sp));
	jv_set(r, "spend", spend_json(&sp));
}
