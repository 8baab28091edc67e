/*
 * Joining a node: the command the control plane prints, the enroll op
 * an agent sends with it, and the steps until the node takes sandboxes.
 *
 *   1. POST /v1/nodes/join-command makes a join token (nl_token_new: the
 *      CA's hash, which the agent pins, and a secret of which only the
 *      hash is stored, single use, CLUSTER_TOKEN_TTL_S) and prints
 *      "sandboxd node join --control ADDR --token T".
 *   2. enroll (the only op taken without a certificate): the token's pin
 *      is this CA's and its secret unused and unexpired, the name is
 *      free (or a node's that is down or never finished joining), the
 *      agent's public key is signed (role node, CN its name).  The answer
 *      carries the CA, the certificate, Swarm's worker join token (so it
 *      is never in a shell's history) and the sandbox network the node
 *      must make: the same name, subnet, gateway and bridge as here.
 *      The row is "joining".
 *   3. a thread waits until the agent answers facts with a swarm node
 *      id that Swarm lists (it joined), labels the node
 *      sandboxd.node=<name>, loads the sandbox image there when the
 *      agent lacks it (`docker save` here streamed into its image_load),
 *      then labels sandboxd.agent=1: the services' constraint, so Swarm
 *      places sandboxes there from then on.  The row is "ready".
 * A step that fails leaves the row "joining" (GET /v1/nodes shows the
 * error); the agent may enroll again with a new token.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster/internal.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "nodelink/nodelink.h"
#include "sbnet/sbnet.h"

#define CLUSTER_PUBKEY_MAX  8192 /* bytes of an agent's public key (PEM) */
#define CLUSTER_TRAILER_MAX 4096 /* bytes of a stream's trailer line */

int
cluster_join_command(struct cluster *cl, struct jv **out, struct err *e)
{
	char token[NL_TOKEN_LEN], hash[65], cmd[NL_TOKEN_LEN + 256];
	char at[CLOCK_RFC3339_LEN];
	int64_t expires = clock_now() + CLUSTER_TOKEN_TTL_S;

	if (nl_token_new(cl->dir, token, hash, e) < 0)
		return -1;
	if (store_join_token_add(cl->c->store, hash, expires) != 0)
		return ERR_INTERNAL(e, "database error");
	if (cluster_join_command_text(cl->addr, token, cmd, sizeof(cmd)) < 0)
		return ERR_INTERNAL(e, "the join command is too long");
	clock_rfc3339(expires, at);
	*out = jv_obj();
	jv_set_str(*out, "command", cmd);
	jv_set_str(*out, "token", token);
	jv_set_str(*out, "expires_at", at);
	return 0;
}

/* The network object of the answer: this host's, made alike there. */
static struct jv *
network_json(struct cluster *cl)
{
	struct sbnet_state st;
	struct jv *o = jv_obj();

	sbnet_state(cl->c->net, &st);
	jv_set_str(o, "name", st.name);
	jv_set_str(o, "subnet", st.subnet);
	jv_set_str(o, "gateway", st.gateway);
	jv_set_str(o, "bridge", st.bridge);
	jv_set_str(o, "instance", cl->c->instance);
	jv_set_int(o, "proxy_port", cl->c->cfg->proxy_port);
	jv_set(o, "cluster", cluster_addr_list(cl));
	return o;
}

/* The token: this CA's pin, its secret unused and unexpired (used now). */
static int
token_check(struct cluster *cl, const char *token, struct err *e)
{
	char pin[65], secret[65], mine[65];

	if (token == NULL || nl_token_parse(token, pin, secret, e) < 0 ||
	    nl_ca_hash(cl->dir, mine, e) < 0 || strcmp(pin, mine) != 0 ||
	    store_join_token_use(cl->c->store, secret, clock_now()) != 0)
		return err_set(e, 403, "join_token_invalid",
		               "the join token is unknown, used or expired; "
		               "print a new one with `sandboxd node "
		               "join-command`");
	return 0;
}

static void
count_one(const struct node_row *n, void *arg)
{
	(void)n;
	(*(int *)arg)++;
}

static int
node_count(struct cluster *cl)
{
	int n = 0;

	store_node_list(cl->c->store, count_one, &n);
	return n;
}

