/*
 * The client side: one op per connection.  nl_call sends a header,
 * reads the answer and closes; nl_stream keeps the connection after an
 * ok answer and hands the caller one end of a socketpair whose other
 * end a pump thread joins to the TLS session.  Every step before that
 * has a deadline (connect, handshake, header, answer); a stream then
 * lives until both halves closed or NL_STREAM_IDLE_MS (or the idle
 * limit given to nl_stream_idle) pass with no byte.  The server must show a
 * certificate of our CA with the role the caller wants; anything else is 503
 * node_down, as an unreachable node is, so callers have one failure to handle.
 */
#include "nodelink/nlint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *
role_name(enum nl_role r)
{
	return r == NL_ROLE_CONTROL ? "control"
	       : r == NL_ROLE_NODE  ? "node"
	                            : "none";
}

void
nl_answer_err(const struct jv *a, struct err *e)
{
	const char *code = jv_str(jv_get(a, "code"));
	const char *msg = jv_str(jv_get(a, "message"));
	int64_t st = jv_int(jv_get(a, "status"));
	bool good = code != NULL && code[0] != '\0' && strlen(code) < 32;

	if (e == NULL)
		return;
	for (const char *c = code; good && *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || *c == '_'))
			good = false;
	e->status = st >= 400 && st <= 599 ? (int)st : 502;
	snprintf(e->code, sizeof(e->code), "%s", good ? code : "internal");
	snprintf(e->msg, sizeof(e->msg), "%s",
	         msg != NULL ? msg : "the node refused the operation");
}

/*
 * Connects, checks the server, sends req and reads the answer.  On 0
 * the session is open with an ok answer in *ans.
 */
static int
call_open(struct nodelink *nl, const char *addr, enum nl_role want,
          const struct jv *req, struct jv **ans, gnutls_session_t *sp, int *tcp,
          int timeout_ms, struct err *e)
{
	int64_t deadline =
	    nl_deadline(timeout_ms > 0 ? timeout_ms : NL_CALL_MS);
	gnutls_session_t s = NULL;
	struct nl_peer p;
	struct jv *a = NULL;
	int fd = nl_dial(addr, deadline, e);

	if (fd < 0)
		return -1;
	if (nl_tls_open(&s, nl->cred, fd, false, deadline) < 0) {
		err_set(e, 503, "node_down", "TLS with %s failed", addr);
		s = NULL;
		goto fail;
	}
	if (nl_tls_peer(s, &p) < 0 || p.role != want) {
		err_set(e, 503, "node_down",
		        "%s has no %s certificate of this cluster's CA", addr,
		        role_name(want));
		goto fail;
	}
	if (want == NL_ROLE_NODE && nl_tls_peer_is(s, addr) < 0) {
		err_set(e, 503, "node_down",
		        "%s answered with node %s's certificate, which is for "
		        "another address",
		        addr, p.name);
		goto fail;
	}
	if (nl_tls_put(s, fd, req, NL_HDR_MAX, deadline) < 0 ||
	    (a = nl_tls_get(s, fd, NL_ANS_MAX, NULL, deadline)) == NULL) {
		err_set(e, 503, "node_down", "no answer from %s", addr);
		goto fail;
	}
	if (!jv_is_true(jv_get(a, "ok"))) {
		nl_answer_err(a, e);
		goto fail;
	}
	*ans = a;
	*sp = s;
	*tcp = fd;
	return 0;
fail:
	jv_free(a);
	if (s != NULL)
		gnutls_deinit(s);
	close(fd);
	return -1;
}

int
nl_call(struct nodelink *nl, const char *addr, enum nl_role want,
        const struct jv *req, struct jv **ans, int timeout_ms, struct err *e)
{
	gnutls_session_t s;
	struct jv *a;
	int fd;

	if (ans != NULL)
		*ans = NULL;
	if (call_open(nl, addr, want, req, &a, &s, &fd, timeout_ms, e) < 0)
		return -1;
	nl_tls_bye(s, fd, nl_deadline(1000));
	gnutls_deinit(s);
	close(fd);
	if (ans != NULL)
		*ans = a;
	else
		jv_free(a);
	return 0;
}

struct cstream {
	gnutls_session_t s;
	int tcp, fd, idle_ms;
};

static void *
cstream_main(void *arg)
{
	struct cstream *c = arg;

	nl_tls_pump(c->s, c->tcp, c->fd, c->idle_ms);
	gnutls_deinit(c->s);
	close(c->tcp);
	close(c->fd);
	free(c);
	atomic_fetch_sub(&nl_streams_open, 1);
	return NULL;
}

int
nl_stream(struct nodelink *nl, const char *addr, enum nl_role want,
          const struct jv *req, struct jv **ans, int *fd, struct err *e)
{
	return nl_stream_idle(nl, addr, want, req, ans, fd, 0, e);
}

int
nl_stream_idle(struct nodelink *nl, const char *addr, enum nl_role want,
               const struct jv *req, struct jv **ans, int *fd, int idle_ms,
               struct err *e)
{
	struct cstream *c = calloc(1, sizeof(*c));
	struct jv *a = NULL;
	int sp[2] = {-1, -1};

	if (ans != NULL)
		*ans = NULL;
	*fd = -1;
	if (c == NULL)
		return ERR_INTERNAL(e, "out of memory");
	c->idle_ms = idle_ms;
	if (atomic_fetch_add(&nl_streams_open, 1) >= (int)NL_STREAMS) {
		err_set(e, 503, "node_down", "%u node streams are open",
		        NL_STREAMS);
		goto fail;
	}
	if (call_open(nl, addr, want, req, &a, &c->s, &c->tcp, NL_CALL_MS, e) <
	    0)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		ERR_INTERNAL(e, "socketpair failed");
		goto fail_session;
	}
	c->fd = sp[1];
	if (nl_spawn(cstream_main, c) < 0) {
		ERR_INTERNAL(e, "cannot start a stream thread");
		close(sp[0]);
		close(sp[1]);
		goto fail_session;
	}
	*fd = sp[0];
	if (ans != NULL)
		*ans = a;
	else
		jv_free(a);
	return 0;
fail_session:
	jv_free(a);
	gnutls_deinit(c->s);
	close(c->tcp);
fail:
	atomic_fetch_sub(&nl_streams_open, 1);
	free(c);
	return -1;
}
