/*
 * Tasks (see task.h): the API and the tasks' start and stop.
 *
 * The pipeline lives in src/task/ in the order a task goes through it:
 * task.c checks and records a submitted task, start.c hands it to the
 * sandbox's supervisor, follow.c follows it (derive.c turning the
 * supervisor's files into events, evlog.c storing them and feeding the
 * subscribers) and finishes it (result.c deciding what it came to).
 */
#include "task/task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agents.h"
#include "sandbox/activity.h"
#include "sandbox/membudget.h"
#include "sandbox/runtime.h"
#include "sbnet/sbnet.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "task/attach.h"
#include "task/evlog.h"
#include "task/internal.h"
#include "task/result.h"
#include "task/tlnote.h"

/* ---- API -------------------------------------------------------------- */

/* Stops at the first earlier task of the same agent. */
static int
same_agent(const struct task *t, void *arg)
{
	return strcmp(t->agent, arg) == 0;
}

static bool
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* The sandbox's tenant's checks and defaults; tenant is its owner. */
static int
validate(struct core *c, const char *tenant, const struct task_request *r,
         struct task *t, struct err *e)
{
	const struct config *cfg = c->cfg;
	const char *agent = r->agent ? r->agent : cfg->default_agent;
	char saved[TASK_MAX_MODEL_BYTES + 1];
	char owner[STORE_SECRET_OWNER_MAX + 1];
	const char *model = r->model;

	if (r->prompt == NULL || r->prompt[strspn(r->prompt, " \t\r\n")] == 0)
		return ERR_BAD(e, "prompt is required");
	if (strlen(r->prompt) > TASK_MAX_PROMPT_BYTES)
		return err_set(e, 413, "too_large",
		               "prompt is longer than %u bytes",
		               TASK_MAX_PROMPT_BYTES);
	if (agent_kind_parse(agent) < 0)
		return ERR_BAD(e,
		               "unknown agent \"%.64s\" (supported: opencode, "
		               "claude-code)",
		               agent);
	if (r->timeout_s < 0)
		return ERR_BAD(e, "timeout_s must be >= 0");
	if (r->timeout_s > 86400)
		return ERR_BAD(e, "timeout_s must be <= 86400");
	if (model && strlen(model) > TASK_MAX_MODEL_BYTES)
		return ERR_BAD(e, "model is longer than %d bytes",
		               TASK_MAX_MODEL_BYTES);
	if (model && (!printable(model) || model[0] == '-'))
		return ERR_BAD(e, "model must be printable text not starting "
		                  "with '-'");
	/*
	 * The task's model, else the agent's default from the tenant's
	 * settings, else the instance's, else the configured one; OpenCode
	 * with no key (neither the tenant's nor the instance's) gets its
	 * free model.
	 */
	if ((model == NULL || *model == '\0') &&
	    (store_agent_default_model(c->store, tenant, agent, saved,
	                               sizeof(saved)) == 0 ||
	     store_agent_default_model(c->store, "", agent, saved,
	                               sizeof(saved)) == 0))
		model = saved;
	if (model == NULL || *model == '\0') {
		if (agent_find(agent)->free_model == NULL)
			model = cfg->claude_model;
		else if (cfg->opencode_model[0] &&
		         store_agent_source(c->store, tenant, agent, owner) ==
		             0)
			model = cfg->opencode_model;
		else
			model = cfg->opencode_free_model;
	}
	memset(t, 0, sizeof(*t));
	snprintf(t->agent, sizeof(t->agent), "%s", agent);
	snprintf(t->model, sizeof(t->model), "%s", model ? model : "");
	t->timeout_s = r->timeout_s ? r->timeout_s : cfg->task_timeout_s;
	return 0;
}

