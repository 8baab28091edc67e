/*
 * orch's docker driver: the sandbox containers on this host's engine,
 * each call the docker_* call of the same name (docker/docker.h), so
 * SANDBOXD_ORCHESTRATOR=docker is what the daemon did before the seam.
 * One node, this host; every sandbox's node is "".
 *
 * What the engine names differently: orch_list hands out the container's
 * id as its name (every docker call takes either); orch_events turns the
 * engine's event objects into struct orch_event and passes on only the
 * sandbox containers' (label sandboxd.sandbox) lifecycle actions, as the
 * watcher used no other.
 */
#include "orch/orch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "orch/internal.h"
#include "ws/wsock.h"
#include "lib/limits.h"
#include "lib/num.h"
#include "ws/workspace.h"

static int
d_ping(struct orch *o, char msg[DOCKER_MSG_LEN])
{
	return docker_ping(o->docker, msg);
}

static bool
d_is_up(struct orch *o)
{
	return docker_is_up(o->docker);
}

/* The workspace is here already: prepare is the swarm driver's. */
static int
d_create(struct orch *o, const struct orch_spec *spec, orch_prepare_fn prepare,
         void *arg, char id[72], char node[ORCH_NODE_LEN],
         char msg[DOCKER_MSG_LEN])
{
	(void)prepare;
	(void)arg;
	node[0] = '\0';
	return docker_create(o->docker, &spec->c, id, msg);
}

static int
d_start(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN])
{
	return docker_start(o->docker, name, msg);
}

static int
d_stop(struct orch *o, const char *name, int grace_s, char msg[DOCKER_MSG_LEN])
{
	return docker_stop(o->docker, name, grace_s, msg);
}

static int
d_remove(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN])
{
	return docker_remove(o->docker, name, msg);
}

static int
d_inspect(struct orch *o, const char *name, struct orch_state *st,
          char msg[DOCKER_MSG_LEN])
{
	return docker_inspect(o->docker, name, &st->d, msg);
}

static int
d_pause(struct orch *o, const char *name, bool pause, char msg[DOCKER_MSG_LEN])
{
	return docker_pause(o->docker, name, pause, msg);
}

static int
d_logs_tail(struct orch *o, const char *name, int lines, char *out, size_t len,
            char msg[DOCKER_MSG_LEN])
{
	return docker_logs_tail(o->docker, name, lines, out, len, msg);
}

static int
d_list(struct orch *o, const char *label, const char *value,
       void (*fn)(const char *name, const struct jv *labels, void *), void *arg,
       char msg[DOCKER_MSG_LEN])
{
	return docker_list(o->docker, label, value, fn, arg, msg);
}

struct events_relay {
	void (*fn)(const struct orch_event *, void *);
	void *arg;
};

static const char *const event_actions[] = {"start", "die",     "oom",
                                            "pause", "unpause", "destroy"};

static void
on_engine_event(const struct jv *ev, void *arg)
{
	struct events_relay *r = arg;
	const char *action = jv_str(jv_get(ev, "Action"));
	struct jv *attrs = jv_get(jv_get(ev, "Actor"), "Attributes");
	const char *name = jv_str(jv_get(attrs, "name"));
	struct orch_event oe = {0};
	bool known = false;

	if (action == NULL || name == NULL ||
	    jv_str(jv_get(attrs, "sandboxd.sandbox")) == NULL)
		return;
	for (size_t i = 0; i < sizeof(event_actions) / sizeof(*event_actions);
	     i++)
		known = known || strcmp(action, event_actions[i]) == 0;
	if (!known)
		return;
	snprintf(oe.name, sizeof(oe.name), "%s", name);
	snprintf(oe.action, sizeof(oe.action), "%s", action);
	oe.exit_code = (int)num_long(jv_str(jv_get(attrs, "exitCode")), -1);
	r->fn(&oe, r->arg);
}

static int
d_events(struct orch *o, const char *label, const char *value, int64_t since,
         void (*fn)(const struct orch_event *, void *), void *arg,
         const atomic_bool *stop)
{
	struct events_relay r = {.fn = fn, .arg = arg};

	return docker_events(o->docker, label, value, since, on_engine_event,
	                     &r, stop);
}

