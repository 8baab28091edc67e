/*
 * Starters (see internal.h): one detached thread per task being handed
 * to its sandbox's supervisor, which may take a while (a sandbox just
 * woken boots first).  Each is counted in ts->starters so that
 * task_shutdown waits for the last one; none outlives the tasks' state.
 *
 * The starter writes the task's files for the supervisor: `argv`, the
 * agent's command line with our system prompt (task/agentcmd.h), and
 * `env`, the credential proxy's address and the sandbox's proxy token
 * in place of a key (wiped once written).  The supervisor's answer to
 * `task start` decides: accepted (or "task already ran", a retry after a
 * restart) marks the task started; anything else fails it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "cred/credentials.h"
#include "sandbox/manifest.h"
#include "sandbox/runtime.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "lib/buf.h"
#include "lib/jv.h"
#include "lib/limits.h"
#include "task/attach.h"
#include "task/agentcmd.h"
#include "task/internal.h"
#include "task/task.h"
#include "vault/vault.h"

/* The longest a task waits for its sandbox's install step (the
 * default install timeout): a longer one fails the task at start. */
#define START_INSTALL_WAIT_MS (900 * 1000)

struct starter {
	struct core *c;
	struct task row;
	bool cont;
};

/* Still to be started (not cancelled or failed meanwhile). */
static bool
start_wanted(void *arg)
{
	struct starter *st = arg;

	return follow_wanted(st->c, st->row.id);
}

/*
 * The agent's environment: the credential proxy's address and this
 * sandbox's proxy token in place of a key.  *model_arg gets the model as
 * the CLI must name it.
 */
static int
task_env(struct core *c, const struct starter *st, struct buf *env,
         char *model_arg, size_t len)
{
	char url[96], token[128];
	int rc;

	snprintf(model_arg, len, "%s", st->row.model);
	core_proxy_url(c, url, sizeof(url));
	if (url[0] == '\0')
		return -1; /* task_submit checked: it stopped since */
	if (cred_proxy_token(c->store, st->row.sandbox_id, token,
	                     sizeof(token)) < 0 &&
	    (cred_new_proxy_token(c->store, st->row.sandbox_id) < 0 ||
	     cred_proxy_token(c->store, st->row.sandbox_id, token,
	                      sizeof(token)) < 0))
		return -1;
	rc = agentcmd_env((enum agent_kind)agent_kind_parse(st->row.agent), url,
	                  token, st->row.model, env, model_arg, len);
	vault_wipe(token, sizeof(token));
	return rc;
}

/* One of the task's files: local through wsfd, remote through wsnode. */
static int
put_file(const struct wsnode_ref *at, int wsfd, const char *rel,
         const struct buf *b, bool secret, struct err *e)
{
	if (wsnode_remote(at->sb))
		return wsnode_write(at->wn, at->sb, rel, b->data ? b->data : "",
		                    b->len, secret ? 0600 : 0644, e);
	return secret ? wsfs_write_secret(wsfd, rel, b->data, b->len,
	                                  WORKSPACE_UID, WORKSPACE_GID, e)
	              : wsfs_write(wsfd, rel, b->data, b->len, WORKSPACE_UID,
	                           WORKSPACE_GID, e);
}

/* Writes the task's argv and env files for the supervisor. */
static int
write_argv(struct core *c, const struct starter *st,
           const struct wsnode_ref *at, char *msg, size_t len)
{
	char rel[96], model[TASK_MAX_MODEL_BYTES + 32];
	struct manifest m;
	struct buf sys, argv, env;
	const char *paths[TASK_IMAGES_MAX + 1] = {0};
	struct jv *files = NULL;
	struct err e = {0};
	int wsfd = -1, rc = -1;

	if (!wsnode_remote(at->sb) &&
	    (wsfd = wsfs_open_dir(at->ws, ".", &e)) < 0) {
		snprintf(msg, len, "%s", e.msg);
		return -1;
	}
	if (runtime_manifest(c, st->row.sandbox_id, &m) < 0)
		manifest_default(&m, 3000, false);
	buf_init(&sys, 64u << 10);
	buf_init(&argv, 1u << 20);
	buf_init(&env, 60u << 10);
	if (task_env(c, st, &env, model, sizeof(model)) < 0) {
		snprintf(msg, len, "cannot prepare the agent's credentials");
		goto out;
	}
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/env", st->row.id);
	if (env.len && put_file(at, wsfd, rel, &env, true, &e) < 0) {
		snprintf(msg, len, "cannot write the task's files: %s", e.msg);
		goto out;
	}
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/argv", st->row.id);
	files = task_attach_list(at, st->row.id);
	for (size_t i = 0; i < jv_len(files) && i < TASK_IMAGES_MAX; i++)
		paths[i] = jv_str(jv_get(jv_at(files, i), "path"));
	if (agentcmd_system_prompt(&m, &sys) < 0 ||
	    agentcmd_argv((enum agent_kind)agent_kind_parse(st->row.agent),
	                  model, st->cont, sys.data ? sys.data : "",
	                  st->row.prompt, paths, &argv) < 0)
		snprintf(msg, len, "the agent's command line is too long");
	else if (put_file(at, wsfd, rel, &argv, false, &e) < 0)
		snprintf(msg, len, "cannot write the task's files: %s", e.msg);
	else
		rc = 0;
out:
	jv_free(files);
	if (env.data)
		vault_wipe(env.data, env.len);
	buf_release(&sys);
	buf_release(&argv);
	buf_release(&env);
	if (wsfd >= 0)
		close(wsfd);
	return rc;
}

