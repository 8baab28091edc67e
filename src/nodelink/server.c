/*
 * The server side: a listener thread and a thread per connection, at
 * most NL_STREAMS connections at once and NL_PEER_CONNS from one
 * address (over either: the connection is closed at once).  A
 * connection whose peer proved the control role leaves its address's
 * count: an agent's one client is the control plane, whose previews,
 * terminals and event streams may pass NL_PEER_CONNS together, while
 * anyone else (and the CP's address before a handshake) stays
 * bounded.  Each connection gets NL_HANDSHAKE_MS for its handshake and
 * NL_HDR_READ_MS for its header, then one op: the op must exist (404
 * unknown_op) and take the peer's role (401 unauthorized), where the role comes
 * from a certificate our CA signed, or NONE when the peer sent none.  A
 * certificate that does not verify ends the connection before a byte
 * of header is read.  A unary op answers and closes; a stream op's
 * handler gives an fd that this thread then pumps with the session.
 *
 * nl_server_stop shuts every open connection down and waits for their
 * threads, so no handler runs after it returns (a handler blocked
 * elsewhere delays it).
 */
#include "nodelink/nlint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nodelink/frame.h"

struct slot {
	int fd;       /* -1: free */
	bool control; /* the peer proved the control role */
	char ip[64];
};

struct nl_server {
	struct nodelink *nl;
	const struct nl_op *ops;
	size_t nops;
	void *arg;
	int lfd, wake[2];
	unsigned port;
	pthread_t listener;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t idle;
	int nconns;
	struct slot slots[NL_STREAMS];
};

struct conn {
	struct nl_server *s;
	int slot, fd;
};

/* A slot for a connection from ip, or -1 over a limit. */
static int
admit(struct nl_server *s, int fd, const char *ip)
{
	int free_slot = -1, same = 0;

	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < (int)NL_STREAMS; i++) {
		if (s->slots[i].fd < 0) {
			if (free_slot < 0)
				free_slot = i;
		} else if (!s->slots[i].control &&
		           strcmp(s->slots[i].ip, ip) == 0) {
			same++;
		}
	}
	if (free_slot >= 0 && same < NL_PEER_CONNS && !s->stop) {
		s->slots[free_slot].fd = fd;
		s->slots[free_slot].control = false;
		snprintf(s->slots[free_slot].ip, sizeof(s->slots[0].ip), "%s",
		         ip);
		s->nconns++;
	} else {
		free_slot = -1;
	}
	pthread_mutex_unlock(&s->mu);
	return free_slot;
}

/* The control plane's connections leave its address's count: an agent
 * serves it alone, with many streams (previews, terminals, events). */
static void
mark_control(struct nl_server *s, int slot)
{
	pthread_mutex_lock(&s->mu);
	s->slots[slot].control = true;
	pthread_mutex_unlock(&s->mu);
}

static void
release(struct nl_server *s, int slot)
{
	pthread_mutex_lock(&s->mu);
	s->slots[slot].fd = -1;
	if (--s->nconns == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->mu);
}

static const struct nl_op *
find_op(const struct nl_server *s, const char *name)
{
	for (size_t i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].name, name) == 0)
			return &s->ops[i];
	return NULL;
}

/* {"ok":true} and extra's fields (extra is freed). */
static struct jv *
answer_ok(struct jv *extra)
{
	struct jv *a = jv_obj(), *v;
	const char *k;
	void *it = NULL;

	jv_set_bool(a, "ok", true);
	while (extra != NULL && jv_each(extra, &it, &k, &v))
		if (strcmp(k, "ok") != 0)
			jv_set(a, k, jv_copy(v));
	jv_free(extra);
	return a;
}

static struct jv *
answer_fail(const struct err *e)
{
	struct jv *a = jv_obj();

	jv_set_bool(a, "ok", false);
	jv_set_int(a, "status", e->status ? e->status : 500);
	jv_set_str(a, "code", e->code[0] ? e->code : "internal");
	jv_set_str(a, "message", e->msg);
	return a;
}

/* Sends a (freed); a too large for a frame becomes a 500. */
static int
answer(gnutls_session_t ss, int fd, struct jv *a)
{
	int64_t deadline = nl_deadline(NL_CALL_MS);
	int rc = nl_tls_put(ss, fd, a, NL_ANS_MAX, deadline);

	jv_free(a);
	if (rc < 0) {
		struct err e = {0};

		ERR_INTERNAL(&e, "the answer passed %u bytes", NL_ANS_MAX);
		a = answer_fail(&e);
		rc = nl_tls_put(ss, fd, a, NL_ANS_MAX, deadline);
		jv_free(a);
	}
	return rc;
}

static void
run_op(struct nl_server *s, const struct nl_op *o, const struct nl_peer *p,
       const struct jv *req, gnutls_session_t ss, int fd)
{
	struct err e = {0};
	struct jv *extra = NULL;
	int hfd = -1;

	if (o->unary != NULL) {
		if (o->unary(s->arg, p, req, &extra, &e) < 0) {
			jv_free(extra);
			answer(ss, fd, answer_fail(&e));
		} else {
			answer(ss, fd, answer_ok(extra));
		}
		return;
	}
	if (o->stream == NULL ||
	    o->stream(s->arg, p, req, &extra, &hfd, &e) < 0) {
		jv_free(extra);
		answer(ss, fd, answer_fail(&e));
		return;
	}
	if (answer(ss, fd, answer_ok(extra)) == 0)
		nl_tls_pump(ss, fd, hfd, o->idle_ms);
	close(hfd);
}

