/*
 * The tunnel: the control plane's side of a preview of a sandbox on
 * another node.  The edge connects to a loopback listener and writes a
 * preamble line, "SBX <sandbox> <port>\n", then the visitor's bytes.
 * A thread per connection reads the line one byte at a time (so not a
 * byte of the request is taken with it), at most NL_PREAMBLE_MAX bytes
 * within NL_PREAMBLE_MS, asks resolve for the node holding the sandbox,
 * opens a "preview" stream there and pumps the two.  The agent finds
 * the sandbox's address itself: the port is the only number the wire
 * carries.  Connections at once are bounded by NL_STREAMS (over it the
 * connection is closed), and the listener is loopback only.
 */
#include "nodelink/nlint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"

#define NL_PREAMBLE_MAX 96
#define NL_PREAMBLE_MS  5000

struct nl_tunnel {
	struct nodelink *nl;
	int (*resolve)(void *arg, const char *sandbox, char addr[128]);
	void *arg;
	int lfd, wake[2];
	unsigned port;
	pthread_t listener;
	atomic_bool stop;
	atomic_int conns;
};

struct tconn {
	struct nl_tunnel *t;
	int fd;
};

/* The preamble line into line (NUL instead of '\n'); -1 when bad. */
static int
read_line(int fd, char line[NL_PREAMBLE_MAX + 1])
{
	int64_t deadline = nl_deadline(NL_PREAMBLE_MS);
	size_t n = 0;

	while (n < NL_PREAMBLE_MAX) {
		ssize_t r = read(fd, line + n, 1);

		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (nl_wait_fd(fd, POLLIN, deadline) < 0)
				return -1;
			continue;
		}
		if (r <= 0)
			return -1;
		if (line[n] == '\n') {
			line[n] = '\0';
			return 0;
		}
		n++;
	}
	return -1;
}

/* "SBX <sandbox> <port>": the sandbox [A-Za-z0-9_-], 1 to 64 bytes. */
static int
parse_line(const char *line, char sandbox[65], long *port)
{
	const char *id = line + 4, *sp;
	char *end;
	size_t n;

	if (strncmp(line, "SBX ", 4) != 0 || (sp = strchr(id, ' ')) == NULL)
		return -1;
	n = (size_t)(sp - id);
	if (n == 0 || n > 64 ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyz"
	               "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	               "0123456789_-") != n)
		return -1;
	if (sp[1] < '1' || sp[1] > '9')
		return -1;
	errno = 0;
	*port = strtol(sp + 1, &end, 10);
	if (errno != 0 || *end != '\0' || *port < 1 || *port > 65535)
		return -1;
	memcpy(sandbox, id, n);
	sandbox[n] = '\0';
	return 0;
}

static void *
tconn_main(void *arg)
{
	struct tconn *c = arg;
	char line[NL_PREAMBLE_MAX + 1], sandbox[65], addr[128];
	struct err e = {0};
	struct jv *req = NULL;
	long port;
	int sfd = -1;

	if (read_line(c->fd, line) < 0 || parse_line(line, sandbox, &port) < 0)
		goto out;
	if (c->t->resolve(c->t->arg, sandbox, addr) < 0)
		goto out;
	req = jv_obj();
	jv_set_str(req, "op", "preview");
	jv_set_str(req, "sandbox", sandbox);
	jv_set_int(req, "port", port);
	if (nl_stream(c->t->nl, addr, NL_ROLE_NODE, req, NULL, &sfd, &e) < 0) {
		log_warn("preview of %s through %s: %s", sandbox, addr, e.msg);
		goto out;
	}
	/* The pump owns both fds from here, closed or not. */
	nl_pump(c->fd, sfd);
	c->fd = -1;
out:
	jv_free(req);
	if (c->fd >= 0)
		close(c->fd);
	atomic_fetch_sub(&c->t->conns, 1);
	free(c);
	return NULL;
}

static void
accept_one(struct nl_tunnel *t)
{
	int fd = accept4(t->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct tconn *c;

	if (fd < 0)
		return;
	c = malloc(sizeof(*c));
	if (c == NULL || atomic_fetch_add(&t->conns, 1) >= (int)NL_STREAMS) {
		if (c != NULL)
			atomic_fetch_sub(&t->conns, 1);
		free(c);
		close(fd);
		return;
	}
	c->t = t;
	c->fd = fd;
	if (nl_spawn(tconn_main, c) < 0) {
		atomic_fetch_sub(&t->conns, 1);
		close(fd);
		free(c);
	}
}

static void *
tunnel_main(void *arg)
{
	struct nl_tunnel *t = arg;

	while (!t->stop) {
		struct pollfd p[2] = {{.fd = t->lfd, .events = POLLIN},
		                      {.fd = t->wake[0], .events = POLLIN}};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			accept_one(t);
	}
	return NULL;
}

static int
loopback_listen(unsigned *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int
nl_tunnel_start(struct nl_tunnel **out, struct nodelink *nl,
                int (*resolve)(void *arg, const char *sandbox, char addr[128]),
                void *arg, struct err *e)
{
	struct nl_tunnel *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return ERR_INTERNAL(e, "out of memory");
	t->nl = nl;
	t->resolve = resolve;
	t->arg = arg;
	t->lfd = loopback_listen(&t->port);
	if (t->lfd < 0) {
		free(t);
		return ERR_INTERNAL(e, "cannot listen on loopback: %s",
		                    strerror(errno));
	}
	if (pipe2(t->wake, O_CLOEXEC) < 0) {
		close(t->lfd);
		free(t);
		return ERR_INTERNAL(e, "cannot start the preview tunnel");
	}
	if (pthread_create(&t->listener, NULL, tunnel_main, t) != 0) {
		close(t->wake[0]);
		close(t->wake[1]);
		close(t->lfd);
		free(t);
		return ERR_INTERNAL(e, "cannot start the preview tunnel");
	}
	*out = t;
	return 0;
}

void
nl_tunnel_stop(struct nl_tunnel *t)
{
	if (t == NULL)
		return;
	t->stop = true;
	if (write(t->wake[1], "x", 1) < 0) {
		/* the listener wakes on its next connection anyway */
	}
	pthread_join(t->listener, NULL);
	/* Connections being set up finish on their own (each within the
	 * preamble's and a call's deadline); they hold t until then. */
	while (atomic_load(&t->conns) > 0)
		usleep(10000);
	close(t->lfd);
	close(t->wake[0]);
	close(t->wake[1]);
	free(t);
}

unsigned
nl_tunnel_port(const struct nl_tunnel *t)
{
	return t->port;
}
