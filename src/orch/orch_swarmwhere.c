/*
 * The swarm driver's leaf: where a service's current task runs, a swarm
 * node's name (its sandboxd.node label, cached), where a node keeps a
 * sandbox's workspace, and the calls that only read or re-pin services
 * (list, move).  Every other file of the driver asks here.
 */
#include "orch/orch.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "orch/swarmdrv.h"
#include "ws/workspace.h"

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

/* The node's workspace bind "<its data_dir>/workspaces/<id>:/home/sandbox". */
int
swd_bind_for(struct orch *o, const char *node, const char *sandbox_id,
             char *out, size_t len, char msg[DOCKER_MSG_LEN])
{
	char ws[WORKSPACE_PATH_MAX];
	struct node_row row;

	if (node[0] == '\0') {
		workspace_path(o->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	} else if (store_node_get(o->store, node, &row) != 0 ||
	           row.data_dir[0] == '\0') {
		snprintf(msg, DOCKER_MSG_LEN,
		         "node %s: no data directory known", node);
		return DOCKER_ERROR;
	} else {
		workspace_path(row.data_dir, sandbox_id, ws, sizeof(ws));
	}
	snprintf(out, len, "%s:/home/sandbox", ws);
	return DOCKER_OK;
}

struct list_relay {
	void (*fn)(const char *, const struct jv *, void *);
	void *arg;
};

static void
list_one(const char *name, const char *id, const struct jv *labels, void *arg)
{
	struct list_relay *r = arg;

	(void)id;
	r->fn(name, labels, r->arg);
}

int
swd_list(struct orch *o, const char *label, const char *value,
         void (*fn)(const char *, const struct jv *, void *), void *arg,
         char msg[DOCKER_MSG_LEN])
{
	struct list_relay r = {.fn = fn, .arg = arg};

	return swarm_service_list(o->docker, label, value, list_one, &r, msg);
}

struct move_arg {
	char pin[128];
	char bind_src[WORKSPACE_PATH_MAX];
};

static int
edit_move(struct jv *spec, void *arg, char msg[DOCKER_MSG_LEN])
{
	struct move_arg *m = arg;

	if (swarm_spec_set_constraint(spec, SWD_NODE_PREFIX, m->pin) < 0 ||
	    swarm_spec_set_bind(spec, "/home/sandbox", m->bind_src) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "the service has no workspace");
		return -1;
	}
	return 0;
}

int
swd_move(struct orch *o, const char *name, const char *node,
         char msg[DOCKER_MSG_LEN])
{
	struct swarm_service_state st;
	struct move_arg m;
	char bind[WORKSPACE_PATH_MAX + 64];
	struct jv *spec = NULL;
	const char *id;
	int rc;

	rc = swarm_service_inspect(o->docker, name, &st, &spec, msg);
	if (rc != DOCKER_OK)
		return rc;
	id = jv_str(jv_get(jv_get(spec, "Labels"), "sandboxd.sandbox"));
	rc = id ? swd_bind_for(o, node, id, bind, sizeof(bind), msg)
	        : DOCKER_ERROR;
	jv_free(spec);
	if (rc != DOCKER_OK)
		return rc;
	bind[strcspn(bind, ":")] = '\0';
	snprintf(m.bind_src, sizeof(m.bind_src), "%s", bind);
	snprintf(m.pin, sizeof(m.pin), SWD_NODE_PREFIX "%s",
	         node[0] ? node : swd_of(o)->self_name);
	return swarm_service_update(o->docker, name, edit_move, &m, msg);
}

/*
 * Agents name a sandbox "sbx-<id>" (nodelink.h's ops, the id as the
 * label sandboxd.sandbox has it); this daemon's services are named as
 * its containers, "sandboxd-<instance>-<id in lower case>".
 */
void
swd_agent_name(struct orch *o, const char *in, char out[80])
{
	char prefix[64], name[80];
	size_t n = (size_t)snprintf(prefix, sizeof(prefix), "sandboxd-%s-",
	                            o->instance);

	snprintf(name, sizeof(name), "%s", in); /* may be out */
	if (strncmp(name, prefix, n) != 0) {
		snprintf(out, 80, "%s", name);
		return;
	}
	n = (size_t)snprintf(out, 80, "sbx-%s", name + n);
	for (size_t i = 4; i < n && i < 80; i++)
		out[i] = (char)toupper((unsigned char)out[i]);
}

void
swd_service_name(struct orch *o, const char *in, char out[80])
{
	char agent_name[80];
	size_t n;

	snprintf(agent_name, sizeof(agent_name), "%s", in); /* may be out */
	if (strncmp(agent_name, "sbx-", 4) != 0) {
		snprintf(out, 80, "%s", agent_name);
		return;
	}
	n = (size_t)snprintf(out, 80, "sandboxd-%s-", o->instance);
	snprintf(out + (n < 80 ? n : 79), 80 - (n < 80 ? n : 79), "%s",
	         agent_name + 4);
	for (size_t i = n; i < 80 && out[i]; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
}
