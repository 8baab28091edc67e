/*
 * What the cluster asks of Swarm, over docker/swarm.h on the manager's
 * engine: node labels and availability, this engine's swarm facts (its
 * node id, whether it is a manager, the worker join token and the
 * manager's address), a node's state, and the image's `docker save`.
 */
#include <stdio.h>
#include <string.h>

#include "cluster/internal.h"
#include "docker/swarm.h"

#define SWARM_MANAGER_PORT 2377 /* Swarm's own, as `swarm init` sets it */

int
cluster_swarm_label(struct cluster *cl, const char *swarm_id, const char *key,
                    const char *value, char msg[DOCKER_MSG_LEN])
{
	if (swarm_id == NULL || swarm_id[0] == '\0') {
		snprintf(msg, DOCKER_MSG_LEN, "the node has no swarm id yet");
		return DOCKER_NOT_FOUND;
	}
	return swarm_node_update(cl->c->docker, swarm_id, key, value, NULL,
	                         msg);
}

int
cluster_swarm_availability(struct cluster *cl, const char *swarm_id,
                           const char *availability, char msg[DOCKER_MSG_LEN])
{
	if (swarm_id == NULL || swarm_id[0] == '\0') {
		snprintf(msg, DOCKER_MSG_LEN, "the node has no swarm id yet");
		return DOCKER_NOT_FOUND;
	}
	return swarm_node_update(cl->c->docker, swarm_id, NULL, NULL,
	                         availability, msg);
}

int
cluster_swarm_info(struct cluster *cl, struct cluster_swarm_info *out,
                   char msg[DOCKER_MSG_LEN])
{
	struct swarm_info si;
	int rc = swarm_info(cl->c->docker, &si, msg);

	memset(out, 0, sizeof(*out));
	if (rc != DOCKER_OK)
		return rc;
	snprintf(out->node_id, sizeof(out->node_id), "%s", si.node_id);
	out->manager = si.manager && strcmp(si.state, "active") == 0;
	snprintf(out->worker_token, sizeof(out->worker_token), "%s",
	         si.worker_token);
	if (si.node_addr[0])
		snprintf(out->manager_addr, sizeof(out->manager_addr), "%s:%d",
		         si.node_addr, SWARM_MANAGER_PORT);
	return DOCKER_OK;
}

int
cluster_swarm_state(struct cluster *cl, const char *swarm_id, char state[16],
                    char msg[DOCKER_MSG_LEN])
{
	struct swarm_node n;
	int rc = swarm_node_inspect(cl->c->docker, swarm_id, &n, msg);

	state[0] = '\0';
	if (rc == DOCKER_NOT_FOUND)
		return DOCKER_OK;
	if (rc == DOCKER_OK)
		snprintf(state, 16, "%s", n.state);
	return rc;
}

int
cluster_image_save(struct cluster *cl, const char *image, int fd,
                   char msg[DOCKER_MSG_LEN])
{
	int64_t bytes = 0;

	return docker_image_save(cl->c->docker, image, fd, &bytes, msg);
}
