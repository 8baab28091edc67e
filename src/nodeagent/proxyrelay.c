/*
 * The credential proxy's door on this node: sandboxes here are given
 * the same proxy URL as everywhere (the gateway and the proxy port, the
 * same on every node), and this listener relays each connection to the
 * control plane's proxy over a nodelink "proxy" stream.  The agent holds
 * no key and checks no token: the proxy does, and a token works only
 * from its own sandbox's address on its own node.  The stream's header
 * carries the address the kernel gave this connection; the control
 * plane writes the proxy's first line ("SBXPEER <node> <ip>\n") itself,
 * naming the node by its certificate.
 *
 * The gateway address exists only while the bridge does (a sandbox of
 * this node uses the network), so the socket binds with IP_FREEBIND.
 * Only connections from the sandbox subnet are relayed, at most
 * AGENT_PROXY_CONNS at once and AGENT_PROXY_ADDR from one address (so
 * one sandbox cannot take the streams the control plane needs).  Each
 * relay is a worker copying both ways, ended by both half-closes or
 * AGENT_RELAY_IDLE_S without a byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/log.h"
#include "nodeagent/internal.h"
#include "sbnet/sbnet.h"

#define RELAY_BUF (16u << 10)

struct relay {
	struct agent *a;
	int fd;
	uint32_t addr; /* network order */
	char ip[INET_ADDRSTRLEN];
};

/* One direction: from -> to; false once from has ended (to then
 * half-closed). */
static bool
copy_once(int from, int to, char *buf, bool *open)
{
	ssize_t n = read(from, buf, RELAY_BUF);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0 || fileio_send_all(to, buf, (size_t)n) < 0) {
		shutdown(to, SHUT_WR);
		*open = false;
		return false;
	}
	return true;
}

static void
pump(int a, int b)
{
	char *buf = malloc(RELAY_BUF);
	bool a_open = true, b_open = true;

	while (buf && (a_open || b_open)) {
		struct pollfd pf[2] = {
		    {.fd = a_open ? a : -1, .events = POLLIN},
		    {.fd = b_open ? b : -1, .events = POLLIN}};
		int rc = poll(pf, 2, AGENT_RELAY_IDLE_S * 1000);
		if (rc == 0)
			break; /* idle */
		if (rc < 0 && errno != EINTR)
			break;
		if (a_open && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			copy_once(a, b, buf, &a_open);
		if (b_open && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
			copy_once(b, a, buf, &b_open);
	}
	free(buf);
}

/* Counts a relay from ip in; false past AGENT_PROXY_CONNS in all or
 * AGENT_PROXY_ADDR from ip (one sandbox cannot take the node's
 * streams). */
static bool
relay_admit(struct agent *a, uint32_t ip)
{
	struct agent_relay_addr *slot = NULL, *free_slot = NULL;
	bool ok = false;

	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < AGENT_PROXY_CONNS; i++) {
		struct agent_relay_addr *r = &a->relay_addrs[i];
		if (r->n && r->ip == ip)
			slot = r;
		else if (!r->n && free_slot == NULL)
			free_slot = r;
	}
	if (slot == NULL && free_slot != NULL) {
		slot = free_slot;
		slot->ip = ip;
	}
	if (slot && a->relays < AGENT_PROXY_CONNS &&
	    slot->n < AGENT_PROXY_ADDR) {
		slot->n++;
		a->relays++;
		ok = true;
	}
	pthread_mutex_unlock(&a->mu);
	return ok;
}

static void
relay_release(struct agent *a, uint32_t ip)
{
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < AGENT_PROXY_CONNS; i++)
		if (a->relay_addrs[i].n && a->relay_addrs[i].ip == ip) {
			a->relay_addrs[i].n--;
			a->relays--;
			break;
		}
	pthread_mutex_unlock(&a->mu);
}

static void *
relay_main(void *arg)
{
	struct relay *r = arg;
	struct agent *a = r->a;
	struct jv *req = jv_obj();
	struct err e = {0};
	int up = -1;

	jv_set_str(req, "op", "proxy");
	jv_set_str(req, "ip", r->ip);
	if (nl_stream(agent_nl(a), a->control, NL_ROLE_CONTROL, req, NULL, &up,
	              &e) < 0) {
		log_warn("node agent: proxy relay for %s: %s", r->ip, e.msg);
	} else {
		/* The control plane writes the SBXPEER line itself, naming
		 * this node by its certificate and the address sent here. */
		pump(r->fd, up);
		close(up);
	}
	jv_free(req);
	close(r->fd);
	relay_release(a, r->addr);
	free(r);
	agent_worker_done(a);
	return NULL;
}

/* A connection from the sandbox subnet, relayed; anything else closed. */
static void
take(struct agent *a, int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct sbnet_cidr c;
	struct relay *r;

	if (getpeername(fd, (struct sockaddr *)&sin, &len) < 0 ||
	    sin.sin_family != AF_INET ||
	    sbnet_cidr_parse(a->net.subnet, &c) < 0 ||
	    (ntohl(sin.sin_addr.s_addr) & c.mask) != c.net ||
	    (r = calloc(1, sizeof(*r))) == NULL) {
		close(fd);
		return;
	}
	r->a = a;
	r->fd = fd;
	r->addr = sin.sin_addr.s_addr;
	inet_ntop(AF_INET, &sin.sin_addr, r->ip, sizeof(r->ip));
	if (!relay_admit(a, r->addr)) {
		close(fd);
		free(r);
	} else if (agent_spawn(a, relay_main, r) < 0) {
		relay_release(a, r->addr);
		close(fd);
		free(r);
	}
}

static void *
accept_main(void *arg)
{
	struct agent *a = arg;

	while (!atomic_load(&a->stop)) {
		struct pollfd pf = {.fd = a->relay_fd, .events = POLLIN};
		if (poll(&pf, 1, 250) != 1)
			continue;
		int fd = accept4(a->relay_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			take(a, fd);
	}
	return NULL;
}

int
agent_relay_start(struct agent *a, struct err *e)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_port =
	                              htons((uint16_t)a->net.proxy_port)};
	int one = 1;

	if (inet_pton(AF_INET, a->net.gateway, &sin.sin_addr) != 1)
		return ERR_INTERNAL(e, "bad gateway %s", a->net.gateway);
	a->relay_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->relay_fd < 0 ||
	    setsockopt(a->relay_fd, SOL_SOCKET, SO_REUSEADDR, &one,
	               sizeof(one)) < 0 ||
	    setsockopt(a->relay_fd, IPPROTO_IP, IP_FREEBIND, &one,
	               sizeof(one)) < 0 ||
	    bind(a->relay_fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(a->relay_fd, 128) < 0) {
		err_set(e, 500, "internal", "the proxy's door on %s:%u: %s",
		        a->net.gateway, a->net.proxy_port, strerror(errno));
		if (a->relay_fd >= 0)
			close(a->relay_fd);
		a->relay_fd = -1;
		return -1;
	}
	if (pthread_create(&a->relay_thread, NULL, accept_main, a) != 0) {
		close(a->relay_fd);
		a->relay_fd = -1;
		return ERR_INTERNAL(e, "cannot start the proxy relay");
	}
	a->relay_on = true;
	log_info("node agent: credential proxy door on %s:%u", a->net.gateway,
	         a->net.proxy_port);
	return 0;
}

void
agent_relay_stop(struct agent *a)
{
	if (!a->relay_on)
		return;
	atomic_store(&a->stop, true);
	pthread_join(a->relay_thread, NULL);
	close(a->relay_fd);
	a->relay_on = false;
}
