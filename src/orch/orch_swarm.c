/*
 * orch's swarm driver: each sandbox a one-replica Swarm service named as
 * its container would be, placed by Swarm's scheduler and then pinned to
 * the node holding its workspace (node.labels.sandboxd.node==<name>).
 * This file holds the service side, on the manager's engine; what only a
 * node can do is in orch_swarmnode.c (the manager's own node by the
 * local engine, every other node by its agent over nodelink).
 *
 * create: a bind mount's source must exist on the node before a task
 * starts, and Swarm picks the node only when a task exists; so a
 * placement probe (the real reservation and constraints, `sleep
 * infinity`, no bind, 16 MiB) is made first, the chosen node is read
 * from its task, prepare() puts the workspace there, and ONE update
 * turns the probe into the real spec pinned to that node, at 0 replicas.
 *
 * start: a RestartPolicy "none" service scaled 0 -> 1 makes no task
 * (Swarm keeps the removed slot), so a start sets Replicas 1 AND bumps
 * ForceUpdate, then polls /tasks (Swarm 20.10 emits no task events)
 * until the new task runs, then does the post-start a service cannot
 * express: MemorySwap = Memory, and the checks that PID 1 has no
 * capabilities and no_new_privs set (no service option before Engine
 * 25; the supervisor sets it itself).
 *
 * Rejected: tier-2 sleep as "keep Replicas 1, stop the container": with
 * condition none the task would never come back without a forced
 * update anyway, and with any other condition Swarm would restart it
 * behind our back.
 */
#include "orch/orch.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "orch/swarmdrv.h"
#include "ws/workspace.h"

static void
nap(int ms)
{
	poll(NULL, 0, ms);
}

/*
 * The fences (a node draining, a node's disk full) decide where a new
 * sandbox goes, never whether a placed one wakes: a pinned service
 * carries only the ready label and its pin, or a sandbox on a full or
 * draining node could never start again.
 */
static void
constraints(struct swarm_service *sv, const char *pin, char *buf, size_t len)
{
	size_t i = 0;

	sv->constraints[i++] = "node.labels.sandboxd.agent==1";
	if (pin == NULL) {
		sv->constraints[i++] = "node.labels.sandboxd.drain!=1";
		sv->constraints[i++] = "node.labels.sandboxd.disk!=full";
	}
	if (pin) {
		snprintf(buf, len, SWD_NODE_PREFIX "%s", pin);
		sv->constraints[i++] = buf;
	}
	sv->constraints[i] = NULL;
}

/* The probe: the real reservation and constraints, nothing else. */
static int
probe_create(struct orch *o, const struct orch_spec *spec, const char *pin,
             char msg[DOCKER_MSG_LEN])
{
	struct swarm_service sv = {.replicas = 1, .stop_grace_s = 1};
	char id[72], cbuf[128];
	int rc;

	sv.c.name = spec->c.name;
	sv.c.image =
	    spec->image_id && *spec->image_id ? spec->image_id : spec->c.image;
	sv.c.user = spec->c.user;
	sv.c.network = spec->c.network;
	sv.c.entrypoint[0] = "sleep";
	sv.c.entrypoint[1] = "infinity";
	sv.c.labels[0] = (struct docker_kv){"sandboxd.probe", o->instance};
	sv.c.memory_bytes = SWD_PROBE_MEM;
	sv.c.pids_limit = 16;
	sv.c.read_only = true;
	sv.reserve_bytes = spec->reserve_bytes;
	constraints(&sv, pin && *pin ? pin : NULL, cbuf, sizeof(cbuf));
	rc = swarm_service_create(o->docker, &sv, id, msg);
	if (rc == DOCKER_CONFLICT) {
		/* A create that died half-way left it: start again. */
		log_info("swarm: service %s exists; making it again",
		         spec->c.name);
		swarm_service_remove(o->docker, spec->c.name, msg);
		nap(200);
		rc = swarm_service_create(o->docker, &sv, id, msg);
	}
	return rc;
}