/* The name free: unknown, or a node that is down or never joined. */
static int
name_check(struct cluster *cl, const char *name, struct err *e)
{
	struct node_row n;
	int rc;

	if (name == NULL || !cluster_node_name_ok(name))
		return ERR_BAD(e, "a node's name is 1 to 63 of A-Z a-z 0-9 . _ "
		                  "- (SANDBOXD_NODE_NAME, else the hostname)");
	if (strcmp(name, cl->self) == 0)
		return ERR_CONFLICT(e, "%s is the manager's name", name);
	rc = store_node_get(cl->c->store, name, &n);
	if (rc == STORE_NOT_FOUND && node_count(cl) >= CLUSTER_NODES_MAX)
		return err_set(e, 409, "node_busy",
		               "the cluster has %d nodes, its most",
		               CLUSTER_NODES_MAX);
	if (rc == 0 && strcmp(n.status, "down") != 0 &&
	    strcmp(n.status, "joining") != 0)
		return ERR_CONFLICT(e, "a node named %s is enrolled and %s",
		                    name, n.status);
	return rc == 0 || rc == STORE_NOT_FOUND
	           ? 0
	           : ERR_INTERNAL(e, "database error");
}

struct join_arg {
	struct cluster *cl;
	char name[64];
};

static void *join_thread(void *p);

/* The row "joining", from the request and its facts. */
static int
row_joining(struct cluster *cl, const char *name, const char *addr,
            const struct jv *facts, struct err *e)
{
	struct node_row n = {0};

	snprintf(n.name, sizeof(n.name), "%s", name);
	snprintf(n.addr, sizeof(n.addr), "%s", addr);
	snprintf(n.status, sizeof(n.status), "joining");
	snprintf(n.data_dir, sizeof(n.data_dir), "%s",
	         jv_str(jv_get(facts, "data_dir")) ?: "");
	snprintf(n.engine_api, sizeof(n.engine_api), "%s",
	         jv_str(jv_get(facts, "engine_api")) ?: "");
	n.mem_bytes = jv_int(jv_get(facts, "mem_total"));
	n.joined_at = clock_now();
	if (store_node_put(cl->c->store, &n) != 0)
		return ERR_INTERNAL(e, "database error");
	return 0;
}

/* A small file whole into b (its cap); -1 when it cannot. */
static int
read_small(const char *path, struct buf *b)
{
	char chunk[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, chunk, sizeof(chunk))) > 0)
		if (buf_append(b, chunk, (size_t)r) < 0)
			break;
	close(fd);
	return r == 0 ? 0 : -1;
}

/* The answer: CA, certificate, swarm token and address, network. */
static int
enroll_answer(struct cluster *cl, const char *name, char *cert, struct jv **ans,
              struct err *e)
{
	struct cluster_swarm_info si;
	char path[PATH_MAX], msg[DOCKER_MSG_LEN];
	struct buf ca = {0};
	int rc = 0;

	snprintf(path, sizeof(path), "%s/ca.pem", cl->dir);
	buf_init(&ca, 64 << 10);
	if (cluster_swarm_info(cl, &si, msg) != DOCKER_OK)
		rc = ERR_DOCKER(e, "%s", msg);
	else if (read_small(path, &ca) < 0)
		rc = ERR_INTERNAL(e, "cannot read the CA's certificate");
	if (rc == 0) {
		*ans = jv_obj();
		jv_set(*ans, "ca", jv_new_str_lossy(ca.data, ca.len));
		jv_set_str(*ans, "cert", cert);
		jv_set_str(*ans, "name", name);
		jv_set_str(*ans, "swarm_token", si.worker_token);
		jv_set_str(*ans, "swarm_addr", si.manager_addr);
		jv_set(*ans, "network", network_json(cl));
	}
	buf_release(&ca);
	return rc;
}

