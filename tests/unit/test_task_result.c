/*
 * Unit tests of task/result: a table of how tasks end (what the files
 * said, what the control plane saw) and the status, failure_reason and
 * error_message each comes to; then the TaskResult object's fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jv.h"
#include "task/derive.h"
#include "task/result.h"
#include "unit.h"

struct row {
	const char *name;
	/* the files */
	bool agent_done, interrupted;
	const char *how;
	int code;
	const char *agent_error;
	/* the control plane */
	const char *reason, *msg, *provider;
	bool cancelled, sb_oom;
	/* expected */
	const char *status, *want_reason, *want_msg;
};

static const struct row rows[] = {
    {.name = "success",
     .agent_done = true,
     .how = "exited",
     .status = "succeeded",
     .want_msg = ""},
    {.name = "agent timeout",
     .agent_done = true,
     .how = "timeout",
     .code = 143,
     .status = "failed",
     .want_reason = "agent_timeout",
     .want_msg = "the agent did not finish within the task's timeout "
                 "(600s)"},
    {.name = "oom, as the supervisor saw it",
     .agent_done = true,
     .how = "oom",
     .code = 137,
     .status = "failed",
     .want_reason = "oom_killed",
     .want_msg = "the agent was killed because the sandbox ran out of "
                 "memory (exit code 137)"},
    {.name = "oom, as Docker saw it",
     .agent_done = true,
     .how = "exited",
     .code = 137,
     .sb_oom = true,
     .status = "failed",
     .want_reason = "oom_killed",
     .want_msg = "the agent was killed because the sandbox ran out of "
                 "memory (exit code 137)"},
    {.name = "a kill that was no oom",
     .agent_done = true,
     .how = "exited",
     .code = 137,
     .status = "succeeded",
     .want_msg = ""},
    {.name = "spawn failure",
     .agent_done = true,
     .how = "spawn_failed",
     .code = 127,
     .status = "failed",
     .want_reason = "agent_error",
     .want_msg = "could not start the agent"},
    {.name = "cancelled by the supervisor",
     .agent_done = true,
     .how = "cancelled",
     .code = 143,
     .status = "cancelled",
     .want_reason = "cancelled",
     .want_msg = "the task was cancelled"},
    {.name = "cancelled here (the supervisor never had it)",
     .reason = "cancelled",
     .msg = "the task was cancelled",
     .status = "cancelled",
     .want_reason = "cancelled",
     .want_msg = "the task was cancelled"},
    {.name = "a cancel asked for turns a success into a cancel",
     .agent_done = true,
     .how = "exited",
     .cancelled = true,
     .status = "cancelled",
     .want_reason = "cancelled",
     .want_msg = "the task was cancelled"},
    {.name = "a cancel asked for leaves a failure a failure",
     .agent_done = true,
     .how = "timeout",
     .cancelled = true,
     .status = "failed",
     .want_reason = "agent_timeout",
     .want_msg = "the agent did not finish within the task's timeout "
                 "(600s)"},
    {.name = "the agent's own error",
     .agent_done = true,
     .how = "exited",
     .code = 1,
     .agent_error = "Invalid API key",
     .status = "failed",
     .want_reason = "agent_error",
     .want_msg = "Invalid API key"},
    {.name = "the provider's error beats the agent's",
     .agent_done = true,
     .how = "exited",
     .code = 1,
     .agent_error = "Invalid API key",
     .provider = "anthropic: 401 invalid x-api-key",
     .status = "failed",
     .want_reason = "agent_error",
     .want_msg = "anthropic: 401 invalid x-api-key"},
    {.name = "a provider error alone is no failure",
     .agent_done = true,
     .how = "exited",
     .provider = "anthropic: 429 rate limited",
     .status = "succeeded",
     .want_msg = ""},
    {.name = "interrupted by a restart",
     .agent_done = true,
     .interrupted = true,
     .how = "exited",
     .status = "failed",
     .want_reason = "sandbox_stopped",
     .want_msg = "the task was interrupted: the sandbox stopped or "
                 "restarted while it ran"},
    {.name = "ended without the agent's record",
     .status = "failed",
     .want_reason = "sandbox_stopped",
     .want_msg = "the task was interrupted: the sandbox stopped or "
                 "restarted while it ran"},
    {.name = "our failure wins over the files",
     .agent_done = true,
     .how = "timeout",
     .reason = "oom_killed",
     .msg = "the sandbox was killed because it ran out of memory",
     .status = "failed",
     .want_reason = "oom_killed",
     .want_msg = "the sandbox was killed because it ran out of memory"},
    {.name = "credential proxy down",
     .reason = "proxy_unavailable",
     .msg = "the credential proxy is not listening",
     .cancelled = true,
     .status = "failed",
     .want_reason = "proxy_unavailable",
     .want_msg = "the credential proxy is not listening"},
    {.name = "the result was overdue",
     .reason = "internal",
     .msg = "the sandbox reported no result within the task's timeout "
            "plus 300s",
     .status = "failed",
     .want_reason = "internal",
     .want_msg = "the sandbox reported no result within the task's "
                 "timeout plus 300s"},
};

static void
task_row(struct task *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
	snprintf(t->sandbox_id, sizeof(t->sandbox_id),
	         "01ARZ3NDEKTSV4RRFFQ69G5FAW");
	snprintf(t->agent, sizeof(t->agent), "opencode");
	t->prompt = (char *)"add a todo list";
	t->timeout_s = 600;
	t->created_at = 1764600000000;
}