/* Waits for the probe's task to be given a node. */
static int
probe_node(struct orch *o, const char *name, char node[ORCH_NODE_LEN],
           char msg[DOCKER_MSG_LEN])
{
	int64_t deadline = clock_mono_ms() + SWD_WAIT_MS;
	struct swd_where w;
	int rc;

	for (;;) {
		rc = swd_where(o, name, &w, msg);
		if (rc != DOCKER_OK)
			return rc;
		if (w.has_task && w.task.node_id[0]) {
			snprintf(node, ORCH_NODE_LEN, "%s", w.node);
			return DOCKER_OK;
		}
		if (w.has_task && swarm_task_phase(&w.task) == SWARM_NO_NODE) {
			snprintf(msg, DOCKER_MSG_LEN, "no node can take it: %s",
			         w.task.err);
			return ORCH_NO_CAPACITY;
		}
		if (clock_mono_ms() > deadline) {
			snprintf(msg, DOCKER_MSG_LEN,
			         "swarm placed no task in %d s",
			         SWD_WAIT_MS / 1000);
			return DOCKER_ERROR;
		}
		nap(SWD_POLL_MS);
	}
}

/* swarm_service_update's edit: the whole spec becomes arg's. */
static int
edit_replace(struct jv *spec, void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *now = arg;
	static const char *const keys[] = {"Labels", "TaskTemplate", "Mode",
	                                   "EndpointSpec"};

	(void)msg;
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		jv_set(spec, keys[i], jv_copy(jv_get(now, keys[i])));
	return 0;
}

static int
real_spec(struct orch *o, const struct orch_spec *spec, const char *node,
          char msg[DOCKER_MSG_LEN])
{
	struct swarm_service sv = {.replicas = 0,
	                           .stop_grace_s = DOCKER_STOP_GRACE_S};
	char bind[WORKSPACE_PATH_MAX + 64], cbuf[128];
	struct jv *now;
	int rc;

	rc = swd_bind_for(o, node, spec->sandbox_id, bind, sizeof(bind), msg);
	if (rc != DOCKER_OK)
		return rc;
	sv.c = spec->c;
	if (spec->image_id && *spec->image_id)
		sv.c.image = spec->image_id;
	sv.c.binds[0] = bind;
	sv.reserve_bytes = spec->reserve_bytes;
	constraints(&sv, node[0] ? node : swd_of(o)->self_name, cbuf,
	            sizeof(cbuf));
	now = swarm_service_json(&sv);
	rc = swarm_service_update(o->docker, spec->c.name, edit_replace, now,
	                          msg);
	jv_free(now);
	return rc;
}

static int
s_create(struct orch *o, const struct orch_spec *spec, orch_prepare_fn prepare,
         void *arg, char id[72], char node[ORCH_NODE_LEN],
         char msg[DOCKER_MSG_LEN])
{
	struct swarm_service_state st;
	struct err e = {0};
	int rc;

	rc = probe_create(o, spec, spec->node, msg);
	if (rc == DOCKER_OK)
		rc = probe_node(o, spec->c.name, node, msg);
	if (rc == DOCKER_OK && prepare && prepare(arg, node, &e) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "%s", e.msg);
		rc = e.status == 503 ? ORCH_NODE_DOWN : DOCKER_ERROR;
	}
	if (rc == DOCKER_OK)
		rc = real_spec(o, spec, node, msg);
	if (rc == DOCKER_OK)
		rc = swarm_service_inspect(o->docker, spec->c.name, &st, NULL,
		                           msg);
	if (rc != DOCKER_OK) {
		char m2[DOCKER_MSG_LEN];
		swarm_service_remove(o->docker, spec->c.name, m2);
		return rc;
	}
	snprintf(id, 72, "%s", st.id);
	return DOCKER_OK;
}

static int
edit_scale(struct jv *spec, void *arg, char msg[DOCKER_MSG_LEN])
{
	int replicas = *(int *)arg;

	(void)msg;
	return swarm_spec_set_replicas(spec, replicas > 0 ? 1 : 0,
	                               replicas > 0);
}