/* The request's images, stored for the task before it is recorded. */
static int
attach(struct core *c, const struct task *t, const struct task_request *r,
       struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];
	struct sandbox sb = {0};
	struct wsnode_ref at = {.ws = ws, .wn = c->wn, .sb = &sb};

	if (r->nimages == 0)
		return 0;
	if (store_sandbox_get(c->store, t->sandbox_id, &sb) != 0)
		return ERR_NOTFOUND(e, "no such sandbox");
	workspace_path(c->cfg->data_dir, t->sandbox_id, ws, sizeof(ws));
	return task_attach_write(&at, t->id, r->images, r->nimages, e);
}

static void
detach(struct core *c, const struct task *t)
{
	char ws[WORKSPACE_PATH_MAX];
	struct sandbox sb = {0};
	struct wsnode_ref at = {.ws = ws, .wn = c->wn, .sb = &sb};

	if (store_sandbox_get(c->store, t->sandbox_id, &sb) != 0)
		return;
	workspace_path(c->cfg->data_dir, t->sandbox_id, ws, sizeof(ws));
	task_attach_remove(&at, t->id);
}

int
task_submit(struct core *c, const char *sandbox_id,
            const struct task_request *r, struct task *out, struct err *e)
{
	char why[SBNET_ERR_LEN + 64];
	struct sandbox sb;
	bool cont, prior;
	int rc;

	rc = store_sandbox_get(c->store, sandbox_id, &sb);
	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such sandbox");
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	if (validate(c, sb.owner, r, out, e) < 0 ||
	    core_workspace_room(c, &sb, e) < 0)
		return -1;
	/* A freeze not yet begun sees this and stays off; one in flight is
	 * waited for and undone. */
	activity_touch(c->act, sandbox_id);
	if (sb.status == SANDBOX_RUNNING) {
		/* Frozen, or freezing now: a thaw, in milliseconds. */
		if (core_sandbox_thaw_wait(c, sandbox_id, e) < 0)
			return -1;
	} else if (sb.status == SANDBOX_STOPPED) {
		int avail = membudget_available_pct(c, NULL);
		if (avail >= 0 && avail < c->cfg->mem_refuse_pct)
			return err_set(e, 503, "no_headroom",
			               "only %d%% of the memory is available; "
			               "the sandbox stays stopped",
			               avail);
		if (core_sandbox_start(c, sandbox_id, &sb, e) < 0)
			return -1;
		activity_started(c->act, sandbox_id);
	} else if (sb.status != SANDBOX_RUNNING) {
		return err_set(e, 409, "sandbox_not_running",
		               "sandbox is %s; cannot run a task",
		               sandbox_state_name(sb.status));
	}
	/* Continuing means the same agent's last session in this sandbox. */
	prior = store_task_list(c->store, sandbox_id, TASK_HISTORY_MAX,
	                        same_agent, out->agent) > 0;
	cont = r->cont < 0 ? prior : r->cont > 0;
	ulid_new(out->id);
	snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id);
	out->status = TASK_RUNNING;
	out->created_at = clock_now_ms();
	out->prompt = strdup(r->prompt);
	if (out->prompt == NULL)
		return ERR_INTERNAL(e, "out of memory");
	if (attach(c, out, r, e) < 0) {
		store_task_release(out);
		return -1;
	}
	rc = store_task_insert(c->store, out);
	if (rc != 0 && r->nimages > 0)
		detach(c, out);
	if (rc == STORE_CONFLICT) {
		store_task_release(out);
		return err_set(e, 409, "task_in_progress",
		               "a task is already running in this sandbox");
	}
	if (rc < 0 || follow_add(c, out) < 0) {
		store_task_finish(c->store, out->id, TASK_FAILED, "internal",
		                  "", NULL, clock_now_ms());
		store_task_release(out);
		return ERR_INTERNAL(e, "cannot record the task");
	}
	/* Without the proxy the agent has no model: fail now, saying why. */
	if (sbnet_proxy_down(c->net, why, sizeof(why)) < 0) {
		log_warn("task %s: %s", out->id, why);
		follow_fail(c, out->id, "proxy_unavailable", why);
	} else if (starter_spawn(c, out, cont) < 0)
		follow_fail(c, out->id, "internal",
		            "cannot start a thread for the task");
	log_info("task %s: %s on sandbox %s (timeout %llds)", out->id,
	         out->agent, sandbox_id, (long long)out->timeout_s);
	tlnote_started(c, out);
	return 0;
}

