/*
 * The swarm driver's node side: what only the node running a task can
 * do.  The manager's own node (node "") is this host: its engine and its
 * files, as the docker driver does.  Any other node is reached through
 * its agent (nodelink, role node, the address the store holds), by the
 * ops of the table in nodelink.h.
 *
 * Events: the manager's engine reports only its own containers, so the
 * stream is the local engine's container events merged with each
 * remote node's agent "events" stream, one reader thread per node
 * (reconnecting), the store's nodes read again every few seconds.  The
 * events' name is the service's (a task's container is named
 * "<service>.<slot>.<task>").  A sandbox's task that dies is scaled to
 * 0 replicas before the event goes on, so Swarm never makes a new task
 * of it behind the daemon's back.
 */
#include "orch/orch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/num.h"
#include "nodelink/nodelink.h"
#include "orch/swarmdrv.h"
#include "ws/workspace.h"
#include "ws/wsock.h"

static int
code_of(const struct err *e)
{
	switch (e->status) {
	case 503:
		return ORCH_NODE_DOWN;
	case 404:
		return DOCKER_NOT_FOUND;
	case 409:
		return DOCKER_CONFLICT;
	default:
		return DOCKER_ERROR;
	}
}

static int
node_addr(struct orch *o, const char *node, char addr[128],
          char msg[DOCKER_MSG_LEN])
{
	struct node_row row;

	if (o->nl == NULL) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "node %s: no channel to node agents yet", node);
		return ORCH_NODE_DOWN;
	}
	if (store_node_get(o->store, node, &row) != 0 || row.addr[0] == '\0') {
		snprintf(msg, DOCKER_MSG_LEN, "node %s: not enrolled", node);
		return ORCH_NODE_DOWN;
	}
	snprintf(addr, 128, "%s", row.addr);
	return DOCKER_OK;
}

int
swd_call(struct orch *o, const char *node, struct jv *req, struct jv **ans,
         char msg[DOCKER_MSG_LEN])
{
	struct err e = {0};
	char addr[128];
	int rc;

	*ans = NULL;
	rc = node_addr(o, node, addr, msg);
	if (rc == DOCKER_OK &&
	    nl_call(o->nl, addr, NL_ROLE_NODE, req, ans, NL_CALL_MS, &e) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "node %s: %s", node, e.msg);
		rc = code_of(&e);
	}
	jv_free(req);
	return rc;
}

static struct jv *
op(const char *name)
{
	struct jv *r = jv_obj();

	jv_set_str(r, "op", name);
	return r;
}

/* An sb_* op on the container name names, as the agent spells it. */
static struct jv *
sb_op(struct orch *o, const char *opname, const char *name)
{
	struct jv *r = op(opname);
	char an[80];

	swd_agent_name(o, name, an);
	jv_set_str(r, "name", an);
	return r;
}

int
swd_remote_inspect(struct orch *o, const char *node, const char *name,
                   struct docker_state *st, char msg[DOCKER_MSG_LEN])
{
	struct jv *req = sb_op(o, "sb_inspect", name), *ans;
	int rc;

	memset(st, 0, sizeof(*st));
	rc = swd_call(o, node, req, &ans, msg);
	if (rc == DOCKER_OK && !jv_is_true(jv_get(ans, "exists"))) {
		snprintf(msg, DOCKER_MSG_LEN, "node %s: no container of %s",
		         node, name);
		rc = DOCKER_NOT_FOUND;
	}
	if (rc == DOCKER_OK) {
		const char *id = jv_str(jv_get(ans, "id"));
		const char *status = jv_str(jv_get(ans, "status"));
		const char *ip = jv_str(jv_get(ans, "ip"));
		const char *img = jv_str(jv_get(ans, "image_id"));
		snprintf(st->id, sizeof(st->id), "%s", id ? id : "");
		snprintf(st->status, sizeof(st->status), "%s",
		         status ? status : "");
		snprintf(st->ip, sizeof(st->ip), "%s", ip ? ip : "");
		snprintf(st->image_id, sizeof(st->image_id), "%s",
		         img ? img : "");
		st->running = jv_is_true(jv_get(ans, "running"));
		st->paused = jv_is_true(jv_get(ans, "paused"));
		st->oom_killed = jv_is_true(jv_get(ans, "oom_killed"));
		st->exit_code = (int)jv_int(jv_get(ans, "exit_code"));
	}
	jv_free(ans);
	return rc;
}

int
swd_remote_postart(struct orch *o, const char *node, const char *name,
                   int64_t memory, char msg[DOCKER_MSG_LEN])
{
	struct jv *req = sb_op(o, "sb_postart", name), *ans;
	int rc;

	jv_set_int(req, "memory", memory);
	rc = swd_call(o, node, req, &ans, msg);
	jv_free(ans);
	return rc;
}