/* "NoNewPrivs:\t1" and "CapEff:\t0000000000000000" in /proc/pid/status. */
static int
proc_checks(int pid, bool *nnp, bool *capeff0)
{
	char path[64], line[256];
	FILE *f;

	*nnp = *capeff0 = false;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NoNewPrivs:", 11) == 0)
			*nnp = strtol(line + 11, NULL, 10) == 1;
		else if (strncmp(line, "CapEff:", 7) == 0)
			*capeff0 = strtoull(line + 7, NULL, 16) == 0;
	}
	fclose(f);
	return 0;
}

/* The manager's own task: swap off and the privilege checks. */
static int
local_postart(struct orch *o, const char *cid, int64_t memory,
              char msg[DOCKER_MSG_LEN])
{
	int64_t deadline = clock_mono_ms() + 3000;
	bool nnp = false, cap0 = false;
	int pid = 0, rc;

	if (memory > 0) {
		rc = docker_container_update(o->docker, cid, memory, memory,
		                             msg);
		if (rc != DOCKER_OK)
			return rc;
	}
	/* PID 1 sets no_new_privs first thing; give it the moment. */
	do {
		rc = docker_container_pid(o->docker, cid, &pid, msg);
		if (rc != DOCKER_OK)
			return rc;
		if (pid > 0 && proc_checks(pid, &nnp, &cap0) == 0 && nnp)
			break;
		nap(20);
	} while (clock_mono_ms() < deadline);
	if (pid <= 0) {
		snprintf(msg, DOCKER_MSG_LEN, "the sandbox's container ended");
		return DOCKER_ERROR;
	}
	if (!cap0 || !nnp) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "the sandbox's PID 1 has %s: refused",
		         !cap0 ? "capabilities" : "no no_new_privs");
		return DOCKER_ERROR;
	}
	return DOCKER_OK;
}

struct node_state {
	const char *name; /* the node pinned to */
	bool found, up;
};

static void
node_state_of(const struct swarm_node *n, void *arg)
{
	struct node_state *ns = arg;

	if (strcmp(n->name, ns->name) == 0) {
		ns->found = true;
		ns->up = strcmp(n->state, "ready") == 0 &&
		         strcmp(n->availability, "active") == 0;
	}
}

/*
 * A pinned task Swarm cannot place: its node is down or not taking
 * tasks (ORCH_NODE_DOWN: the sandbox waits for its node, or is restored
 * elsewhere), or it is up and full (ORCH_NO_CAPACITY).
 */
static int
no_node(struct orch *o, const char *name, const struct swarm_task *t,
        char msg[DOCKER_MSG_LEN])
{
	struct swarm_service_state st;
	struct node_state ns = {0};
	struct jv *spec = NULL, *c;
	char m2[DOCKER_MSG_LEN];

	if (swarm_service_inspect(o->docker, name, &st, &spec, m2) ==
	    DOCKER_OK) {
		c = jv_get(jv_get(jv_get(spec, "TaskTemplate"), "Placement"),
		           "Constraints");
		for (size_t i = 0; i < jv_len(c); i++) {
			const char *s = jv_str(jv_at(c, i));
			if (s && strncmp(s, SWD_NODE_PREFIX,
			                 strlen(SWD_NODE_PREFIX)) == 0)
				ns.name = s + strlen(SWD_NODE_PREFIX);
		}
		if (ns.name)
			swarm_nodes(o->docker, node_state_of, &ns, m2);
	}
	if (ns.name && ns.found && !ns.up) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "its node %s is down or not taking sandboxes: %s",
		         ns.name, t->err);
		jv_free(spec);
		return ORCH_NODE_DOWN;
	}
	jv_free(spec);
	snprintf(msg, DOCKER_MSG_LEN, "its node cannot take it now: %s",
	         t->err);
	return ORCH_NO_CAPACITY;
}

static bool
known_task(const struct swarm_task *old, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(old[i].id, id) == 0)
			return true;
	return false;
}