static int
d_exec_create(struct orch *o, const struct docker_exec_spec *s, char id[160],
              char msg[DOCKER_MSG_LEN])
{
	char eid[72];
	int rc = docker_exec_create(o->docker, s, eid, msg);

	if (rc == DOCKER_OK)
		snprintf(id, 160, "%s", eid);
	return rc;
}

static int
d_exec_start(struct orch *o, const char *id, bool tty, int *fd,
             char msg[DOCKER_MSG_LEN])
{
	return docker_exec_start(o->docker, id, tty, fd, msg);
}

static int
d_exec_resize(struct orch *o, const char *id, int cols, int rows,
              char msg[DOCKER_MSG_LEN])
{
	return docker_exec_resize(o->docker, id, cols, rows, msg);
}

static int
d_exec_inspect(struct orch *o, const char *id, bool *running, int *exit_code,
               char msg[DOCKER_MSG_LEN])
{
	return docker_exec_inspect(o->docker, id, running, exit_code, msg);
}

static int
d_sup_connect(struct orch *o, const char *sandbox_id, const char *node,
              int64_t deadline, int *fd, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];

	(void)node;
	workspace_path(o->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	*fd = wsock_connect(ws, deadline, NULL, e);
	return *fd < 0 ? -1 : 0;
}

/* The container's bridge address; -1 when ip is not one. */
static int
d_target(struct orch *o, const char *sandbox_id, const char *node,
         const char *ip, int port, struct orch_target *out)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&out->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out->addr;

	(void)o;
	(void)sandbox_id;
	(void)node;
	if (ip == NULL || port <= 0 || port > 65535)
		return -1;
	if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		out->len = sizeof(*a4);
	} else if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*a6);
	} else {
		return -1;
	}
	out->preamble[0] = '\0';
	out->preamble_len = 0;
	return 0;
}

static int
d_move(struct orch *o, const char *name, const char *node,
       char msg[DOCKER_MSG_LEN])
{
	(void)o;
	(void)name;
	(void)node;
	snprintf(msg, DOCKER_MSG_LEN,
	         "SANDBOXD_ORCHESTRATOR=docker runs every sandbox on this "
	         "host; moving one needs swarm");
	return ORCH_UNSUPPORTED;
}

struct node_count {
	const char *instance;
	int running;
};

static void
count_sandbox(const struct docker_container *dc, void *arg)
{
	struct node_count *n = arg;

	if (dc->sandbox[0] && strcmp(dc->instance, n->instance) == 0 &&
	    strcmp(dc->state, "running") == 0)
		n->running++;
}

/* One node, this host: SANDBOXD_NODE_NAME, else its hostname. */
static int
d_nodes(struct orch *o, void (*fn)(const struct orch_node *, void *), void *arg,
        char msg[DOCKER_MSG_LEN])
{
	struct node_count count = {.instance = o->instance};
	struct orch_node n = {0};
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	int rc;

	rc = docker_containers_all(o->docker, count_sandbox, &count, msg);
	if (rc != DOCKER_OK)
		return rc;
	if (o->cfg->node_name[0])
		snprintf(n.name, sizeof(n.name), "%s", o->cfg->node_name);
	else if (gethostname(n.name, sizeof(n.name) - 1) < 0 || !n.name[0])
		snprintf(n.name, sizeof(n.name), "local");
	snprintf(n.state, sizeof(n.state), "ready");
	snprintf(n.availability, sizeof(n.availability), "active");
	n.manager = true;
	n.mem_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
	n.tasks = count.running;
	fn(&n, arg);
	return DOCKER_OK;
}

const struct orch_ops orch_docker_ops = {
    .name = "docker",
    .ping = d_ping,
    .is_up = d_is_up,
    .create = d_create,
    .start = d_start,
    .stop = d_stop,
    .remove = d_remove,
    .inspect = d_inspect,
    .pause = d_pause,
    .logs_tail = d_logs_tail,
    .list = d_list,
    .events = d_events,
    .exec_create = d_exec_create,
    .exec_start = d_exec_start,
    .exec_resize = d_exec_resize,
    .exec_inspect = d_exec_inspect,
    .sup_connect = d_sup_connect,
    .target = d_target,
    .move = d_move,
    .nodes = d_nodes,
};