int
swd_remote_pause(struct orch *o, const char *node, const char *name, bool pause,
                 char msg[DOCKER_MSG_LEN])
{
	struct jv *req = sb_op(o, "sb_pause", name), *ans;
	int rc;

	jv_set_bool(req, "pause", pause);
	rc = swd_call(o, node, req, &ans, msg);
	jv_free(ans);
	return rc;
}

int
swd_remote_logs(struct orch *o, const char *node, const char *name, int lines,
                char *out, size_t len, char msg[DOCKER_MSG_LEN])
{
	struct jv *req = sb_op(o, "sb_logs_tail", name), *ans;
	const char *text;
	int rc;

	jv_set_int(req, "lines", lines);
	rc = swd_call(o, node, req, &ans, msg);
	text = jv_str(jv_get(ans, "text"));
	if (len)
		snprintf(out, len, "%s", rc == DOCKER_OK && text ? text : "");
	jv_free(ans);
	return rc;
}

/* exec ids: "<node>/<agent's id>" remote, the engine's id local. */
static int
exec_split(const char *id, char node[ORCH_NODE_LEN], const char **eid)
{
	const char *slash = strchr(id, '/');

	if (slash == NULL) {
		node[0] = '\0';
		*eid = id;
		return 0;
	}
	if ((size_t)(slash - id) >= ORCH_NODE_LEN)
		return -1;
	snprintf(node, ORCH_NODE_LEN, "%.*s", (int)(slash - id), id);
	*eid = slash + 1;
	return 0;
}

static struct jv *
str_list(const char *const *items)
{
	struct jv *a = jv_arr();

	for (size_t i = 0; items && items[i]; i++)
		jv_push(a, jv_new_str(items[i]));
	return a;
}

int
swd_exec_create(struct orch *o, const struct docker_exec_spec *s, char id[160],
                char msg[DOCKER_MSG_LEN])
{
	struct docker_exec_spec local = *s;
	struct jv *req, *ans;
	char an[80];
	struct swd_where w;
	char eid[72];
	int rc = swd_where(o, s->container, &w, msg);

	if (rc != DOCKER_OK)
		return rc;
	if (!w.has_task || swarm_task_phase(&w.task) != SWARM_RUNNING) {
		snprintf(msg, DOCKER_MSG_LEN, "%s is not running",
		         s->container);
		return DOCKER_CONFLICT;
	}
	if (w.node[0] == '\0') {
		local.container = w.task.container_id;
		rc = docker_exec_create(o->docker, &local, eid, msg);
		if (rc == DOCKER_OK)
			snprintf(id, 160, "%s", eid);
		return rc;
	}
	swd_agent_name(o, s->container, an);
	req = op("exec_create");
	jv_set_str(req, "container", an);
	jv_set(req, "cmd", str_list(s->cmd));
	jv_set(req, "env", str_list(s->env));
	jv_set_str(req, "user", s->user ? s->user : "");
	jv_set_str(req, "workdir", s->workdir ? s->workdir : "");
	jv_set_bool(req, "tty", s->tty);
	rc = swd_call(o, w.node, req, &ans, msg);
	if (rc == DOCKER_OK) {
		const char *aid = jv_str(jv_get(ans, "id"));
		if (aid == NULL || strchr(aid, '/') || strlen(aid) > 80) {
			snprintf(msg, DOCKER_MSG_LEN, "node %s: no exec id",
			         w.node);
			rc = DOCKER_ERROR;
		} else {
			snprintf(id, 160, "%s/%s", w.node, aid);
		}
	}
	jv_free(ans);
	return rc;
}

int
swd_exec_start(struct orch *o, const char *id, bool tty, int *fd,
               char msg[DOCKER_MSG_LEN])
{
	char node[ORCH_NODE_LEN], addr[128];
	struct jv *req;
	struct err e = {0};
	const char *eid;
	int rc;

	*fd = -1;
	if (exec_split(id, node, &eid) < 0)
		return DOCKER_NOT_FOUND;
	if (node[0] == '\0')
		return docker_exec_start(o->docker, eid, tty, fd, msg);
	rc = node_addr(o, node, addr, msg);
	if (rc != DOCKER_OK)
		return rc;
	req = op("exec_start");
	jv_set_str(req, "id", eid);
	jv_set_bool(req, "tty", tty);
	if (nl_stream(o->nl, addr, NL_ROLE_NODE, req, NULL, fd, &e) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "node %s: %s", node, e.msg);
		rc = code_of(&e);
	}
	jv_free(req);
	return rc;
}