int
task_cancel(struct core *c, const char *sandbox_id, const char *id,
            enum task_state *status, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX], line[96];
	struct jv *ans = NULL;
	struct task t;
	struct err re;
	int rc = store_task_get(c->store, sandbox_id, id, &t);

	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such task");
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	*status = t.status;
	store_task_release(&t);
	if (*status != TASK_RUNNING)
		return 0; /* already over: nothing to cancel */
	*status = TASK_CANCELLING;
	tlnote_cancel_by(id);
	follow_cancel(c, id);
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	snprintf(line, sizeof(line), "task cancel %s\n", id);
	rc = runtime_request(c, ws, line, RUNTIME_TIMEOUT_MS, &ans, &re);
	/*
	 * The supervisor stops it and its files say so; if it never got the
	 * task (or does not answer), the task ends here.  One it already
	 * finished ("state":"ended") ends as its files say.
	 */
	if (rc < 0 || !jv_is_true(jv_get(ans, "ok")))
		follow_fail(c, id, "cancelled", "the task was cancelled");
	jv_free(ans);
	return 0;
}

/*
 * Waits for the supervisor's record of the revert of task id: 0 when it
 * says ok (the time is stored: the task shows reverted_at), else -1 with
 * e (git's message, or revert_timeout).
 */
/* The revert's record as the supervisor wrote it so far; b set on 0. */
static int
revert_read(const struct wsnode_ref *at, const char *rel, struct buf *b,
            struct err *e)
{
	bool eof;
	int rc, wsfd;

	if (wsnode_remote(at->sb)) {
		buf_init(b, 4096);
		rc = wsnode_read(at->wn, at->sb, rel, 0, 4096, b, &eof, e);
		if (rc < 0)
			buf_release(b);
		return rc;
	}
	wsfd = wsfs_open_dir(at->ws, ".", NULL);
	rc = wsfd >= 0 ? wsfs_read(wsfd, rel, 4096, b, e) : -1;
	if (wsfd >= 0)
		close(wsfd);
	return rc;
}

static int
revert_wait(struct core *c, const struct wsnode_ref *at, const char *sandbox_id,
            const char *id, struct err *e)
{
	struct err re = {0};
	char rel[96];
	int64_t deadline;
	int rc;

	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/revert", id);
	deadline = clock_mono_ms() + TASK_REVERT_WAIT_MS;
	while (clock_mono_ms() < deadline && !c->stopping) {
		struct buf b;
		rc = revert_read(at, rel, &b, &re);
		if (rc == 0 && b.len && b.data[b.len - 1] == '\n') {
			bool ok = strncmp(b.data, "ok", 2) == 0;
			char *tab = strchr(b.data, '\t');
			if (!ok)
				err_set(e, 409, "revert_failed", "%.*s",
				        (int)(b.len - 1 -
				              (tab ? (size_t)(tab + 1 - b.data)
				                   : 0)),
				        tab ? tab + 1 : b.data);
			buf_release(&b);
			if (ok) {
				activity_touch(c->act, sandbox_id);
				if (store_task_set_reverted(
				        c->store, id, clock_now_ms()) != 0)
					log_warn("task %s: reverted, but the "
					         "time was not stored",
					         id);
				tlnote(c, sandbox_id, id, "task.reverted", NULL,
				       "The task's changes were reverted.");
			}
			return ok ? 0 : -1;
		}
		if (rc == 0)
			buf_release(&b);
		usleep(wsnode_remote(at->sb) ? 250 * 1000 : 50 * 1000);
	}
	return err_set(e, 504, "revert_timeout",
	               "the revert did not finish within %d s",
	               TASK_REVERT_WAIT_MS / 1000);
}