static void
start_once(struct starter *st)
{
	struct core *c = st->c;
	char ws[WORKSPACE_PATH_MAX], line[128], msg[384];
	struct jv *ans = NULL;
	struct err e = {0};
	struct sandbox sb = {0};
	struct wsnode_ref at = {.ws = ws, .wn = c->wn, .sb = &sb};
	const char *err;

	workspace_path(c->cfg->data_dir, st->row.sandbox_id, ws, sizeof(ws));
	/* no row (deleted meanwhile): local, failing below as before */
	if (store_sandbox_get(c->store, st->row.sandbox_id, &sb) != 0)
		sb.node[0] = '\0';
	if (!runtime_wait(c, st->row.sandbox_id, TASK_START_WAIT_MS)) {
		if (!c->stopping)
			follow_fail(c, st->row.id, "sandbox_unavailable",
			            "the sandbox's supervisor did not answer "
			            "within 60 s");
		return;
	}
	if (!follow_wanted(c, st->row.id))
		return; /* cancelled or failed meanwhile */
	/* run.conf must carry the app's build and restart settings. */
	runtime_configure(c, st->row.sandbox_id, true);
	/* An install (a new lockfile, a first boot) goes first. */
	runtime_wait_install(c, st->row.sandbox_id, START_INSTALL_WAIT_MS,
	                     start_wanted, st);
	if (write_argv(c, st, &at, msg, sizeof(msg)) < 0) {
		follow_fail(c, st->row.id, "internal", msg);
		return;
	}
	snprintf(line, sizeof(line), "task start %s %lld\n", st->row.id,
	         (long long)st->row.timeout_s);
	if (runtime_request(c, ws, line, RUNTIME_TIMEOUT_MS, &ans, &e) < 0) {
		snprintf(msg, sizeof(msg), "the sandbox's supervisor: %s",
		         e.msg);
		follow_fail(c, st->row.id, "sandbox_unavailable", msg);
		return;
	}
	err = jv_str(jv_get(ans, "error"));
	if (jv_is_true(jv_get(ans, "ok")) ||
	    (err && strcmp(err, "task already ran") == 0)) {
		follow_mark_started(c, st->row.id);
	} else {
		snprintf(msg, sizeof(msg), "the sandbox refused the task: %s",
		         err ? err : "no reason given");
		follow_fail(c, st->row.id,
		            err && strcmp(err, "task_in_progress") == 0
		                ? "task_in_progress"
		                : "sandbox_unavailable",
		            msg);
	}
	jv_free(ans);
}

static void *
starter_main(void *arg)
{
	struct starter *st = arg;
	struct tasks *ts = st->c->tasks;

	start_once(st);
	store_task_release(&st->row);
	free(st);
	pthread_mutex_lock(&ts->mu);
	ts->starters--;
	pthread_cond_broadcast(&ts->starters_cv);
	pthread_mutex_unlock(&ts->mu);
	return NULL;
}

int
starter_spawn(struct core *c, const struct task *row, bool cont)
{
	struct starter *st = calloc(1, sizeof(*st));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (st == NULL)
		return -1;
	st->c = c;
	st->row = *row;
	st->row.prompt = strdup(row->prompt ? row->prompt : "");
	st->row.result = NULL;
	st->cont = cont;
	if (st->row.prompt == NULL) {
		free(st);
		return -1;
	}
	pthread_mutex_lock(&c->tasks->mu);
	c->tasks->starters++;
	pthread_mutex_unlock(&c->tasks->mu);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, starter_main, st);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_mutex_lock(&c->tasks->mu);
		c->tasks->starters--;
		pthread_mutex_unlock(&c->tasks->mu);
		store_task_release(&st->row);
		free(st);
		return -1;
	}
	return 0;
}