int
swd_exec_resize(struct orch *o, const char *id, int cols, int rows,
                char msg[DOCKER_MSG_LEN])
{
	char node[ORCH_NODE_LEN];
	struct jv *req, *ans;
	const char *eid;
	int rc;

	if (exec_split(id, node, &eid) < 0)
		return DOCKER_NOT_FOUND;
	if (node[0] == '\0')
		return docker_exec_resize(o->docker, eid, cols, rows, msg);
	req = op("exec_resize");
	jv_set_str(req, "id", eid);
	jv_set_int(req, "cols", cols);
	jv_set_int(req, "rows", rows);
	rc = swd_call(o, node, req, &ans, msg);
	jv_free(ans);
	return rc;
}

int
swd_exec_inspect(struct orch *o, const char *id, bool *running, int *exit_code,
                 char msg[DOCKER_MSG_LEN])
{
	char node[ORCH_NODE_LEN];
	struct jv *req, *ans;
	const char *eid;
	int rc;

	if (exec_split(id, node, &eid) < 0)
		return DOCKER_NOT_FOUND;
	if (node[0] == '\0')
		return docker_exec_inspect(o->docker, eid, running, exit_code,
		                           msg);
	req = op("exec_inspect");
	jv_set_str(req, "id", eid);
	rc = swd_call(o, node, req, &ans, msg);
	if (rc == DOCKER_OK) {
		*running = jv_is_true(jv_get(ans, "running"));
		*exit_code = (int)jv_int(jv_get(ans, "exit_code"));
	}
	jv_free(ans);
	return rc;
}

int
swd_sup_connect(struct orch *o, const char *sandbox_id, const char *node,
                int64_t deadline, int *fd, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX], addr[128], msg[DOCKER_MSG_LEN];
	struct jv *req;
	int rc;

	*fd = -1;
	if (node == NULL || node[0] == '\0') {
		workspace_path(o->cfg->data_dir, sandbox_id, ws, sizeof(ws));
		*fd = wsock_connect(ws, deadline, NULL, e);
		return *fd < 0 ? -1 : 0;
	}
	if (node_addr(o, node, addr, msg) != DOCKER_OK)
		return err_set(e, 503, "node_down", "%s", msg);
	req = op("sup");
	jv_set_str(req, "sandbox", sandbox_id);
	rc = nl_stream(o->nl, addr, NL_ROLE_NODE, req, NULL, fd, e);
	jv_free(req);
	return rc;
}

/* The tunnel's lookup: the sandbox's node's agent address. */
static int
tunnel_resolve(void *arg, const char *sandbox, char addr[128])
{
	struct orch *o = arg;
	char msg[DOCKER_MSG_LEN];
	struct sandbox *sb = calloc(1, sizeof(*sb));
	int rc = -1;

	if (sb && store_sandbox_get(o->store, sandbox, sb) == 0 &&
	    sb->node[0] && node_addr(o, sb->node, addr, msg) == DOCKER_OK)
		rc = 0;
	free(sb);
	return rc;
}

void
swd_tunnel_stop(struct orch *o)
{
	struct swd *s = swd_of(o);

	pthread_mutex_lock(&s->mu);
	if (s->tunnel)
		nl_tunnel_stop(s->tunnel);
	s->tunnel = NULL;
	pthread_mutex_unlock(&s->mu);
}

int
swd_target(struct orch *o, const char *sandbox_id, const char *node,
           const char *ip, int port, struct orch_target *out)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&out->addr;
	struct swd *s = swd_of(o);
	struct err e = {0};
	unsigned tport = 0;

	if (node == NULL || node[0] == '\0')
		return orch_docker_ops.target(o, sandbox_id, node, ip, port,
		                              out);
	if (o->nl == NULL || port <= 0 || port > 65535)
		return -1;
	pthread_mutex_lock(&s->mu);
	if (s->tunnel == NULL &&
	    nl_tunnel_start(&s->tunnel, o->nl, tunnel_resolve, o, &e) < 0) {
		log_warn("swarm: the preview tunnel: %s", e.msg);
		s->tunnel = NULL;
	}
	if (s->tunnel)
		tport = nl_tunnel_port(s->tunnel);
	pthread_mutex_unlock(&s->mu);
	if (tport == 0)
		return -1;
	memset(out, 0, sizeof(*out));
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)tport);
	a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	out->len = sizeof(*a4);
	out->preamble_len =
	    (size_t)snprintf(out->preamble, sizeof(out->preamble),
	                     "SBX %s %d\n", sandbox_id, port);
	return out->preamble_len < sizeof(out->preamble) ? 0 : -1;
}
