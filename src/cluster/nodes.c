/*
 * Heartbeats and a node that goes down, and the proxy op.
 *
 * One thread asks every enrolled node's agent for its facts each
 * SANDBOXD_NODE_HEARTBEAT_MS (nl_call "facts", the beat's own deadline)
 * and records the answer (store_node_seen: memory and disk for the
 * reaper, the placement and GET /v1/nodes).  cluster_node_next decides
 * the status: CLUSTER_MISSES_DOWN unanswered beats in a row, or Swarm
 * saying the node is down, make it "down", and every sandbox on it
 * "stopped" with status_reason "node_down" (the edge then answers with
 * the node-down page, not the warming one, and a wake is refused).  A
 * node that answers again is "ready"; its sandboxes stay stopped (their
 * services scaled to 0 there: a container that ran on while only the
 * agent was gone is stopped), their reason plain "stopped", so the next
 * request wakes them there.  The disk label sandboxd.disk=full is set
 * at CLUSTER_DISK_FULL_PCT used and removed below it.
 *
 * The beats are made one node after the other: a node that does not
 * answer costs its deadline, capped to the period, so a beat of N nodes
 * takes at most N periods when all are silent.  Rejected: a thread per
 * node (64 threads for a rare case).
 *
 * The proxy op: an agent relays a sandbox's connection to the
 * credential proxy; the CP joins it to the proxy's unix listener
 * <data>/run/proxy-relay.sock, where the per-sandbox proxy token
 * authorises each call as on one host.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cluster/internal.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "nodelink/nodelink.h"
#include "orch/orch.h"
#include "sbnet/sbnet.h"

#define CLUSTER_DISK_FULL_PCT 90 /* a node's disk used: no new sandbox */
#define CLUSTER_PROXY_SOCK    "run/proxy-relay.sock"

/* The host of "host:port" ("[v6]:port") when it is an address. */
static bool
addr_host(const char *hostport, char out[64])
{
	unsigned char bin[16];
	const char *end;
	size_t n;

	if (hostport[0] == '[') {
		hostport++;
		end = strchr(hostport, ']');
	} else {
		end = strrchr(hostport, ':');
	}
	n = end ? (size_t)(end - hostport) : strlen(hostport);
	if (n == 0 || n >= 64)
		return false;
	memcpy(out, hostport, n);
	out[n] = '\0';
	return inet_pton(AF_INET, out, bin) == 1 ||
	       inet_pton(AF_INET6, out, bin) == 1;
}

struct addrs {
	struct jv *arr;
	size_t n;
};

static void
addr_one(const struct node_row *n, void *arg)
{
	struct addrs *a = arg;
	char host[64];

	if (a->n < CLUSTER_NODES_MAX && addr_host(n->addr, host)) {
		jv_push(a->arr, jv_new_str(host));
		a->n++;
	}
}

struct jv *
cluster_addr_list(struct cluster *cl)
{
	struct addrs a = {.arr = jv_arr()};
	char host[64];

	if (addr_host(cl->addr, host))
		jv_push(a.arr, jv_new_str(host));
	store_node_list(cl->c->store, addr_one, &a);
	return a.arr;
}

/* The control plane's own sandboxes refused the same addresses. */
static void
cluster_set_local(struct cluster *cl, const struct jv *list)
{
	const char *p[CLUSTER_NODES_MAX + 2];
	char why[256];
	size_t n = 0;

	for (size_t i = 0; i < jv_len(list) && n < CLUSTER_NODES_MAX + 1; i++)
		p[n++] = jv_str(jv_at(list, i));
	p[n] = NULL;
	if (sbnet_set_cluster(cl->c->net, p, why, sizeof(why)) < 0)
		log_warn("egress: the cluster's addresses: %s", why);
}

int
cluster_facts(struct cluster *cl, const struct node_row *n, struct jv **facts,
              struct err *e)
{
	struct jv *req = jv_obj();
	int64_t ms = cl->c->cfg->node_heartbeat_ms;
	int rc;

	jv_set_str(req, "op", "facts");
	/* Every beat tells the agent the cluster's addresses (its egress
	 * cluster set; it changes its rules only when they changed). */
	jv_set(req, "cluster", cluster_addr_list(cl));
	rc = nl_call(cl->nl, n->addr, NL_ROLE_NODE, req, facts,
	             (int)(ms < NL_CALL_MS ? ms : NL_CALL_MS), e);
	jv_free(req);
	return rc;
}

