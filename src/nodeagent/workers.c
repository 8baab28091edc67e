/*
 * The agent's worker threads: every stream that needs a thread of its
 * own (a tar, an image load, events, a proxy relay) is one, detached
 * and counted, at most AGENT_STREAM_THREADS at once; the agent waits
 * for the count to drop at stop.  And the credentials they dial the
 * control plane with, which a renewal replaces.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nodeagent/internal.h"

int
agent_spawn(struct agent *a, void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_t t;
	int rc;

	if (atomic_fetch_add(&a->workers, 1) >= AGENT_STREAM_THREADS) {
		atomic_fetch_sub(&a->workers, 1);
		return -1;
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &at, fn, arg);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		atomic_fetch_sub(&a->workers, 1);
		return -1;
	}
	return 0;
}

void
agent_worker_done(struct agent *a)
{
	atomic_fetch_sub(&a->workers, 1);
}

int
agent_stream_start(struct agent *a, void *(*fn)(void *), void *job, int *job_fd,
                   int *fd, struct err *e)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ERR_INTERNAL(e, "socketpair: %s", strerror(errno));
	*job_fd = sv[0];
	if (agent_spawn(a, fn, job) < 0) {
		close(sv[0]);
		close(sv[1]);
		return err_set(e, 429, "rate_limited",
		               "the node agent has as many streams as it may");
	}
	*fd = sv[1];
	return 0;
}

/* The credentials now: a renewal replaces them (agent.c). */
struct nodelink *
agent_nl(struct agent *a)
{
	struct nodelink *nl;

	pthread_mutex_lock(&a->mu);
	nl = a->nl;
	pthread_mutex_unlock(&a->mu);
	return nl;
}
