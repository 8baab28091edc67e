/*
 * The credential proxy's admission: what a request's head alone decides,
 * and what each source address (each sandbox) may hold.
 *
 * A sandbox is hostile, so everything its request head decides is
 * decided before a byte of the body is read (admit_head): the connection cap
 * of its source address, the token and that address, whether a task of
 * the sandbox runs (else its app must have opted in to calls of its
 * own: the token alone is no licence to spend the key), the path against
 * the agent's upstreams and the upstream's endpoints, the declared
 * length against the body cap and the address's budget of buffered
 * bytes.  A refusal is queued on libmicrohttpd's first call, which then
 * answers without reading the body and closes the connection.  Per
 * address, connections are counted as the server accepts and closes
 * them (admit_on_conn) and body bytes as they are charged and given back
 * (struct proxy_addr); past PROXY_ADDR_MAX_OPEN libmicrohttpd closes a
 * connection at accept.  Rejected: libmicrohttpd's per-IP limit alone
 * (a silent close tells an agent nothing, and a 429 does), and a cap per
 * token (the cap must hold before the token is checked).
 *
 * The refusals (proxy_reply_err, and the error JSON the upstream side
 * uses as well) live here, below the connection side and the upstream
 * side, so that neither calls back into proxy.c.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cred/credentials.h"
#include "lib/jv.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "proxy/internal.h"
#include "task/task.h"

/* ---- what each address holds (under px->mu) ------------------------- */

/* The slot of ip; with make, a free one is taken.  NULL: none. */
static struct proxy_addr *
addr_slot(struct proxy *px, in_addr_t ip, bool make)
{
	struct proxy_addr *free_slot = NULL;

	for (size_t i = 0; i < PROXY_MAX_CONNECTIONS; i++) {
		struct proxy_addr *a = &px->addrs[i];
		if ((a->conns || a->bytes) && a->ip == ip)
			return a;
		if (!a->conns && !a->bytes && free_slot == NULL)
			free_slot = a;
	}
	if (make && free_slot)
		free_slot->ip = ip;
	return make ? free_slot : NULL;
}

/*
 * Charges n more bytes of r's body to its address; false (nothing
 * charged) when the address would hold more than
 * PROXY_ADDR_MAX_BODY_BYTES.
 */
static bool
addr_charge(struct preq *r, size_t n)
{
	struct proxy *px = r->px;
	struct proxy_addr *a;
	bool ok = false;

	pthread_mutex_lock(&px->mu);
	a = addr_slot(px, r->ip, true);
	if (a && a->bytes + n <= PROXY_ADDR_MAX_BODY_BYTES) {
		a->bytes += n;
		r->charged += n;
		ok = true;
	}
	pthread_mutex_unlock(&px->mu);
	return ok;
}

void
proxy_addr_release(struct preq *r)
{
	struct proxy *px = r->px;
	struct proxy_addr *a;

	if (r->charged == 0)
		return;
	pthread_mutex_lock(&px->mu);
	a = addr_slot(px, r->ip, false);
	if (a)
		a->bytes -= r->charged < a->bytes ? r->charged : a->bytes;
	r->charged = 0;
	pthread_mutex_unlock(&px->mu);
}

/* The connection's IPv4 source address (0 for any other). */
in_addr_t
proxy_conn_ip(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	if (ci == NULL || ci->client_addr == NULL ||
	    ci->client_addr->sa_family != AF_INET)
		return 0;
	return ((const struct sockaddr_in *)ci->client_addr)->sin_addr.s_addr;
}

static int
conn_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

/*
 * A connection as the server accepts and closes it: counted for its
 * address, and marked (its socket context) when it is one more than
 * PROXY_ADDR_MAX_CONNS, so that its requests get a 429 that says why
 * instead of the silent close libmicrohttpd gives past
 * PROXY_ADDR_MAX_OPEN.
 */