static void
test_classify_table(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		const struct row *r = &rows[i];
		struct result_outcome o;
		struct task_end end = {0};
		struct derive d;
		struct task t;
		int before = unit_failed;

		task_row(&t);
		derive_init(&d);
		d.agent_done = r->agent_done;
		d.interrupted = r->interrupted;
		d.agent_code = r->code;
		snprintf(d.how, sizeof(d.how), "%s", r->how ? r->how : "");
		d.oc.error = r->agent_error ? strdup(r->agent_error) : NULL;
		snprintf(end.reason, sizeof(end.reason), "%s",
		         r->reason ? r->reason : "");
		snprintf(end.msg, sizeof(end.msg), "%s", r->msg ? r->msg : "");
		snprintf(end.provider, sizeof(end.provider), "%s",
		         r->provider ? r->provider : "");
		end.cancelled = r->cancelled;
		end.sb_oom = r->sb_oom;
		result_classify(&t, &d, &end, &o);
		CHECK_STR(task_state_name(o.status), r->status);
		if (r->want_reason)
			CHECK_STR(o.reason, r->want_reason);
		else
			CHECK(o.reason == NULL);
		CHECK_STR(o.msg, r->want_msg);
		if (unit_failed != before)
			fprintf(stderr, "  in row \"%s\"\n", r->name);
		derive_release(&d);
	}
}

static const char *
str(const struct jv *o, const char *key)
{
	return jv_str(jv_get(o, key));
}

static void
test_result_json(void)
{
	struct result_outcome ok = {TASK_SUCCEEDED, NULL, ""};
	struct result_outcome cancel = {TASK_CANCELLED, "cancelled",
	                                "the task was cancelled"};
	struct derive d;
	struct task t;
	struct jv *r;

	task_row(&t);
	derive_init(&d);
	d.agent_done = true;
	d.started_ms = 1764600001000;
	snprintf(d.ckpt, sizeof(d.ckpt), "%s",
	         "0123456789abcdef0123456789abcdef01234567");
	d.files = jv_arr();
	jv_push(d.files, jv_new_str("a.txt"));
	d.nfiles = DERIVE_FILES_MAX + 5;
	d.built = true;
	snprintf(d.build_status, sizeof(d.build_status), "passed");
	d.health_seen = true;
	snprintf(d.health, sizeof(d.health), "ready");
	d.oc.tokens.input = 10;
	d.oc.tokens.output = 5;
	d.oc.final_message = strdup("done");

	r = result_json(&t, &d, &ok, 1764600043500);
	CHECK_STR(str(r, "status"), "succeeded");
	CHECK(jv_get(r, "failure_reason") == NULL ||
	      jv_type(jv_get(r, "failure_reason")) == JV_NULL);
	CHECK(jv_get(r, "error_message") == NULL);
	CHECK_STR(str(r, "checkpoint_id"),
	          "0123456789abcdef0123456789abcdef01234567");
	CHECK(jv_len(jv_get(r, "files_changed")) == 1);
	CHECK(jv_int(jv_get(r, "files_changed_total")) == DERIVE_FILES_MAX + 5);
	CHECK(jv_is_true(jv_get(r, "build_ok")));
	CHECK(jv_is_true(jv_get(r, "preview_ok")));
	CHECK(jv_is_true(jv_get(r, "app_healthy")));
	CHECK(jv_int(jv_get(r, "duration_ms")) == 42500);
	CHECK(jv_int(jv_get(jv_get(r, "tokens"), "total")) == 15);
	CHECK_STR(str(r, "agent_message_final"), "done");
	CHECK_STR(str(r, "started_at"), "2025-12-01T14:40:01Z");
	CHECK_STR(str(r, "finished_at"), "2025-12-01T14:40:43Z");
	jv_free(r);

	/* A cancelled task is never healthy; a failed build neither. */
	r = result_json(&t, &d, &cancel, 1764600043500);
	CHECK_STR(str(r, "error_message"), "the task was cancelled");
	CHECK(!jv_is_true(jv_get(r, "app_healthy")));
	jv_free(r);
	snprintf(d.build_status, sizeof(d.build_status), "failed");
	d.build_msg = strdup("error: something broke");
	r = result_json(&t, &d, &ok, 1764600043500);
	CHECK(!jv_is_true(jv_get(r, "build_ok")));
	CHECK_STR(str(r, "build_error_message"), "error: something broke");
	CHECK(!jv_is_true(jv_get(r, "app_healthy")));
	jv_free(r);

	/* No web process: healthy without a preview verdict. */
	d.built = false;
	snprintf(d.health, sizeof(d.health), "none");
	d.started_ms = 0;
	r = result_json(&t, &d, &ok, 1764600000500);
	CHECK_STR(str(r, "build_status"), "skipped");
	CHECK(jv_get(r, "preview_ok") == NULL);
	CHECK(jv_is_true(jv_get(r, "app_healthy")));
	CHECK(jv_int(jv_get(r, "duration_ms")) == 500); /* from created_at */
	CHECK(jv_get(r, "started_at") == NULL);
	jv_free(r);

	/* Times the sandbox forged past year 9999 are left out. */
	d.started_ms = INT64_MAX / 2;
	r = result_json(&t, &d, &ok, INT64_MAX);
	CHECK(jv_get(r, "started_at") == NULL);
	CHECK(jv_get(r, "finished_at") == NULL);
	CHECK_STR(str(r, "created_at"), "2025-12-01T14:40:00Z");
	jv_free(r);
	derive_release(&d);
}

static const struct unit_test tests[] = {
    {"how a task ends: the table", test_classify_table},
    {"the TaskResult object", test_result_json},
};

int
main(void)
{
	return UNIT_RUN("task result", tests);
}
