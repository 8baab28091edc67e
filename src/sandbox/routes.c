/*
 * The routing table: a chained hash of sandbox id to struct route behind
 * one rwlock.  The edge's loop reads it for every new app connection, so
 * a read is a hash, a short chain walk and a copy of a few hundred bytes
 * under the read lock; writes (a create, start, stop, delete, an exit
 * seen by the watcher, a reconcile) are rare and as short.  Unknown ids
 * cost the same lookup and find nothing: no store call, whatever the
 * host name says.
 *
 * Rejected: reading the store on the loop (what preview.c did): every
 * store call waits behind the store's one mutex, so a slow write
 * elsewhere stalled every preview; and a fixed array with probing like
 * activity.c (lib/idtab.h): the table must hold every sandbox, not the
 * recent ones, and a deleted sandbox's route leaves it.
 */
#include "sandbox/routes.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"

struct route_node {
	struct route r;
	struct route_node *next;
};

struct routes {
	pthread_rwlock_t mu;
	size_t count;
	struct route_node *b[ROUTES_BUCKETS];
};

struct routes *
routes_new(void)
{
	struct routes *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if (pthread_rwlock_init(&r->mu, NULL) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

void
routes_free(struct routes *r)
{
	struct route_node *n, *next;

	if (r == NULL)
		return;
	for (size_t i = 0; i < ROUTES_BUCKETS; i++)
		for (n = r->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	pthread_rwlock_destroy(&r->mu);
	free(r);
}

/* The node of id in its chain, or NULL; called with r->mu held. */
static struct route_node **
find(struct routes *r, const char *id)
{
	struct route_node **p = &r->b[hash_fnv1a(id) % ROUTES_BUCKETS];

	while (*p && strcmp((*p)->r.id, id) != 0)
		p = &(*p)->next;
	return p;
}

/* The route a row gives; rt holds the route before when had is true. */
static void
route_from(struct route *rt, const struct sandbox *sb, bool had)
{
	bool was_running = had && rt->state == SANDBOX_RUNNING;
	int64_t started_at = rt->started_at;
	bool no_web = had && rt->no_web;
	char workers[sizeof(rt->workers)] = "";

	/* The manifest's part is not the row's: it stays. */
	if (no_web)
		memcpy(workers, rt->workers, sizeof(workers));
	memset(rt, 0, sizeof(*rt));
	rt->no_web = no_web;
	memcpy(rt->workers, workers, sizeof(workers));
	snprintf(rt->id, sizeof(rt->id), "%s", sb->id);
	snprintf(rt->app_id, sizeof(rt->app_id), "%s", sb->app_id);
	rt->state = sb->status;
	rt->frozen = sb->status == SANDBOX_RUNNING && sb->frozen;
	rt->has_addr = sb->container_ip[0] &&
	               inet_pton(AF_INET, sb->container_ip, &rt->addr) == 1;
	rt->nports = sb->nports < API_MAX_PORTS ? sb->nports : API_MAX_PORTS;
	memcpy(rt->ports, sb->ports, sizeof(int) * (size_t)rt->nports);
	/* A row updated while it runs (an OOM mark) did not start again. */
	if (was_running && sb->status == SANDBOX_RUNNING)
		rt->started_at = started_at;
	else
		rt->started_at = sb->updated_at;
	if (sb->status == SANDBOX_ERROR)
		snprintf(rt->error, sizeof(rt->error), "%s", sb->error_message);
	snprintf(rt->node, sizeof(rt->node), "%s", sb->node);
	rt->node_down = strcmp(sb->status_reason, "node_down") == 0;
}

int
routes_put(struct routes *r, const struct sandbox *sb)
{
	struct route_node *fresh = malloc(sizeof(*fresh)), **p;
	int rc = 0;

	pthread_rwlock_wrlock(&r->mu);
	p = find(r, sb->id);
	if (*p) {
		route_from(&(*p)->r, sb, true);
	} else if (fresh) {
		route_from(&fresh->r, sb, false);
		fresh->next = NULL;
		*p = fresh;
		fresh = NULL;
		r->count++;
	} else {
		rc = -1; /* no memory for a new route */
	}
	pthread_rwlock_unlock(&r->mu);
	free(fresh); /* not needed: the sandbox had a route */
	return rc;
}

void
routes_set_procs(struct routes *r, const char *id, bool has_web,
                 const char *workers)
{
	struct route_node **p;

	pthread_rwlock_wrlock(&r->mu);
	p = find(r, id);
	if (*p) {
		(*p)->r.no_web = !has_web;
		snprintf((*p)->r.workers, sizeof((*p)->r.workers), "%s",
		         has_web ? "" : workers);
	}
	pthread_rwlock_unlock(&r->mu);
}

void
routes_drop(struct routes *r, const char *id)
{
	struct route_node **p, *gone = NULL;

	pthread_rwlock_wrlock(&r->mu);
	p = find(r, id);
	if (*p) {
		gone = *p;
		*p = gone->next;
		r->count--;
	}
	pthread_rwlock_unlock(&r->mu);
	free(gone);
}

bool
routes_get(struct routes *r, const char *id, struct route *out)
{
	struct route_node **p;
	bool found;

	pthread_rwlock_rdlock(&r->mu);
	p = find(r, id);
	found = *p != NULL;
	if (found)
		*out = (*p)->r;
	pthread_rwlock_unlock(&r->mu);
	return found;
}

size_t
routes_count(struct routes *r)
{
	size_t n;

	pthread_rwlock_rdlock(&r->mu);
	n = r->count;
	pthread_rwlock_unlock(&r->mu);
	return n;
}

static int
load_one(const struct sandbox *sb, void *arg)
{
	return routes_put(arg, sb);
}

int
routes_load(struct routes *r, struct store *s)
{
	return store_sandbox_list(s, load_one, r) < 0 ? -1 : 0;
}