/* Waits for a task not in old[] to run; its where in w. */
static int
wait_running(struct orch *o, const char *name, const struct swarm_task *old,
             size_t nold, struct swd_where *w, char msg[DOCKER_MSG_LEN])
{
	int64_t deadline = clock_mono_ms() + SWD_WAIT_MS;
	int rc;

	for (;;) {
		rc = swd_where(o, name, w, msg);
		if (rc != DOCKER_OK)
			return rc;
		if (w->has_task && !known_task(old, nold, w->task.id)) {
			switch (swarm_task_phase(&w->task)) {
			case SWARM_RUNNING:
				return DOCKER_OK;
			case SWARM_NO_NODE:
				return no_node(o, name, &w->task, msg);
			case SWARM_FAILED:
			case SWARM_SHUTDOWN:
				snprintf(msg, DOCKER_MSG_LEN,
				         "its task ended: %s %s", w->task.state,
				         w->task.err[0] ? w->task.err
				                        : w->task.message);
				return DOCKER_ERROR;
			default:
				break;
			}
		}
		if (clock_mono_ms() > deadline) {
			snprintf(msg, DOCKER_MSG_LEN,
			         "its task did not run in %d s",
			         SWD_WAIT_MS / 1000);
			return DOCKER_ERROR;
		}
		nap(SWD_POLL_MS);
	}
}

/* Running already (maybe frozen): thawed, and nothing else to do. */
static int
start_running(struct orch *o, const char *name, const struct swd_where *w,
              char msg[DOCKER_MSG_LEN])
{
	struct docker_state d;

	/* Thawing a container that is not frozen is an engine error. */
	if (w->node[0])
		return swd_remote_inspect(o, w->node, name, &d, msg) ==
		                   DOCKER_OK &&
		               d.paused
		           ? swd_remote_pause(o, w->node, name, false, msg)
		           : DOCKER_OK;
	if (docker_inspect(o->docker, w->task.container_id, &d, msg) ==
	        DOCKER_OK &&
	    d.paused)
		return docker_pause(o->docker, w->task.container_id, false,
		                    msg);
	return DOCKER_OK;
}

static int
s_start(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN])
{
	struct swarm_task old[SWARM_MAX_TASKS];
	struct swarm_service_state st;
	struct swd_where w;
	struct jv *spec = NULL;
	int64_t memory;
	size_t nold = 0;
	int one = 1, rc;

	rc = swd_where(o, name, &w, msg);
	if (rc != DOCKER_OK)
		return rc;
	if (w.has_task && swarm_task_phase(&w.task) == SWARM_RUNNING &&
	    strcmp(w.task.desired, "running") == 0)
		return start_running(o, name, &w, msg);
	rc = swarm_tasks(o->docker, name, old, SWARM_MAX_TASKS, &nold, msg);
	if (rc == DOCKER_OK)
		rc = swarm_service_update(o->docker, name, edit_scale, &one,
		                          msg);
	if (rc == DOCKER_OK)
		rc = wait_running(o, name, old, nold, &w, msg);
	if (rc == DOCKER_OK)
		rc = swarm_service_inspect(o->docker, name, &st, &spec, msg);
	if (rc != DOCKER_OK)
		return rc;
	memory = jv_int(jv_get(
	    jv_get(jv_get(jv_get(spec, "TaskTemplate"), "Resources"), "Limits"),
	    "MemoryBytes"));
	jv_free(spec);
	rc = w.node[0] ? swd_remote_postart(o, w.node, name, memory, msg)
	               : local_postart(o, w.task.container_id, memory, msg);
	if (rc != DOCKER_OK) {
		char m2[DOCKER_MSG_LEN];
		int zero = 0;
		log_warn("swarm: %s: post-start failed: %s", name, msg);
		swarm_service_update(o->docker, name, edit_scale, &zero, m2);
	}
	return rc;
}

