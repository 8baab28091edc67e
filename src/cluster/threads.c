/*
 * What the cluster's files share: the tables of heartbeat figures and
 * drain jobs (under cl->mu), the detached threads cluster_stop waits
 * for, and a nap that ends when the cluster stops.  A leaf: it calls
 * none of cluster/'s other files.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cluster/internal.h"
#include "orch/orch.h"

struct cluster_live *
cluster_live_get(struct cluster *cl, const char *node)
{
	struct cluster_live *free_slot = NULL;

	for (size_t i = 0; i < CLUSTER_NODES_MAX; i++) {
		if (strcmp(cl->live[i].name, node) == 0)
			return &cl->live[i];
		if (free_slot == NULL && cl->live[i].name[0] == '\0')
			free_slot = &cl->live[i];
	}
	if (free_slot)
		snprintf(free_slot->name, sizeof(free_slot->name), "%s", node);
	return free_slot;
}

struct cluster_job *
cluster_job_get(struct cluster *cl, const char *node, bool make)
{
	struct cluster_job *free_slot = NULL;

	for (size_t i = 0; i < CLUSTER_NODES_MAX; i++) {
		if (strcmp(cl->jobs[i].node, node) == 0)
			return &cl->jobs[i];
		if (free_slot == NULL && cl->jobs[i].node[0] == '\0')
			free_slot = &cl->jobs[i];
	}
	if (!make)
		return NULL;
	if (free_slot)
		snprintf(free_slot->node, sizeof(free_slot->node), "%s", node);
	return free_slot;
}

int
cluster_thread(struct cluster *cl, void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_t t;
	int rc;

	pthread_mutex_lock(&cl->mu);
	cl->threads++;
	pthread_mutex_unlock(&cl->mu);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &at, fn, arg);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		cluster_thread_done(cl);
		return -1;
	}
	return 0;
}

void
cluster_thread_done(struct cluster *cl)
{
	pthread_mutex_lock(&cl->mu);
	cl->threads--;
	pthread_cond_broadcast(&cl->cv);
	pthread_mutex_unlock(&cl->mu);
}

bool
cluster_nap(struct cluster *cl, int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&cl->mu);
	while (!atomic_load(&cl->stop) &&
	       pthread_cond_timedwait(&cl->cv, &cl->mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&cl->mu);
	return !atomic_load(&cl->stop);
}

int
cluster_repin(struct cluster *cl, const char *sandbox_id, const char *node,
              char msg[DOCKER_MSG_LEN])
{
	struct orch_state st;
	char name[128], imsg[DOCKER_MSG_LEN];
	int rc;

	core_container_name(cl->c, sandbox_id, name, sizeof(name));
	rc = orch_move(cl->c->orch, name, node, msg);
	/* No service at all (an error, or one removed meanwhile): the row
	 * alone moves, and its next start makes the service there. */
	if (rc != DOCKER_OK &&
	    orch_inspect(cl->c->orch, name, &st, imsg) == DOCKER_NOT_FOUND)
		return DOCKER_OK;
	return rc;
}
