/*
 * The swarm driver's events and nodes.
 *
 * Events: Swarm's manager reports no container events of other nodes
 * (and 20.10 no task events at all), so orch_events merges the local
 * engine's container events (the manager's own tasks carry the
 * sandboxd.* labels) with each remote node's agent "events" stream, a
 * reader thread per enrolled node (the store's nodes read again every
 * SWD_RESCAN_MS; a broken stream is dialled again).  Callbacks are
 * serialised, so the caller sees one event at a time as with docker.
 *
 * A task's container that dies (by itself: an exit, an OOM kill) leaves
 * its service at 1 replica with a dead slot; the next reconcile of the
 * service (any update, a manager restart) would make a new task behind
 * the daemon's back.  So before a die goes on, the service is set to 0
 * replicas, unless a newer task than the dead container's already runs
 * (a start that raced the event).
 *
 * Nodes: GET /nodes, the store's row (the agent's address), and the
 * memory reserved by running sandbox tasks, summed per node.
 */
#include "orch/orch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/num.h"
#include "nodelink/nodelink.h"
#include "orch/swarmdrv.h"

#define SWD_EVENT_LINE   4096
#define SWD_RESCAN_MS    5000
#define SWD_RECONNECT_MS 2000
#define SWD_READERS      64

struct hub;

struct reader {
	struct hub *hub;
	char node[ORCH_NODE_LEN];
	char addr[128];
	pthread_t th;
	bool started;
};

struct hub {
	struct orch *o;
	void (*fn)(const struct orch_event *, void *);
	void *arg;
	pthread_mutex_t mu; /* fn's calls */
	atomic_bool stop;   /* ours: the local stream ended */
	const atomic_bool *outer;
	struct reader readers[SWD_READERS];
	size_t nreaders;
	pthread_t scanner;
};

static bool
stopping(const struct hub *h)
{
	return atomic_load(&h->stop) || atomic_load(h->outer);
}

static void
nap(int ms)
{
	poll(NULL, 0, ms);
}

static int
edit_zero(struct jv *spec, void *arg, char msg[DOCKER_MSG_LEN])
{
	(void)arg;
	(void)msg;
	return swarm_spec_set_replicas(spec, 0, false);
}

/* cid: the dead container's id ("" unknown). */
static void
scale_down_dead(struct orch *o, const char *name, const char *cid)
{
	char msg[DOCKER_MSG_LEN];
	struct swarm_service_state st;
	struct swd_where w;

	if (swarm_service_inspect(o->docker, name, &st, NULL, msg) !=
	        DOCKER_OK ||
	    st.replicas == 0)
		return;
	if (swd_where(o, name, &w, msg) == DOCKER_OK && w.has_task &&
	    w.task.container_id[0] && cid[0] &&
	    strncmp(w.task.container_id, cid, strlen(cid)) != 0 &&
	    swarm_task_phase(&w.task) != SWARM_FAILED)
		return; /* a newer task: the die is an old one's */
	if (swarm_service_update(o->docker, name, edit_zero, NULL, msg) !=
	    DOCKER_OK)
		log_warn("swarm: %s died; setting it to 0 replicas: %s", name,
		         msg);
}

static const char *const actions[] = {"start", "die",     "oom",
                                      "pause", "unpause", "destroy"};

static void
deliver(struct hub *h, const char *name, const char *action, int exit_code,
        const char *node, const char *cid)
{
	struct orch_event ev = {0};
	bool known = false;

	for (size_t i = 0; i < sizeof(actions) / sizeof(*actions); i++)
		known = known || strcmp(action, actions[i]) == 0;
	if (!known || name[0] == '\0')
		return;
	/* "<service>.<slot>.<task>": the service's name */
	snprintf(ev.name, sizeof(ev.name), "%.*s", (int)strcspn(name, "."),
	         name);
	snprintf(ev.action, sizeof(ev.action), "%s", action);
	snprintf(ev.node, sizeof(ev.node), "%s", node);
	ev.exit_code = exit_code;
	if (strcmp(action, "die") == 0)
		scale_down_dead(h->o, ev.name, cid);
	pthread_mutex_lock(&h->mu);
	h->fn(&ev, h->arg);
	pthread_mutex_unlock(&h->mu);
}

static void
on_local(const struct jv *ev, void *arg)
{
	struct jv *attrs = jv_get(jv_get(ev, "Actor"), "Attributes");
	const char *action = jv_str(jv_get(ev, "Action"));
	const char *svc =
	    jv_str(jv_get(attrs, "com.docker.swarm.service.name"));
	const char *id = jv_str(jv_get(jv_get(ev, "Actor"), "ID"));

	if (action == NULL || svc == NULL ||
	    jv_str(jv_get(attrs, "sandboxd.sandbox")) == NULL)
		return;
	deliver(arg, svc, action,
	        (int)num_long(jv_str(jv_get(attrs, "exitCode")), -1), "",
	        id ? id : "");
}

/* One agent line: {name, action, exit_code[, id]}. */
static void
on_remote_line(struct reader *r, const char *line, size_t len)
{
	char err[64], svc[80];
	struct jv *v = jv_parse(line, len, 4, err, sizeof(err));
	const char *name = jv_str(jv_get(v, "name"));
	const char *action = jv_str(jv_get(v, "action"));
	const char *id = jv_str(jv_get(v, "id"));

	if (name && action && strlen(name) < 80) {
		swd_service_name(r->hub->o, name, svc);
		deliver(r->hub, svc, action,
		        (int)jv_int(jv_get(v, "exit_code")), r->node,
		        id ? id : "");
	}
	jv_free(v);
}