/* The service's container is gone from its node. */
static bool
container_gone(struct orch *o, const struct swd_where *w, const char *name)
{
	char msg[DOCKER_MSG_LEN];
	struct docker_state d;
	int rc;

	if (!w->has_task || w->task.container_id[0] == '\0')
		return true;
	rc = w->node[0]
	         ? swd_remote_inspect(o, w->node, name, &d, msg)
	         : docker_inspect(o->docker, w->task.container_id, &d, msg);
	return rc == DOCKER_NOT_FOUND || (rc == DOCKER_OK && !d.running);
}

static int
s_stop(struct orch *o, const char *name, int grace_s, char msg[DOCKER_MSG_LEN])
{
	int64_t deadline = clock_mono_ms() + (grace_s + 30) * 1000LL;
	struct swd_where w;
	int zero = 0, rc;

	rc = swd_where(o, name, &w, msg);
	if (rc != DOCKER_OK)
		return rc;
	if (w.has_task && swarm_task_phase(&w.task) == SWARM_RUNNING)
		start_running(o, name, &w,
		              msg); /* a frozen task thaws to stop */
	rc = swarm_service_update(o->docker, name, edit_scale, &zero, msg);
	if (rc != DOCKER_OK)
		return rc;
	while (!container_gone(o, &w, name)) {
		if (clock_mono_ms() > deadline) {
			snprintf(msg, DOCKER_MSG_LEN,
			         "its container did not stop in %d s",
			         grace_s + 30);
			return DOCKER_ERROR;
		}
		nap(SWD_POLL_MS * 2);
	}
	return DOCKER_OK;
}

struct leftovers {
	char ids[8][72];
	size_t n;
};

static void
leftover(const char *id, const struct jv *labels, void *arg)
{
	struct leftovers *l = arg;

	(void)labels;
	if (l->n < 8)
		snprintf(l->ids[l->n++], 72, "%s", id);
}

/*
 * As docker_remove: when it returns, the sandbox's containers are gone
 * (Swarm removes a deleted service's containers in its own time, while
 * the caller is about to move the workspace to the trash).  Here they
 * are force-removed; on another node, its agent is asked until none is
 * left.
 */
static int
s_remove(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN])
{
	int64_t deadline = clock_mono_ms() + SWD_WAIT_MS / 2;
	char m2[DOCKER_MSG_LEN];
	struct leftovers l = {0};
	struct docker_state d;
	struct swd_where w;
	int rc;

	rc = swd_where(o, name, &w, msg);
	if (rc != DOCKER_OK)
		return rc;
	rc = swarm_service_remove(o->docker, name, msg);
	if (rc != DOCKER_OK)
		return rc;
	if (w.has_task && w.node[0]) {
		while (swd_remote_inspect(o, w.node, name, &d, m2) ==
		           DOCKER_OK &&
		       clock_mono_ms() < deadline)
			nap(SWD_POLL_MS * 2);
		return DOCKER_OK;
	}
	docker_list(o->docker, "com.docker.swarm.service.name", name, leftover,
	            &l, m2);
	for (size_t i = 0; i < l.n; i++)
		docker_remove(o->docker, l.ids[i], m2);
	return DOCKER_OK;
}

/* No container to ask: the state from the task and the spec. */
static void
state_from_spec(const struct jv *spec, const struct swd_where *w,
                struct orch_state *st)
{
	struct jv *tt = jv_get(spec, "TaskTemplate");
	const char *img = jv_str(jv_get(jv_get(tt, "ContainerSpec"), "Image"));
	const char *net =
	    jv_str(jv_get(jv_at(jv_get(tt, "Networks"), 0), "Target"));