int
task_revert(struct core *c, const char *sandbox_id, const char *id,
            struct err *e)
{
	char ws[WORKSPACE_PATH_MAX], line[96];
	struct jv *ans = NULL;
	struct sandbox sb;
	struct task t;
	struct err re = {0};
	int rc = store_task_get(c->store, sandbox_id, id, &t);

	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such task");
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	rc = t.status == TASK_RUNNING ? 1 : t.checkpoint_id[0] ? 0 : 2;
	store_task_release(&t);
	if (rc == 1)
		return err_set(e, 409, "task_in_progress",
		               "the task is still running; cancel it first");
	if (rc == 2)
		return err_set(e, 409, "no_checkpoint",
		               "the task has no checkpoint to revert to");
	if (task_running_on(c, sandbox_id))
		return err_set(e, 409, "task_in_progress",
		               "another task is running in this sandbox");
	if (store_sandbox_get(c->store, sandbox_id, &sb) != 0)
		return ERR_NOTFOUND(e, "no such sandbox");
	activity_touch(c->act, sandbox_id);
	if (sb.status == SANDBOX_RUNNING
	        ? core_sandbox_thaw_wait(c, sandbox_id, e) < 0
	        : sb.status == SANDBOX_STOPPED &&
	              core_sandbox_start(c, sandbox_id, &sb, e) < 0)
		return -1;
	if (!runtime_wait(c, sandbox_id, TASK_START_WAIT_MS))
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor does not answer");
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	snprintf(line, sizeof(line), "task revert %s\n", id);
	if (runtime_request(c, ws, line, RUNTIME_TIMEOUT_MS, &ans, &re) < 0)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor: %s", re.msg);
	if (!jv_is_true(jv_get(ans, "ok"))) {
		err_set(e, 409, "revert_failed", "%s",
		        jv_str(jv_get(ans, "error")) ?: "revert refused");
		jv_free(ans);
		return -1;
	}
	jv_free(ans);
	return revert_wait(c, &(struct wsnode_ref){ws, c->wn, &sb}, sandbox_id,
	                   id, e);
}

void
task_budget_reached(struct core *c, const char *sandbox_id, const char *msg)
{
	if (c->tasks == NULL)
		return;
	follow_provider_error(c, sandbox_id, msg);
	follow_stop(c, sandbox_id, "budget_reached", msg);
}

void
task_upstream_failed(struct core *c, const char *sandbox_id,
                     const struct task_upstream *u)
{
	if (c->tasks == NULL)
		return;
	follow_provider_error(c, sandbox_id, u->msg);
	follow_upstream(c, sandbox_id, u);
}

void
task_upstream_answered(struct core *c, const char *sandbox_id)
{
	if (c->tasks == NULL)
		return;
	follow_upstream_answered(c, sandbox_id);
}

bool
task_active_id(struct core *c, const char *sandbox_id, char id[ULID_LEN + 1])
{
	if (c->tasks == NULL)
		return false;
	return follow_active_id(c, sandbox_id, id);
}

bool
task_running_on(struct core *c, const char *sandbox_id)
{
	char id[ULID_LEN + 1];

	return task_active_id(c, sandbox_id, id);
}

struct forget {
	struct core *c;
};

static int
forget_log(const struct task *t, void *arg)
{
	struct forget *f = arg;
	char path[WORKSPACE_PATH_MAX];

	evlog_path(f->c->cfg->data_dir, t->id, path, sizeof(path));
	unlink(path);
	return 0;
}

void
task_forget_sandbox(struct core *c, const char *sandbox_id)
{
	struct forget f = {c};

	if (c->tasks == NULL)
		return;
	follow_forget_sandbox(c, sandbox_id);
	store_task_list(c->store, sandbox_id, 1 << 30, forget_log, &f);
	store_task_delete_sandbox(c->store, sandbox_id);
}

static int
end_running(const struct task *t, void *arg)
{
	struct forget *f = arg;

	if (t->status == TASK_RUNNING)
		store_task_finish(f->c->store, t->id, TASK_CANCELLED,
		                  "app_deleted", t->checkpoint_id, NULL,
		                  clock_now_ms());
	return 0;
}