/* Every sandbox of node stopped with reason node_down (row and route). */
struct sb_ids {
	char id[CLUSTER_SANDBOXES_MAX][ULID_LEN + 1];
	size_t n;
};

static void
sb_id(const struct sandbox *sb, void *arg)
{
	struct sb_ids *l = arg;

	if (l->n < sizeof(l->id) / sizeof(l->id[0]))
		snprintf(l->id[l->n++], ULID_LEN + 1, "%s", sb->id);
}

void
cluster_node_went_down(struct cluster *cl, const char *node)
{
	struct core *c = cl->c;
	struct sb_ids *l = calloc(1, sizeof(*l));
	struct sandbox sb;

	if (l == NULL || store_sandboxes_on_node(c->store, node, sb_id, l)) {
		free(l);
		return;
	}
	for (size_t i = 0; i < l->n; i++) {
		core_sandbox_lock(c, l->id[i]);
		if (store_sandbox_get(c->store, l->id[i], &sb) == 0 &&
		    (sb.status == SANDBOX_RUNNING ||
		     sb.status == SANDBOX_STOPPED) &&
		    strcmp(sb.node, node) == 0) {
			sb.status = SANDBOX_STOPPED;
			snprintf(sb.status_reason, sizeof(sb.status_reason),
			         "node_down");
			sb.frozen = false;
			sb.container_ip[0] = '\0';
			if (sb.stopped_at == 0)
				sb.stopped_at = clock_now();
			if (store_sandbox_update(c->store, &sb) == 0)
				core_route_refresh(c, sb.id);
		}
		core_sandbox_unlock(c, l->id[i]);
	}
	log_warn("node %s is down: %zu sandbox(es) marked node_down", node,
	         l->n);
	free(l);
}

/* Back: the services of its node_down sandboxes scaled to 0 there. */
static void
node_came_back(struct cluster *cl, const char *node)
{
	struct core *c = cl->c;
	struct sb_ids *l = calloc(1, sizeof(*l));
	char name[128], msg[DOCKER_MSG_LEN];
	struct sandbox sb;

	if (l == NULL || store_sandboxes_on_node(c->store, node, sb_id, l)) {
		free(l);
		return;
	}
	/*
	 * Under each sandbox's lock, and only while it is still stopped for
	 * node_down: a start that came first (the API, a wake) wins, and
	 * is never undone by this scale to 0.
	 */
	for (size_t i = 0; i < l->n && !atomic_load(&cl->stop); i++) {
		core_sandbox_lock(c, l->id[i]);
		if (store_sandbox_get(c->store, l->id[i], &sb) == 0 &&
		    sb.status == SANDBOX_STOPPED &&
		    strcmp(sb.status_reason, "node_down") == 0 &&
		    strcmp(sb.node, node) == 0) {
			core_container_name(c, sb.id, name, sizeof(name));
			if (orch_stop(c->orch, name, 0, msg) != DOCKER_OK)
				log_warn("sandbox %s on %s: %s", sb.id, node,
				         msg);
			/* Plain stopped now: a wake starts it there again. */
			snprintf(sb.status_reason, sizeof(sb.status_reason),
			         "stopped");
			if (store_sandbox_update(c->store, &sb) == 0)
				core_route_refresh(c, sb.id);
		}
		core_sandbox_unlock(c, l->id[i]);
	}
	log_info("node %s answers again; its sandboxes stay stopped", node);
	free(l);
}

/* sandboxd.disk=full set or removed with the reported figures. */
static void
disk_label(struct cluster *cl, const struct node_row *n, const struct jv *f)
{
	int64_t total = jv_int(jv_get(f, "disk_total"));
	int64_t avail = jv_int(jv_get(f, "disk_free"));
	char msg[DOCKER_MSG_LEN];
	bool full;

	if (total <= 0 || n->swarm_id[0] == '\0')
		return;
	full = (total - avail) * 100 >= total * CLUSTER_DISK_FULL_PCT;
	if (cluster_swarm_label(cl, n->swarm_id, "sandboxd.disk",
	                        full ? "full" : NULL, msg) != DOCKER_OK)
		log_warn("node %s: disk label: %s", n->name, msg);
}