	snprintf(st->d.image_id, sizeof(st->d.image_id), "%.*s",
	         img ? (int)strcspn(img, "@") : 0, img ? img : "");
	snprintf(st->d.network_id, sizeof(st->d.network_id), "%s",
	         net ? net : "");
	snprintf(st->d.status, sizeof(st->d.status), "%s",
	         w->has_task ? "exited" : "created");
	if (w->has_task)
		st->d.exit_code = w->task.exit_code;
	if (!w->has_task) {
		struct jv *c = jv_get(jv_get(tt, "Placement"), "Constraints");
		for (size_t i = 0; i < jv_len(c); i++) {
			const char *s = jv_str(jv_at(c, i));
			if (s && strncmp(s, SWD_NODE_PREFIX,
			                 strlen(SWD_NODE_PREFIX)) == 0)
				snprintf(st->node, sizeof(st->node), "%s",
				         s + strlen(SWD_NODE_PREFIX));
		}
	}
}

static int
s_inspect(struct orch *o, const char *name, struct orch_state *st,
          char msg[DOCKER_MSG_LEN])
{
	struct swarm_service_state ss;
	struct jv *spec = NULL;
	struct swd_where w;
	int rc;

	rc = swd_where(o, name, &w, msg);
	if (rc == DOCKER_OK)
		rc = swarm_service_inspect(o->docker, name, &ss, &spec, msg);
	if (rc != DOCKER_OK)
		return rc;
	state_from_spec(spec, &w, st);
	jv_free(spec);
	if (w.has_task) {
		snprintf(st->node, sizeof(st->node), "%s", w.node);
		if (swarm_task_phase(&w.task) == SWARM_NO_NODE ||
		    swarm_task_phase(&w.task) == SWARM_FAILED)
			snprintf(st->why, sizeof(st->why), "%s", w.task.err);
	}
	if (st->node[0] && strcmp(st->node, swd_of(o)->self_name) == 0)
		st->node[0] = '\0';
	if (w.has_task && w.task.container_id[0]) {
		struct docker_state d;
		rc = w.node[0] ? swd_remote_inspect(o, w.node, name, &d, msg)
		               : docker_inspect(o->docker, w.task.container_id,
		                                &d, msg);
		if (rc == DOCKER_OK)
			st->d = d;
		else if (rc == ORCH_NODE_DOWN)
			return rc;
	}
	snprintf(st->d.id, sizeof(st->d.id), "%s", ss.id);
	return DOCKER_OK;
}

static int
s_pause(struct orch *o, const char *name, bool pause, char msg[DOCKER_MSG_LEN])
{
	struct swd_where w;
	int rc = swd_where(o, name, &w, msg);

	if (rc != DOCKER_OK)
		return rc;
	if (!w.has_task || swarm_task_phase(&w.task) != SWARM_RUNNING) {
		snprintf(msg, DOCKER_MSG_LEN, "%s is not running", name);
		return DOCKER_CONFLICT;
	}
	if (w.node[0])
		return swd_remote_pause(o, w.node, name, pause, msg);
	return docker_pause(o->docker, w.task.container_id, pause, msg);
}

static int
s_logs_tail(struct orch *o, const char *name, int lines, char *out, size_t len,
            char msg[DOCKER_MSG_LEN])
{
	struct swd_where w;
	int rc = swd_where(o, name, &w, msg);

	if (len)
		out[0] = '\0';
	if (rc != DOCKER_OK)
		return rc;
	if (!w.has_task || w.task.container_id[0] == '\0')
		return DOCKER_OK; /* never ran: nothing written */
	if (w.node[0])
		return swd_remote_logs(o, w.node, name, lines, out, len, msg);
	return docker_logs_tail(o->docker, w.task.container_id, lines, out, len,
	                        msg);
}

static int
s_ping(struct orch *o, char msg[DOCKER_MSG_LEN])
{
	struct swarm_info si;
	int rc = docker_ping(o->docker, msg);

	if (rc == DOCKER_OK)
		rc = swarm_info(o->docker, &si, msg);
	if (rc == DOCKER_OK && !si.manager) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "the docker engine is not a swarm manager (swarm: %s)",
		         si.state);
		rc = DOCKER_ERROR;
	}
	return rc;
}

static bool
s_is_up(struct orch *o)
{
	return docker_is_up(o->docker);
}

static void
s_free(struct orch *o)
{
	struct swd *s = swd_of(o);

	if (s == NULL)
		return;
	swd_tunnel_stop(o);
	pthread_mutex_destroy(&s->mu);
	free(s);
	o->priv = NULL;
}