void
task_trash_sandbox(struct core *c, const char *sandbox_id)
{
	struct forget f = {c};

	if (c->tasks)
		follow_forget_sandbox(c, sandbox_id);
	store_task_list(c->store, sandbox_id, 64, end_running, &f);
}

struct jv *
task_json(const struct task *t)
{
	struct jv *r = NULL, *o;

	if (t->result)
		r = jv_parse(t->result, strlen(t->result), 64, NULL, 0);
	if (r && jv_type(r) == JV_OBJECT) {
		o = r;
		goto revert;
	}
	jv_free(r);
	o = jv_obj();
	jv_set_str(o, "id", t->id);
	jv_set_str(o, "sandbox_id", t->sandbox_id);
	jv_set_str(o, "agent", t->agent);
	if (t->model[0])
		jv_set_str(o, "model", t->model);
	jv_set_str(o, "prompt", t->prompt);
	jv_set_str(o, "status", task_state_name(t->status));
	if (t->failure_reason[0])
		jv_set_str(o, "failure_reason", t->failure_reason);
	result_set_time(o, "created_at", t->created_at);
revert:
	/* Reverted once: the checkpoint is spent. */
	jv_set_bool(o, "can_revert",
	            t->checkpoint_id[0] && t->status != TASK_RUNNING &&
	                t->reverted_at == 0);
	if (t->reverted_at)
		result_set_time(o, "reverted_at", t->reverted_at);
	return o;
}

/* ---- start and stop ----------------------------------------------------- */

/*
 * A task a restart found running: followed again, and handed to the
 * supervisor again when it never got there.
 */
static int
recover_one(const struct task *t, void *arg)
{
	struct core *c = arg;
	int rc = follow_again(c, t);

	if (rc < 0)
		return 0;
	if (rc == 1 && starter_spawn(c, t, false) < 0)
		follow_fail(c, t->id, "internal",
		            "cannot start a thread for the task");
	log_info("task %s: following it again after a restart", t->id);
	return 0;
}

int
task_init(struct core *c)
{
	struct tasks *ts = calloc(1, sizeof(*ts));
	char dir[WORKSPACE_PATH_MAX];

	if (ts == NULL)
		return -1;
	pthread_mutex_init(&ts->mu, NULL);
	pthread_cond_init(&ts->starters_cv, NULL);
	ts->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ts->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ts->committed = follow_committed;
	c->tasks = ts;
	snprintf(dir, sizeof(dir), "%s/tasks", c->cfg->data_dir);
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || ts->wake_fd < 0 ||
	    ts->inotify_fd < 0) {
		log_error("tasks: %s: %s", dir, strerror(errno));
		return -1;
	}
	store_task_list_running(c->store, recover_one, c);
	if (pthread_create(&ts->thread, NULL, follow_main, c) != 0)
		return -1;
	ts->started = true;
	return 0;
}

void
task_shutdown(struct core *c)
{
	struct tasks *ts = c->tasks;

	if (ts == NULL)
		return;
	c->stopping = true;
	follow_wake(ts);
	if (ts->started)
		pthread_join(ts->thread, NULL);
	ts->started = false;
	pthread_mutex_lock(&ts->mu);
	while (ts->starters > 0)
		pthread_cond_wait(&ts->starters_cv, &ts->mu);
	pthread_mutex_unlock(&ts->mu);
	evlog_subs_end_all(ts);
}

void
task_free(struct core *c)
{
	struct tasks *ts = c->tasks;

	if (ts == NULL)
		return;
	task_shutdown(c);
	follow_free_all(ts);
	task_mirror_wait();
	close(ts->wake_fd);
	close(ts->inotify_fd);
	pthread_cond_destroy(&ts->starters_cv);
	pthread_mutex_destroy(&ts->mu);
	free(ts);
	c->tasks = NULL;
}