/* One node's beat: its status after it. */
static void
beat_one(struct cluster *cl, const struct node_row *n)
{
	struct jv *f = NULL;
	struct err e = {0};
	char state[16] = "", msg[DOCKER_MSG_LEN];
	struct cluster_live *lv;
	const char *why;
	char next[16];
	int misses = 0;
	bool answered = cluster_facts(cl, n, &f, &e) == 0;

	if (answered) {
		store_node_seen(cl->c->store, n->name, clock_now(),
		                jv_int(jv_get(f, "mem_available")),
		                jv_int(jv_get(f, "disk_free")));
		disk_label(cl, n, f);
	}
	jv_free(f);
	if (n->swarm_id[0])
		cluster_swarm_state(cl, n->swarm_id, state, msg);
	pthread_mutex_lock(&cl->mu);
	if ((lv = cluster_live_get(cl, n->name)) != NULL) {
		lv->misses = answered ? 0 : lv->misses + 1;
		misses = lv->misses;
	}
	pthread_mutex_unlock(&cl->mu);
	snprintf(next, sizeof(next), "%s",
	         cluster_node_next(n->status, misses, state));
	if (strcmp(next, n->status) == 0)
		return;
	if (strcmp(next, "down") != 0)
		why = "it answers";
	else if (strcmp(state, "down") == 0)
		why = "Swarm says it is down";
	else
		why = e.msg;
	log_info("node %s: %s -> %s (%s)", n->name, n->status, next, why);
	store_node_set_status(cl->c->store, n->name, next);
	if (strcmp(next, "down") == 0)
		cluster_node_went_down(cl, n->name);
	else if (strcmp(n->status, "down") == 0)
		node_came_back(cl, n->name);
}

struct beat_rows {
	struct node_row r[CLUSTER_NODES_MAX];
	size_t n;
};

static void
beat_row(const struct node_row *n, void *arg)
{
	struct beat_rows *l = arg;

	if (l->n < CLUSTER_NODES_MAX)
		l->r[l->n++] = *n;
}

static void *
heartbeat_thread(void *arg)
{
	struct cluster *cl = arg;
	struct beat_rows *l = malloc(sizeof(*l));

	while (l && cluster_nap(cl, cl->c->cfg->node_heartbeat_ms)) {
		struct jv *list = cluster_addr_list(cl);

		cluster_set_local(cl, list);
		jv_free(list);
		l->n = 0;
		if (store_node_list(cl->c->store, beat_row, l) != 0)
			continue;
		for (size_t i = 0; i < l->n && !atomic_load(&cl->stop); i++)
			if (strcmp(l->r[i].status, "joining") != 0)
				beat_one(cl, &l->r[i]);
	}
	free(l);
	return NULL;
}

int
cluster_heartbeat_start(struct cluster *cl)
{
	if (pthread_create(&cl->hb, NULL, heartbeat_thread, cl) != 0)
		return -1;
	cl->hb_started = true;
	return 0;
}

void
cluster_heartbeat_stop(struct cluster *cl)
{
	if (!cl->hb_started)
		return;
	atomic_store(&cl->stop, true);
	pthread_mutex_lock(&cl->mu);
	pthread_cond_broadcast(&cl->cv);
	pthread_mutex_unlock(&cl->mu);
	pthread_join(cl->hb, NULL);
	cl->hb_started = false;
}

int
cluster_op_proxy(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, int *fd, struct err *e)
{
	struct cluster *cl = arg;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct in_addr ia;
	const char *ip = jv_str(jv_get(req, "ip"));
	char line[PROXY_RELAY_LINE_MAX];
	int s, n;

	(void)ans;
	/* The line names the node by its certificate, never by what the
	 * agent says: a node can speak only for its own sandboxes. */
	if (ip == NULL || inet_pton(AF_INET, ip, &ia) != 1)
		return err_set(e, 400, "invalid_request",
		               "proxy: ip must be the sandbox's IPv4 address");
	n = snprintf(line, sizeof(line), "SBXPEER %s %s\n", p->name, ip);
	if (n <= 0 || (size_t)n >= sizeof(line))
		return err_set(e, 400, "invalid_request", "proxy: bad peer");
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s",
	                     cl->c->cfg->data_dir,
	                     CLUSTER_PROXY_SOCK) >= sizeof(sa.sun_path))
		return ERR_INTERNAL(e, "the proxy's socket path is too long");
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (s >= 0)
			close(s);
		log_warn("node %s: the credential proxy's relay socket: %s",
		         p->name, strerror(errno));
		return err_set(e, 503, "network_unavailable",
		               "the credential proxy is not listening");
	}
	if (fileio_send_all(s, line, (size_t)n) < 0) {
		close(s);
		return err_set(e, 503, "network_unavailable",
		               "the credential proxy closed its relay socket");
	}
	*fd = s;
	return 0;
}