/* Reads one stream until it ends or the hub stops. */
static void
read_stream(struct reader *r, int fd)
{
	char buf[SWD_EVENT_LINE];
	size_t used = 0;

	while (!stopping(r->hub)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		char *nl;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = recv(fd, buf + used, sizeof(buf) - used, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		used += (size_t)n;
		while ((nl = memchr(buf, '\n', used)) != NULL) {
			size_t len = (size_t)(nl - buf);
			on_remote_line(r, buf, len);
			memmove(buf, nl + 1, used - len - 1);
			used -= len + 1;
		}
		if (used == sizeof(buf))
			used = 0; /* a line longer than any event: dropped */
	}
}

static void *
reader_main(void *arg)
{
	struct reader *r = arg;

	while (!stopping(r->hub)) {
		struct jv *req = jv_obj();
		struct err e = {0};
		int fd = -1;

		jv_set_str(req, "op", "events");
		if (nl_stream(r->hub->o->nl, r->addr, NL_ROLE_NODE, req, NULL,
		              &fd, &e) == 0) {
			read_stream(r, fd);
			close(fd);
		}
		jv_free(req);
		for (int i = 0; i < SWD_RECONNECT_MS / 100 && !stopping(r->hub);
		     i++)
			nap(100);
	}
	return NULL;
}

static void
scan_node(const struct node_row *n, void *arg)
{
	struct hub *h = arg;
	struct reader *r;

	if (n->addr[0] == '\0' || h->nreaders >= SWD_READERS)
		return;
	for (size_t i = 0; i < h->nreaders; i++)
		if (strcmp(h->readers[i].node, n->name) == 0)
			return;
	r = &h->readers[h->nreaders];
	r->hub = h;
	snprintf(r->node, sizeof(r->node), "%s", n->name);
	snprintf(r->addr, sizeof(r->addr), "%s", n->addr);
	r->started = pthread_create(&r->th, NULL, reader_main, r) == 0;
	if (r->started)
		h->nreaders++;
}

static void *
scanner_main(void *arg)
{
	struct hub *h = arg;

	while (!stopping(h)) {
		if (h->o->nl)
			store_node_list(h->o->store, scan_node, h);
		for (int i = 0; i < SWD_RESCAN_MS / 100 && !stopping(h); i++)
			nap(100);
	}
	return NULL;
}

int
swd_events(struct orch *o, const char *label, const char *value, int64_t since,
           void (*fn)(const struct orch_event *, void *), void *arg,
           const atomic_bool *stop)
{
	struct hub *h = calloc(1, sizeof(*h));
	bool scanning;
	int rc;

	if (h == NULL)
		return DOCKER_ERROR;
	h->o = o;
	h->fn = fn;
	h->arg = arg;
	h->outer = stop;
	pthread_mutex_init(&h->mu, NULL);
	scanning = pthread_create(&h->scanner, NULL, scanner_main, h) == 0;
	rc = docker_events(o->docker, label, value, since, on_local, h, stop);
	atomic_store(&h->stop, true);
	if (scanning)
		pthread_join(h->scanner, NULL);
	for (size_t i = 0; i < h->nreaders; i++)
		pthread_join(h->readers[i].th, NULL);
	pthread_mutex_destroy(&h->mu);
	free(h);
	return rc;
}

/* Nodes. */
#define SWD_MAX_NODES 128

struct node_list {
	struct orch_node n[SWD_MAX_NODES];
	char id[SWD_MAX_NODES][64];
	size_t count;
	const char *self_id;
};

static void
node_one(const struct swarm_node *sn, void *arg)
{
	struct node_list *l = arg;
	struct orch_node *n;

	if (l->count >= SWD_MAX_NODES)
		return;
	n = &l->n[l->count];
	memset(n, 0, sizeof(*n));
	snprintf(l->id[l->count], 64, "%s", sn->id);
	snprintf(n->name, sizeof(n->name), "%s",
	         sn->name[0] ? sn->name : sn->hostname);
	snprintf(n->swarm_id, sizeof(n->swarm_id), "%s", sn->id);
	snprintf(n->state, sizeof(n->state), "%s", sn->state);
	snprintf(n->availability, sizeof(n->availability), "%s",
	         sn->drain ? "drain" : sn->availability);
	n->manager = strcmp(sn->id, l->self_id) == 0;
	n->mem_bytes = sn->mem_bytes;
	l->count++;
}

static void
reserve_one(const char *node_id, int64_t reserve, void *arg)
{
	struct node_list *l = arg;

	for (size_t i = 0; i < l->count; i++)
		if (strcmp(l->id[i], node_id) == 0) {
			l->n[i].reserved_bytes += reserve;
			l->n[i].tasks++;
		}
}

int
swd_nodes(struct orch *o, void (*fn)(const struct orch_node *, void *),
          void *arg, char msg[DOCKER_MSG_LEN])
{
	struct node_list *l = calloc(1, sizeof(*l));
	struct node_row row;
	int rc;

	if (l == NULL)
		return DOCKER_ERROR;
	l->self_id = swd_of(o)->self_id;
	rc = swarm_nodes(o->docker, node_one, l, msg);
	if (rc == DOCKER_OK)
		rc = swarm_task_reservations(o->docker, reserve_one, l, msg);
	for (size_t i = 0; rc == DOCKER_OK && i < l->count; i++) {
		if (!l->n[i].manager &&
		    store_node_get(o->store, l->n[i].name, &row) == 0)
			snprintf(l->n[i].addr, sizeof(l->n[i].addr), "%s",
			         row.addr);
		fn(&l->n[i], arg);
	}
	free(l);
	return rc;
}