static int
s_exec_create(struct orch *o, const struct docker_exec_spec *s, char id[160],
              char msg[DOCKER_MSG_LEN])
{
	return swd_exec_create(o, s, id, msg);
}

static const struct orch_ops orch_swarm_ops = {
    .name = "swarm",
    .free = s_free,
    .ping = s_ping,
    .is_up = s_is_up,
    .create = s_create,
    .start = s_start,
    .stop = s_stop,
    .remove = s_remove,
    .inspect = s_inspect,
    .pause = s_pause,
    .logs_tail = s_logs_tail,
    .list = swd_list,
    .events = swd_events,
    .exec_create = s_exec_create,
    .exec_start = swd_exec_start,
    .exec_resize = swd_exec_resize,
    .exec_inspect = swd_exec_inspect,
    .sup_connect = swd_sup_connect,
    .target = swd_target,
    .move = swd_move,
    .nodes = swd_nodes,
};

static void
dead_slot(const char *name, int replicas, int running, void *arg)
{
	struct orch *o = arg;
	char msg[DOCKER_MSG_LEN];
	int zero = 0;

	if (replicas == 0 || running > 0)
		return;
	if (swarm_service_update(o->docker, name, edit_scale, &zero, msg) ==
	    DOCKER_OK)
		log_info("swarm: %s had no running task at 1 replica; set to 0",
		         name);
	else
		log_warn("swarm: %s: setting it to 0 replicas: %s", name, msg);
}

/*
 * A task that died while the daemon was down left its service at 1
 * replica with a dead slot: the next reconcile (any update, a manager
 * restart) would make a new task nobody asked for.  Set them to 0 before
 * anything else touches them; lifecycle's reconcile then sees them
 * stopped, as their containers are.
 */
static void
clear_dead_slots(struct orch *o)
{
	char msg[DOCKER_MSG_LEN];

	if (swarm_service_counts(o->docker, "sandboxd.instance", o->instance,
	                         dead_slot, o, msg) != DOCKER_OK)
		log_warn("swarm: listing the sandboxes' services: %s", msg);
}

/* The manager's node: sandboxd.node=<name> here; sandboxd.agent=1 is set
 * by sbnet once the network and its rules are in place (sbswarm.c). */
int
orch_swarm_ops_init(struct orch *o, struct err *e)
{
	char msg[DOCKER_MSG_LEN];
	struct swarm_info si;
	struct swd *s;

	if (docker_ping(o->docker, msg) != DOCKER_OK ||
	    swarm_info(o->docker, &si, msg) != DOCKER_OK)
		return ERR_DOCKER(e, "SANDBOXD_ORCHESTRATOR=swarm: %s", msg);
	if (!si.manager)
		return ERR_DOCKER(e,
		                  "SANDBOXD_ORCHESTRATOR=swarm: this docker "
		                  "engine is not a swarm manager (swarm: %s); "
		                  "run `docker swarm init` first",
		                  si.state[0] ? si.state : "inactive");
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return ERR_INTERNAL(e, "out of memory");
	pthread_mutex_init(&s->mu, NULL);
	snprintf(s->self_id, sizeof(s->self_id), "%s", si.node_id);
	if (o->cfg->node_name[0])
		snprintf(s->self_name, sizeof(s->self_name), "%s",
		         o->cfg->node_name);
	else if (gethostname(s->self_name, sizeof(s->self_name) - 1) < 0 ||
	         s->self_name[0] == '\0')
		snprintf(s->self_name, sizeof(s->self_name), "manager");
	if (swarm_node_update(o->docker, si.node_id, "sandboxd.node",
	                      s->self_name, NULL, msg) != DOCKER_OK) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return ERR_DOCKER(e, "swarm: labelling this node: %s", msg);
	}
	o->priv = s;
	o->ops = &orch_swarm_ops;
	clear_dead_slots(o);
	return 0;
}
