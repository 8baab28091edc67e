/*
 * The swarm driver's leaf: where a service's current task runs, and a
 * swarm node's name (its sandboxd.node label, cached), from the
 * manager's engine.  Every other file of the driver asks here.
 */
#include "orch/orch.h"

#include <stdio.h>
#include <string.h>

#include "orch/swarmdrv.h"

int
swd_node_name(struct orch *o, const char *node_id, char name[ORCH_NODE_LEN],
              char msg[DOCKER_MSG_LEN])
{
	struct swd *s = swd_of(o);
	struct swarm_node n;
	int rc;

	name[0] = '\0';
	if (strcmp(node_id, s->self_id) == 0)
		return DOCKER_OK;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->nnames; i++)
		if (strcmp(s->names[i].id, node_id) == 0) {
			snprintf(name, ORCH_NODE_LEN, "%s", s->names[i].name);
			pthread_mutex_unlock(&s->mu);
			return DOCKER_OK;
		}
	pthread_mutex_unlock(&s->mu);
	rc = swarm_node_inspect(o->docker, node_id, &n, msg);
	if (rc != DOCKER_OK)
		return rc;
	if (n.name[0] == '\0') {
		snprintf(msg, DOCKER_MSG_LEN,
		         "swarm node %.40s (%.60s) has no sandboxd.node label",
		         node_id, n.hostname);
		return DOCKER_ERROR;
	}
	snprintf(name, ORCH_NODE_LEN, "%s", n.name);
	pthread_mutex_lock(&s->mu);
	if (s->nnames < SWD_NAMES) {
		snprintf(s->names[s->nnames].id, 64, "%s", node_id);
		snprintf(s->names[s->nnames].name, ORCH_NODE_LEN, "%s", n.name);
		s->nnames++;
	}
	pthread_mutex_unlock(&s->mu);
	return DOCKER_OK;
}

int
swd_where(struct orch *o, const char *name, struct swd_where *w,
          char msg[DOCKER_MSG_LEN])
{
	struct swarm_task t[SWARM_MAX_TASKS];
	struct swarm_service_state st;
	const struct swarm_task *cur;
	size_t n;
	int rc;

	memset(w, 0, sizeof(*w));
	rc = swarm_service_inspect(o->docker, name, &st, NULL, msg);
	if (rc != DOCKER_OK)
		return rc;
	rc = swarm_tasks(o->docker, name, t, SWARM_MAX_TASKS, &n, msg);
	if (rc != DOCKER_OK)
		return rc;
	cur = swarm_task_current(t, n);
	if (cur == NULL)
		return DOCKER_OK;
	w->has_task = true;
	w->task = *cur;
	if (cur->node_id[0])
		return swd_node_name(o, cur->node_id, w->node, msg);
	return DOCKER_OK;
}