struct pconn {
	in_addr_t ip;
	char node[64]; /* relayed from this node; "" this one */
	bool counted;  /* in its address's slot (none was free: not) */
	bool over;
};

void
admit_on_conn(void *cls, struct MHD_Connection *conn, void **sctx,
              enum MHD_ConnectionNotificationCode code)
{
	struct proxy *px = cls;
	struct pconn *pc = *sctx;
	struct proxy_addr *a;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		if ((pc = calloc(1, sizeof(*pc))) == NULL)
			return; /* no context: its requests are refused */
		pc->ip = proxy_conn_ip(conn);
		if (px->relay_on)
			proxy_peer_take(px, conn_fd(conn), pc->node);
		pthread_mutex_lock(&px->mu);
		a = addr_slot(px, pc->ip, true);
		if (a)
			a->conns++;
		pc->counted = a != NULL;
		pc->over = a == NULL || a->conns > PROXY_ADDR_MAX_CONNS;
		pthread_mutex_unlock(&px->mu);
		*sctx = pc;
		return;
	}
	if (pc == NULL)
		return;
	pthread_mutex_lock(&px->mu);
	a = pc->counted ? addr_slot(px, pc->ip, false) : NULL;
	if (a && a->conns)
		a->conns--;
	pthread_mutex_unlock(&px->mu);
	free(pc);
	*sctx = NULL;
}

void
proxy_conn_node(struct MHD_Connection *conn, char node[64])
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct pconn *pc = ci ? ci->socket_context : NULL;

	snprintf(node, 64, "%s", pc ? pc->node : "");
}

void
proxy_error_json(const char *type, const char *msg, struct buf *out)
{
	struct jv *o = jv_obj(), *e = jv_obj();

	jv_set_str(e, "type", type);
	jv_set_str(e, "message", msg);
	jv_set_str(o, "type", "error");
	jv_set(o, "error", e);
	jv_dump(o, out);
	jv_free(o);
}

/* An error of our own, now; with close the connection ends after it. */
enum MHD_Result
proxy_reply_err(struct MHD_Connection *conn, unsigned status, const char *type,
                const char *msg, bool close)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	struct buf b;

	metric_inc(METRIC_PROXY_REFUSED);
	buf_init(&b, 0);
	proxy_error_json(type, msg, &b);
	mr = MHD_create_response_from_buffer(b.len, b.data ? b.data : "",
	                                     MHD_RESPMEM_MUST_COPY);
	buf_release(&b);
	if (mr == NULL)
		return MHD_NO;
	MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        "application/json");
	if (close)
		MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION,
		                        "close");
	ret = MHD_queue_response(conn, status, mr);
	MHD_destroy_response(mr);
	return ret;
}

enum MHD_Result
proxy_reply_now(struct MHD_Connection *conn, unsigned status, const char *type,
                const char *msg)
{
	return proxy_reply_err(conn, status, type, msg, false);
}

/* The caller's proxy token: x-api-key, or Authorization: Bearer. */
static const char *
token_of(struct MHD_Connection *conn)
{
	const char *t =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "x-api-key");
	const char *a;

	if (t && *t)
		return t;
	a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                MHD_HTTP_HEADER_AUTHORIZATION);
	if (a && strncasecmp(a, "Bearer ", 7) == 0)
		return a + 7;
	return NULL;
}

/*
 * A token works only from its own sandbox's address on its own node, so
 * one copied into another sandbox is useless there.
 */
static bool
from_sandbox(in_addr_t ip, const char *node, const struct sandbox *sb)
{
	struct in_addr in = {.s_addr = ip};
	char s[INET_ADDRSTRLEN];

	if (ip == 0 || inet_ntop(AF_INET, &in, s, sizeof(s)) == NULL)
		return false;
	return sb->container_ip[0] && strcmp(s, sb->container_ip) == 0 &&
	       strcmp(node, sb->node) == 0;
}

