/*
 * The proxy's second door (swarm mode): a unix socket,
 * <data>/run/proxy-relay.sock (0600, in a 0700 directory: the daemon's
 * own user only), for the connections the control plane's nodelink
 * server relays from node agents (a sandbox on another node calling its
 * node's gateway).  Each connection starts with one line,
 * "SBXPEER <node> <ip>\n": the node the sandbox runs on and its address
 * on that node's bridge.  The line is read here (at most
 * PROXY_RELAY_LINE_MAX bytes within PROXY_RELAY_LINE_MS, by a thread of
 * its own, at most PROXY_RELAY_PENDING at once), then the connection is
 * handed to the proxy's server as if it came from <ip>, and the node is
 * kept for admit.c: a token works only from its own sandbox's address
 * on its own node.  The per-sandbox proxy token is still what
 * authorises; the line is trusted only because only the daemon can
 * open this socket.
 *
 * Rejected: a second libmicrohttpd server on the socket (its client
 * address would be AF_UNIX, so the address checks and per-address caps
 * would need a second path), and trusting an address the agent sends
 * in its nodelink header without the node beside it (two nodes' bridges
 * use the same addresses).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "proxy/internal.h"

struct relay_conn {
	struct proxy *px;
	int fd;
};

/* Notes fd as node's, for admit_on_conn to take; -1 when full. */
static int
pending_put(struct proxy *px, int fd, const char *node)
{
	time_t now = time(NULL);
	int rc = -1;

	pthread_mutex_lock(&px->mu);
	for (size_t i = 0; i < PROXY_RELAY_PENDING; i++) {
		struct proxy_peer *p = &px->peers[i];
		if (p->fd > 0 && now - p->at <= PROXY_RELAY_STALE_S)
			continue;
		p->fd = fd;
		p->at = now;
		snprintf(p->node, sizeof(p->node), "%s", node);
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&px->mu);
	return rc;
}

void
proxy_peer_take(struct proxy *px, int fd, char node[64])
{
	node[0] = '\0';
	pthread_mutex_lock(&px->mu);
	for (size_t i = 0; fd > 0 && i < PROXY_RELAY_PENDING; i++) {
		struct proxy_peer *p = &px->peers[i];
		if (p->fd != fd)
			continue;
		snprintf(node, 64, "%s", p->node);
		p->fd = 0;
		break;
	}
	pthread_mutex_unlock(&px->mu);
}

/* Reads the first line (up to '\n', bytes beyond it are not read). */
static int
read_line(int fd, char *line, size_t max)
{
	struct timespec t0;
	size_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n + 1 < max) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left =
		    PROXY_RELAY_LINE_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
		                           (t.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return -1;
		ssize_t k = read(fd, line + n, 1); /* one byte: no over-read */
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		if (line[n] == '\n') {
			line[n] = '\0';
			return 0;
		}
		n++;
	}
	return -1;
}

/* "SBXPEER <node> <ip>": node [A-Za-z0-9._-]{1,63}, ip IPv4. */
static int
parse_line(char *line, char node[64], struct sockaddr_in *sin)
{
	char *save = NULL, *w = strtok_r(line, " ", &save);
	char *n = strtok_r(NULL, " ", &save), *ip = strtok_r(NULL, " ", &save);

	if (w == NULL || strcmp(w, "SBXPEER") != 0 || n == NULL || ip == NULL ||
	    strtok_r(NULL, " ", &save) != NULL || strlen(n) > 63 ||
	    strspn(n, "abcdefghijklmnopqrstuvwxyz"
	              "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	              "0123456789._-") != strlen(n))
		return -1;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (inet_pton(AF_INET, ip, &sin->sin_addr) != 1 ||
	    sin->sin_addr.s_addr == 0)
		return -1;
	snprintf(node, 64, "%s", n);
	return 0;
}

static void *
conn_main(void *arg)
{
	struct relay_conn *c = arg;
	struct proxy *px = c->px;
	char line[PROXY_RELAY_LINE_MAX], node[64];
	struct sockaddr_in sin;
	int fd = c->fd;

	free(c);
	if (read_line(fd, line, sizeof(line)) < 0 ||
	    parse_line(line, node, &sin) < 0) {
		log_warn(
		    "proxy: a relayed connection without its SBXPEER line");
		close(fd);
	} else if (px->mhd == NULL || pending_put(px, fd, node) < 0) {
		close(fd);
	} else if (MHD_add_connection(px->mhd, fd, (struct sockaddr *)&sin,
	                              sizeof(sin)) != MHD_YES) {
		proxy_peer_take(px, fd, node); /* MHD closed it */
	}
	atomic_fetch_sub(&px->relay_busy, 1);
	return NULL;
}

static void *
accept_main(void *arg)
{
	struct proxy *px = arg;

	while (!atomic_load(&px->stopping)) {
		struct pollfd pf = {.fd = px->relay_fd, .events = POLLIN};
		if (poll(&pf, 1, 250) <= 0)
			continue;
		int fd = accept4(px->relay_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		struct relay_conn *c = malloc(sizeof(*c));
		pthread_attr_t at;
		pthread_t t;
		if (c == NULL || atomic_fetch_add(&px->relay_busy, 1) >=
		                     PROXY_RELAY_PENDING) {
			atomic_fetch_sub(&px->relay_busy, c ? 1 : 0);
			free(c);
			close(fd);
			continue;
		}
		*c = (struct relay_conn){px, fd};
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, conn_main, c) != 0) {
			atomic_fetch_sub(&px->relay_busy, 1);
			free(c);
			close(fd);
		}
		pthread_attr_destroy(&at);
	}
	return NULL;
}

int
proxy_relay_start(struct proxy *px, const char *data_dir)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char dir[sizeof(sun.sun_path)];

	px->relay_fd = -1;
	snprintf(dir, sizeof(dir), "%s/run", data_dir);
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || chmod(dir, 0700) < 0 ||
	    (size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir,
	                     PROXY_RELAY_SOCK) >= sizeof(sun.sun_path))
		goto fail;
	(void)unlink(sun.sun_path);
	px->relay_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (px->relay_fd < 0 ||
	    bind(px->relay_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(sun.sun_path, 0600) < 0 ||
	    listen(px->relay_fd, PROXY_BACKLOG) < 0 ||
	    pthread_create(&px->relay_thread, NULL, accept_main, px) != 0)
		goto fail;
	px->relay_on = true;
	log_info("credential proxy relay listening on %s", sun.sun_path);
	return 0;
fail:
	log_error("proxy: the relay socket %s/%s: %s", dir, PROXY_RELAY_SOCK,
	          strerror(errno));
	if (px->relay_fd >= 0)
		close(px->relay_fd);
	px->relay_fd = -1;
	return -1;
}

void
proxy_relay_stop(struct proxy *px)
{
	if (!px->relay_on)
		return;
	pthread_join(px->relay_thread, NULL); /* px->stopping is set */
	close(px->relay_fd);
	/* Lines still being read: their threads end within
	 * PROXY_RELAY_LINE_MS and must not find px gone. */
	for (int i = 0; i < 40 && atomic_load(&px->relay_busy) > 0; i++)
		usleep(100 * 1000);
}