static void
serve_conn(struct nl_server *s, gnutls_session_t ss, int fd, int slot,
           const char *ip)
{
	char op[NL_OP_LEN];
	struct nl_peer p;
	const struct nl_op *o;
	struct jv *req;
	struct err e = {0};

	if (nl_tls_peer(ss, &p) < 0)
		return; /* a certificate not of our CA: not a word more */
	if (p.role == NL_ROLE_CONTROL)
		mark_control(s, slot);
	snprintf(p.ip, sizeof(p.ip), "%s", ip);
	req = nl_tls_get(ss, fd, NL_HDR_MAX, op, nl_deadline(NL_HDR_READ_MS));
	if (req == NULL)
		return;
	o = find_op(s, op);
	if (o == NULL) {
		err_set(&e, 404, "unknown_op", "no op %s here", op);
		answer(ss, fd, answer_fail(&e));
	} else if (!(o->roles & (1u << p.role))) {
		err_set(&e, 401, "unauthorized", "%s is not for this peer", op);
		answer(ss, fd, answer_fail(&e));
	} else {
		run_op(s, o, &p, req, ss, fd);
	}
	jv_free(req);
	nl_tls_bye(ss, fd, nl_deadline(1000));
}

static void *
conn_main(void *arg)
{
	struct conn *c = arg;
	struct nl_server *s = c->s;
	gnutls_session_t ss;
	char ip[64];

	snprintf(ip, sizeof(ip), "%s", s->slots[c->slot].ip);
	if (nl_tls_open(&ss, s->nl->cred, c->fd, true,
	                nl_deadline(NL_HANDSHAKE_MS)) == 0) {
		serve_conn(s, ss, c->fd, c->slot, ip);
		gnutls_deinit(ss);
	}
	close(c->fd);
	release(s, c->slot);
	free(c);
	return NULL;
}

static void
peer_ip(const struct sockaddr_storage *sa, char ip[64])
{
	const void *a = &((const struct sockaddr_in *)sa)->sin_addr;

	if (sa->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (inet_ntop(sa->ss_family, a, ip, 64) == NULL)
		snprintf(ip, 64, "?");
}

static void
accept_one(struct nl_server *s)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	struct conn *c;
	char ip[64];
	int fd = accept4(s->lfd, (struct sockaddr *)&sa, &sl,
	                 SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	peer_ip(&sa, ip);
	c = malloc(sizeof(*c));
	if (c == NULL || (c->slot = admit(s, fd, ip)) < 0) {
		free(c);
		close(fd);
		return;
	}
	c->s = s;
	c->fd = fd;
	if (nl_spawn(conn_main, c) < 0) {
		close(fd);
		release(s, c->slot);
		free(c);
	}
}

static void *
listen_main(void *arg)
{
	struct nl_server *s = arg;

	while (!s->stop) {
		struct pollfd p[2] = {{.fd = s->lfd, .events = POLLIN},
		                      {.fd = s->wake[0], .events = POLLIN}};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			accept_one(s);
	}
	return NULL;
}

static int
listen_on(const char *addr, unsigned *port, struct err *e)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICHOST |
	                                     AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char host[256], ps[8];
	int fd = -1, one = 1;

	if (nl_split_addr(addr, host, ps) < 0 ||
	    getaddrinfo(host, ps, &hints, &ai) != 0)
		return ERR_INTERNAL(e, "bad listen address %s", addr);
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	            0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
	    listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		ERR_INTERNAL(e, "cannot listen on %s: %s", addr,
		             strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	*port = ntohs(sa.ss_family == AF_INET6
	                  ? ((struct sockaddr_in6 *)&sa)->sin6_port
	                  : ((struct sockaddr_in *)&sa)->sin_port);
	return fd;
}

int
nl_server_start(struct nl_server **out, struct nodelink *nl, const char *addr,
                const struct nl_op *ops, size_t nops, void *arg, struct err *e)
{
	struct nl_server *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return ERR_INTERNAL(e, "out of memory");
	for (size_t i = 0; i < NL_STREAMS; i++)
		s->slots[i].fd = -1;
	s->nl = nl;
	s->ops = ops;
	s->nops = nops;
	s->arg = arg;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->idle, NULL);
	s->lfd = listen_on(addr, &s->port, e);
	if (s->lfd < 0)
		goto fail;
	if (pipe2(s->wake, O_CLOEXEC) < 0) {
		close(s->lfd);
		ERR_INTERNAL(e, "pipe failed");
		goto fail;
	}
	if (pthread_create(&s->listener, NULL, listen_main, s) != 0) {
		close(s->lfd);
		close(s->wake[0]);
		close(s->wake[1]);
		ERR_INTERNAL(e, "cannot start the node channel's listener");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->idle);
	free(s);
	return -1;
}

void
nl_server_stop(struct nl_server *s)
{
	if (s == NULL)
		return;
	s->stop = true;
	if (write(s->wake[1], "x", 1) < 0) {
		/* the listener wakes on its next connection anyway */
	}
	pthread_join(s->listener, NULL);
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < NL_STREAMS; i++)
		if (s->slots[i].fd >= 0)
			shutdown(s->slots[i].fd, SHUT_RDWR);
	while (s->nconns > 0)
		pthread_cond_wait(&s->idle, &s->mu);
	pthread_mutex_unlock(&s->mu);
	close(s->lfd);
	close(s->wake[0]);
	close(s->wake[1]);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->idle);
	free(s);
}

unsigned
nl_server_port(const struct nl_server *s)
{
	return s->port;
}
