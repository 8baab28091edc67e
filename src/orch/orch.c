/*
 * orch: picks the driver SANDBOXD_ORCHESTRATOR names and forwards every
 * call to it.  The handle holds what both drivers need (configuration,
 * the local engine, the store, the instance id, the channel to agents);
 * the driver's table (internal.h) holds how.  Nothing is checked or
 * cached here: a driver call is exactly what the caller asked for, so
 * "docker" stays what lifecycle did before the seam existed.
 *
 * Rejected: a driver chosen per call (say, by the sandbox's node): the
 * swarm driver decides local or remote itself, from the node argument,
 * and the docker driver has one node only.
 */
#include "orch/orch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orch/internal.h"

/* Until orch_swarm.c is linked in. */
__attribute__((weak)) int
orch_swarm_ops_init(struct orch *o, struct err *e)
{
	(void)o;
	return err_set(e, 500, "internal",
	               "SANDBOXD_ORCHESTRATOR=swarm: the swarm driver is "
	               "not built into this daemon");
}

int
orch_new(struct orch **out, const struct config *cfg, struct docker *d,
         struct store *store, const char *instance, struct err *e)
{
	struct orch *o = calloc(1, sizeof(*o));

	*out = NULL;
	if (o == NULL)
		return ERR_INTERNAL(e, "out of memory");
	o->cfg = cfg;
	o->docker = d;
	o->store = store;
	snprintf(o->instance, sizeof(o->instance), "%s", instance);
	if (strcmp(cfg->orchestrator, "docker") == 0) {
		o->ops = &orch_docker_ops;
	} else if (strcmp(cfg->orchestrator, "swarm") == 0) {
		if (orch_swarm_ops_init(o, e) < 0) {
			free(o);
			return -1;
		}
	} else {
		free(o);
		return err_set(e, 400, "invalid_request",
		               "SANDBOXD_ORCHESTRATOR is \"%s\"; it is docker "
		               "or swarm",
		               cfg->orchestrator);
	}
	*out = o;
	return 0;
}

void
orch_free(struct orch *o)
{
	if (o == NULL)
		return;
	if (o->ops && o->ops->free)
		o->ops->free(o);
	free(o);
}

void
orch_set_nodelink(struct orch *o, struct nodelink *nl)
{
	o->nl = nl;
}

const char *
orch_name(const struct orch *o)
{
	return o->ops->name;
}

bool
orch_is_swarm(const struct orch *o)
{
	return strcmp(o->ops->name, "swarm") == 0;
}

int
orch_ping(struct orch *o, char msg[DOCKER_MSG_LEN])
{
	return o->ops->ping(o, msg);
}

bool
orch_is_up(struct orch *o)
{
	return o->ops->is_up(o);
}

int
orch_create(struct orch *o, const struct orch_spec *spec,
            orch_prepare_fn prepare, void *arg, char id[72],
            char node[ORCH_NODE_LEN], char msg[DOCKER_MSG_LEN])
{
	node[0] = '\0';
	return o->ops->create(o, spec, prepare, arg, id, node, msg);
}

int
orch_start(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN])
{
	return o->ops->start(o, name, msg);
}

int
orch_stop(struct orch *o, const char *name, int grace_s,
          char msg[DOCKER_MSG_LEN])
{
	return o->ops->stop(o, name, grace_s, msg);
}

int
orch_remove(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN])
{
	return o->ops->remove(o, name, msg);
}

int
orch_inspect(struct orch *o, const char *name, struct orch_state *st,
             char msg[DOCKER_MSG_LEN])
{
	memset(st, 0, sizeof(*st));
	return o->ops->inspect(o, name, st, msg);
}

int
orch_pause(struct orch *o, const char *name, bool pause,
           char msg[DOCKER_MSG_LEN])
{
	return o->ops->pause(o, name, pause, msg);
}

int
orch_logs_tail(struct orch *o, const char *name, int lines, char *out,
               size_t len, char msg[DOCKER_MSG_LEN])
{
	return o->ops->logs_tail(o, name, lines, out, len, msg);
}

int
orch_list(struct orch *o, const char *label, const char *value,
          void (*fn)(const char *name, const struct jv *labels, void *),
          void *arg, char msg[DOCKER_MSG_LEN])
{
	return o->ops->list(o, label, value, fn, arg, msg);
}

int
orch_events(struct orch *o, const char *label, const char *value, int64_t since,
            void (*fn)(const struct orch_event *, void *), void *arg,
            const atomic_bool *stop)
{
	return o->ops->events(o, label, value, since, fn, arg, stop);
}

int
orch_exec_create(struct orch *o, const struct docker_exec_spec *s, char id[160],
                 char msg[DOCKER_MSG_LEN])
{
	return o->ops->exec_create(o, s, id, msg);
}

int
orch_exec_start(struct orch *o, const char *id, bool tty, int *fd,
                char msg[DOCKER_MSG_LEN])
{
	return o->ops->exec_start(o, id, tty, fd, msg);
}

int
orch_exec_resize(struct orch *o, const char *id, int cols, int rows,
                 char msg[DOCKER_MSG_LEN])
{
	return o->ops->exec_resize(o, id, cols, rows, msg);
}

int
orch_exec_inspect(struct orch *o, const char *id, bool *running, int *exit_code,
                  char msg[DOCKER_MSG_LEN])
{
	return o->ops->exec_inspect(o, id, running, exit_code, msg);
}

int
orch_sup_connect(struct orch *o, const char *sandbox_id, const char *node,
                 int64_t deadline, int *fd, struct err *e)
{
	*fd = -1;
	return o->ops->sup_connect(o, sandbox_id, node ? node : "", deadline,
	                           fd, e);
}

int
orch_target(struct orch *o, const char *sandbox_id, const char *node,
            const char *ip, int port, struct orch_target *out)
{
	memset(out, 0, sizeof(*out));
	return o->ops->target(o, sandbox_id, node ? node : "", ip, port, out);
}

int
orch_move(struct orch *o, const char *name, const char *node,
          char msg[DOCKER_MSG_LEN])
{
	return o->ops->move(o, name, node, msg);
}

int
orch_nodes(struct orch *o, void (*fn)(const struct orch_node *, void *),
           void *arg, char msg[DOCKER_MSG_LEN])
{
	return o->ops->nodes(o, fn, arg, msg);
}