static const char admit_no_task_msg[] =
    "sandboxd proxy: no task of this sandbox is running, and its app has "
    "not opted in to model calls of its own (PATCH /v1/apps/{id} "
    "{\"own_model_calls\":{\"usd\":N}}, or sandboxd spend own-calls APP "
    "--usd N)";

/*
 * A sandbox's token works while one of its tasks runs (the task's id
 * into r->task: the follower's table, in memory), or when its app opted
 * in to model calls of its own (r->own: a budget of those is set, one
 * row read only then).
 */
static bool
task_or_own(struct preq *r)
{
	struct store_budget b;

	if (task_active_id(r->px->core, r->sandbox, r->task))
		return true;
	r->task[0] = '\0';
	r->own = store_budget_get(r->px->core->store, SPEND_APP_CALLS, r->app,
	                          &b) == 0;
	return r->own;
}

const char admit_over_budget_msg[] =
    "sandboxd proxy: this sandbox already has as many request bytes in "
    "flight as it may (PROXY_ADDR_MAX_BODY_BYTES, 64 MiB); wait for its "
    "other requests";

/*
 * What the request's head alone decides, before a byte of its body is
 * read: the address's connection cap, the token and its source address,
 * the path against the allow-list, the declared size against the body
 * cap and the address's budget.  A refusal is queued at once, so
 * libmicrohttpd answers it without reading the body and then closes the
 * connection.  MHD_YES without a response when the body may come.
 */
enum MHD_Result
admit_head(struct preq *r, const char *path)
{
	struct MHD_Connection *conn = r->conn;
	const char *token = token_of(conn), *cl;
	struct sandbox sb;
	char msg[384];
	unsigned long long declared = 0;
	int st;

	if (token == NULL ||
	    cred_sandbox_for_token(r->px->core->store, token, &sb) < 0 ||
	    !from_sandbox(r->ip, r->node, &sb))
		return proxy_reply_now(
		    conn, 401, "authentication_error",
		    "sandboxd proxy: missing or invalid sandbox "
		    "token");
	snprintf(r->sandbox, sizeof(r->sandbox), "%s", sb.id);
	snprintf(r->owner, sizeof(r->owner), "%s", sb.owner);
	snprintf(r->app, sizeof(r->app), "%s", sb.app_id);
	if (!task_or_own(r))
		return proxy_reply_now(conn, 403, "permission_error",
		                       admit_no_task_msg);
	st = provider_path(r->px->core->cfg, r->method, path, &r->path, msg,
	                   sizeof(msg));
	if (st != 0) {
		log_warn("proxy: sandbox %s: refused %s %.200s (%d)",
		         r->sandbox, r->method, path, st);
		return proxy_reply_now(
		    conn, (unsigned)st,
		    st == 403 ? "permission_error" : "not_found_error", msg);
	}
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl)
		declared = strtoull(cl, NULL, 10);
	if (declared > PROXY_MAX_BODY_BYTES)
		return proxy_reply_now(
		    conn, 413, "request_too_large",
		    "the request body is over the proxy's limit");
	if (!addr_charge(r, (size_t)declared))
		return proxy_reply_err(conn, 429, "rate_limit_error",
		                       admit_over_budget_msg, true);
	return MHD_YES;
}

/* A chunk of the body, within both caps (charged as it comes when the
 * length was not declared or was wrong). */
void
admit_body(struct preq *r, const char *data, size_t n)
{
	size_t want;

	if (r->too_big || r->over_budget)
		return;
	if (buf_append(&r->body, data, n) < 0) {
		r->too_big = true;
		return;
	}
	want = r->body.len;
	if (want > r->charged && !addr_charge(r, want - r->charged))
		r->over_budget = true;
}

/* The connection is one more than its address may have open. */
bool
admit_over_cap(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct pconn *pc = ci ? ci->socket_context : NULL;

	return pc == NULL || pc->over;
}