int
cluster_op_enroll(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	struct cluster *cl = arg;
	const char *name = jv_str(jv_get(req, "name"));
	const char *addr = jv_str(jv_get(req, "addr"));
	const char *key = jv_str(jv_get(req, "pubkey"));
	const struct jv *facts = jv_get(req, "facts");
	struct join_arg *ja;
	char *cert = NULL;
	int rc;

	*ans = NULL;
	if (name_check(cl, name, e) < 0)
		return -1;
	/* host:port, [v6]:port: what the control plane dials and signs. */
	if (addr == NULL || addr[0] == '\0' || strlen(addr) >= 128 ||
	    strspn(addr, "0123456789abcdefABCDEF.:[]-"
	                 "ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ") !=
	        strlen(addr) ||
	    strrchr(addr, ':') == NULL || key == NULL ||
	    strlen(key) > CLUSTER_PUBKEY_MAX)
		return ERR_BAD(e, "enroll needs addr (host:port) and pubkey");
	if (token_check(cl, jv_str(jv_get(req, "token")), e) < 0)
		return -1;
	if (nl_ca_sign(cl->dir, key, name, addr, &cert, e) < 0)
		return -1;
	rc = enroll_answer(cl, name, cert, ans, e);
	free(cert);
	if (rc < 0 || row_joining(cl, name, addr, facts, e) < 0) {
		jv_free(*ans);
		*ans = NULL;
		return -1;
	}
	log_info("node %s (%s, from %s) enrolled; joining", name, addr, p->ip);
	if ((ja = calloc(1, sizeof(*ja))) != NULL) {
		ja->cl = cl;
		snprintf(ja->name, sizeof(ja->name), "%s", name);
		if (cluster_thread(cl, join_thread, ja) < 0)
			free(ja);
	}
	return 0;
}

/* The join thread's error, shown by GET /v1/nodes while it is joining. */
static void
join_note(struct cluster *cl, const char *name, const char *why)
{
	struct cluster_live *lv;

	if (why[0])
		log_warn("node %s: join not finished: %s", name, why);
	pthread_mutex_lock(&cl->mu);
	if ((lv = cluster_live_get(cl, name)) != NULL)
		snprintf(lv->error, sizeof(lv->error), "%s", why);
	pthread_mutex_unlock(&cl->mu);
}

/* Step 3a: the agent answers with a swarm id Swarm lists. */
static int
wait_swarm(struct cluster *cl, struct node_row *n, struct err *e)
{
	int64_t end = clock_mono_ms() + CLUSTER_JOIN_WAIT_S * 1000LL;
	char state[16], msg[DOCKER_MSG_LEN];

	while (cluster_nap(cl, 1000)) {
		struct jv *f = NULL;
		const char *id;

		if (cluster_facts(cl, n, &f, e) == 0 &&
		    (id = jv_str(jv_get(f, "swarm_id"))) != NULL && id[0] &&
		    cluster_swarm_state(cl, id, state, msg) == DOCKER_OK &&
		    state[0]) {
			snprintf(n->swarm_id, sizeof(n->swarm_id), "%s", id);
			jv_free(f);
			return 0;
		}
		jv_free(f);
		if (clock_mono_ms() > end)
			return err_set(
			    e, 504, "node_busy",
			    "the node did not join the swarm in %d s",
			    CLUSTER_JOIN_WAIT_S);
	}
	return ERR_CONFLICT(e, "the daemon is stopping");
}

/* Reads the stream's trailer line {"ok":…,"message"} after our half-close. */
static int
read_trailer(int fd, struct err *e)
{
	char line[CLUSTER_TRAILER_MAX];
	size_t n = 0;
	struct jv *t;
	int ok;

	while (n < sizeof(line) - 1) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&pfd, 1, CLUSTER_IMAGE_PUSH_S * 1000) <= 0)
			return ERR_INTERNAL(e, "no trailer from the agent");
		r = read(fd, line + n, sizeof(line) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	line[n] = '\0';
	t = jv_parse(line, n, 4, NULL, 0);
	ok = jv_is_true(jv_get(t, "ok"));
	if (!ok)
		err_set(e, 502, "docker_error", "the node's image load: %s",
		        jv_str(jv_get(t, "message")) ?: "no answer");
	jv_free(t);
	return ok ? 0 : -1;
}

/* Step 3b: the sandbox image on the node (image_has, else image_load). */
static int
push_image(struct cluster *cl, const struct node_row *n, struct err *e)
{
	struct core *c = cl->c;
	char id[80], msg[DOCKER_MSG_LEN];
	struct jv *req = jv_obj(), *ans = NULL;
	int fd = -1, rc;

	if (docker_image_id(c->docker, c->cfg->image, id, msg) != DOCKER_OK) {
		jv_free(req);
		return ERR_DOCKER(e, "the sandbox image: %s", msg);
	}
	jv_set_str(req, "op", "image_has");
	jv_set_str(req, "id", id);
	rc = nl_call(cl->nl, n->addr, NL_ROLE_NODE, req, &ans, NL_CALL_MS, e);
	jv_free(req);
	if (rc == 0 && jv_is_true(jv_get(ans, "has"))) {
		jv_free(ans);
		return 0;
	}
	jv_free(ans);
	ans = NULL;
	if (rc < 0)
		return -1;
	/* With a registry the node pulls the image itself (docs/deploy.md);
	 * the node is labelled only once it has it. */
	if (c->cfg->image_registry[0])
		return err_set(e, 409, "node_busy",
		               "the node lacks the sandbox image %.19s: pull "
		               "it there from %s (SANDBOXD_IMAGE_REGISTRY), "
		               "then enroll it again",
		               id, c->cfg->image_registry);
	log_info("node %s: loading the sandbox image %.19s there", n->name, id);
	req = jv_obj();
	jv_set_str(req, "op", "image_load");
	jv_set_str(req, "id", id);
	rc = nl_stream(cl->nl, n->addr, NL_ROLE_NODE, req, NULL, &fd, e);
	jv_free(req);
	if (rc < 0)
		return -1;
	if (cluster_image_save(cl, id, fd, msg) != DOCKER_OK) {
		close(fd);
		return err_set(e, 502, "docker_error", "image save: %s", msg);
	}
	shutdown(fd, SHUT_WR);
	rc = read_trailer(fd, e);
	close(fd);
	return rc;
}

/* Steps 3a to 3c. */
static int
join_steps(struct cluster *cl, struct node_row *n, struct err *e)
{
	char msg[DOCKER_MSG_LEN];

	if (wait_swarm(cl, n, e) < 0)
		return -1;
	if (store_node_put(cl->c->store, n) != 0)
		return ERR_INTERNAL(e, "database error");
	if (cluster_swarm_label(cl, n->swarm_id, "sandboxd.node", n->name,
	                        msg) != DOCKER_OK)
		return ERR_DOCKER(e, "label: %s", msg);
	if (push_image(cl, n, e) < 0)
		return -1;
	if (cluster_swarm_label(cl, n->swarm_id, "sandboxd.agent", "1", msg) !=
	    DOCKER_OK)
		return ERR_DOCKER(e, "label: %s", msg);
	if (store_node_set_status(cl->c->store, n->name, "ready") != 0)
		return ERR_INTERNAL(e, "database error");
	return 0;
}

static void *
join_thread(void *p)
{
	struct join_arg *ja = p;
	struct cluster *cl = ja->cl;
	struct node_row n;
	struct err e = {0};

	join_note(cl, ja->name, "");
	if (store_node_get(cl->c->store, ja->name, &n) != 0)
		join_note(cl, ja->name, "its row is gone");
	else if (join_steps(cl, &n, &e) < 0)
		join_note(cl, ja->name, e.msg);
	else
		log_info("node %s joined: ready for sandboxes", ja->name);
	free(ja);
	cluster_thread_done(cl);
	return NULL;
}

/*
 * The renew op (a node, by its current certificate): a new certificate
 * for a key the node made, for the name its certificate has and the
 * address its row keeps, so a node can renew only itself.
 */
int
cluster_op_renew(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, struct err *e)
{
	struct cluster *cl = arg;
	const char *key = jv_str(jv_get(req, "pubkey"));
	struct node_row n;
	char *cert = NULL;

	if (key == NULL || strlen(key) > CLUSTER_PUBKEY_MAX)
		return ERR_BAD(e, "renew needs pubkey");
	if (store_node_get(cl->c->store, p->name, &n) != 0)
		return err_set(e, 404, "node_not_found",
		               "no node \"%s\" is enrolled", p->name);
	if (nl_ca_sign(cl->dir, key, n.name, n.addr, &cert, e) < 0)
		return -1;
	*ans = jv_obj();
	jv_set_str(*ans, "cert", cert);
	free(cert);
	log_info("node %s: its certificate renewed", n.name);
	return 0;
}
