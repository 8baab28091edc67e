/*
 * health.c - the web process's HTTP health check.
 *
 * One check at a time, as a small state machine on a non-blocking TCP
 * socket: connect, send "GET <path> HTTP/1.0", read the status line, close.
 * The whole check has HEALTH_TIMEOUT_MS; the loop polls the socket like any
 * other fd, so a server that accepts and never answers costs nothing but
 * the timeout.  Only the status line is read (at most HEALTH_LINE_MAX
 * bytes): any status below 500 passes, so a 404 from an app without the
 * health route still proves the server is up.
 *
 * The check targets the first non-loopback IPv4 address of the container
 * (127.0.0.1 when there is none): a server bound to 127.0.0.1 only would
 * pass a loopback check and still be unreachable from the edge proxy.
 * The address is looked up for every check; interfaces can change and a
 * getifaddrs() every 250 ms costs nothing worth caching.
 *
 * Policy, in health_note(): until the first pass the state is "starting"
 * whatever fails, and checks come HEALTH_FIRST_MS after the spawn, then
 * twice as far apart each time up to HEALTH_STARTING_MS (5, 10, 20, 40,
 * 50, 50 … ms), so readiness is seen within tens of milliseconds of the
 * port answering rather than a fixed period later; after it, HEALTH_FAILS
 * failures in a row make it "error", and any pass makes it "ready" again.
 *
 * Rejected: a blocking connect with a socket timeout (stalls the loop);
 * a loopback-only check (see above); keep-alive (one request per check
 * keeps the server's view simple).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "health.h"

void
health_init(struct health *h)
{
	memset(h, 0, sizeof(*h));
	h->fd = -1;
	h->next_at = -1;
	health_set(h, HEALTH_NONE, "no web process");
}

static void
health_cancel(struct health *h)
{
	if (h->fd != -1)
		close(h->fd);
	h->fd = -1;
	h->phase = HEALTH_IDLE;
}

void
health_set(struct health *h, enum health_state state, const char *detail)
{
	health_cancel(h);
	h->state = state;
	h->was_ready = false;
	h->fails = 0;
	h->next_at = -1;
	snprintf(h->detail, sizeof(h->detail), "%s", detail);
}

void
health_start(struct health *h, long long now)
{
	health_set(h, HEALTH_STARTING, "waiting for the first check");
	h->gap_ms = HEALTH_FIRST_MS;
	h->next_at = now + h->gap_ms;
}

bool
health_note(struct health *h, bool ok, long long now)
{
	bool first = ok && !h->was_ready;

	if (ok) {
		h->state = HEALTH_READY;
		h->was_ready = true;
		h->fails = 0;
	} else if (h->fails < HEALTH_FAILS) {
		h->fails++;
	}
	if (!ok && h->was_ready && h->fails >= HEALTH_FAILS)
		h->state = HEALTH_ERROR;
	if (h->was_ready) {
		h->next_at = now + HEALTH_READY_MS;
		return first;
	}
	/*
	 * Until the first pass, a tight retry with a short backoff: a
	 * refused connect to our own address costs next to nothing, and the
	 * first pass is what says "ready" to the edge's status and to a task.
	 */
	h->gap_ms = h->gap_ms * 2 < HEALTH_STARTING_MS ? h->gap_ms * 2
	                                               : HEALTH_STARTING_MS;
	h->next_at = now + h->gap_ms;
	return first;
}

static bool __attribute__((format(printf, 4, 5)))
health_finish(struct health *h, bool ok, long long now, const char *fmt, ...)
{
	char why[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(h->detail, sizeof(h->detail), "%s: %s", h->target, why);
	health_cancel(h);
	return health_note(h, ok, now);
}

static struct in_addr
health_local_addr(void)
{
	struct in_addr addr = {.s_addr = htonl(INADDR_LOOPBACK)};
	struct ifaddrs *all, *i;

	if (getifaddrs(&all) == -1)
		return addr;
	for (i = all; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		addr = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
		break;
	}
	freeifaddrs(all);
	return addr;
}

static bool
health_begin(struct health *h, long long now, unsigned port, const char *path)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char ip[INET_ADDRSTRLEN];

	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr = health_local_addr();
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
	snprintf(h->target, sizeof(h->target), "%s:%u", ip, port);
	h->req_len = (size_t)snprintf(
	    h->req, sizeof(h->req),
	    "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
	h->req_off = 0;
	h->line_len = 0;
	h->deadline = now + HEALTH_TIMEOUT_MS;
	h->next_at = -1;
	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd == -1)
		return health_finish(h, false, now, "socket: %s",
		                     strerror(errno));
	h->phase = HEALTH_CONNECTING;
	if (connect(h->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return health_on_poll(h, POLLOUT, now);
	if (errno != EINPROGRESS)
		return health_finish(h, false, now, "%s", strerror(errno));
	return false;
}

int
health_parse_status(const char *buf, size_t len, bool eof)
{
	static const char proto[] = "HTTP/d.d ddd";
	const char *nl = memchr(buf, '\n', len);
	size_t n = nl != NULL ? (size_t)(nl - buf) : len, i;

	if (nl == NULL && !eof && len < HEALTH_LINE_MAX)
		return 0;
	if (n < sizeof(proto) - 1)
		return -1;
	for (i = 0; i < sizeof(proto) - 1; i++) {
		if (proto[i] == 'd' ? (buf[i] < '0' || buf[i] > '9')
		                    : buf[i] != proto[i])
			return -1;
	}
	if (n > i && buf[i] != ' ' && buf[i] != '\r')
		return -1;
	if (buf[9] == '0')
		return -1;
	return (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
}

static bool
health_read(struct health *h, long long now)
{
	ssize_t n;
	int code;

	n = read(h->fd, h->line + h->line_len, sizeof(h->line) - h->line_len);
	if (n == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return false;
		return health_finish(h, false, now, "%s", strerror(errno));
	}
	h->line_len += (size_t)n;
	code = health_parse_status(h->line, h->line_len, n == 0);
	if (code == 0)
		return false;
	if (code < 0)
		return health_finish(h, false, now, "%s",
		                     h->line_len == 0 ? "closed without answer"
		                                      : "not an HTTP answer");
	return health_finish(h, code < 500, now, "HTTP %d", code);
}

static bool
health_send(struct health *h, long long now)
{
	ssize_t n;

	n = send(h->fd, h->req + h->req_off, h->req_len - h->req_off,
	         MSG_NOSIGNAL);
	if (n == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return false;
		return health_finish(h, false, now, "%s", strerror(errno));
	}
	h->req_off += (size_t)n;
	if (h->req_off == h->req_len)
		h->phase = HEALTH_READING;
	return false;
}

bool
health_on_poll(struct health *h, short revents, long long now)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if (revents == 0 || h->fd == -1)
		return false;
	if (h->phase == HEALTH_CONNECTING) {
		if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
			err = errno;
		if (err != 0)
			return health_finish(h, false, now, "%s",
			                     strerror(err));
		h->phase = HEALTH_SENDING;
	}
	if (h->phase == HEALTH_SENDING)
		return health_send(h, now);
	return health_read(h, now);
}

bool
health_pollfd(const struct health *h, struct pollfd *pfd)
{
	if (h->fd == -1)
		return false;
	pfd->fd = h->fd;
	pfd->events = h->phase == HEALTH_READING ? POLLIN : POLLOUT;
	pfd->revents = 0;
	return true;
}

bool
health_tick(struct health *h, long long now, unsigned port, const char *path)
{
	if (h->phase != HEALTH_IDLE && now >= h->deadline)
		return health_finish(h, false, now, "no answer within %d ms",
		                     HEALTH_TIMEOUT_MS);
	if (h->phase == HEALTH_IDLE && h->next_at != -1 && now >= h->next_at)
		return health_begin(h, now, port, path);
	return false;
}

long long
health_next(const struct health *h)
{
	return h->phase != HEALTH_IDLE ? h->deadline : h->next_at;
}

const char *
health_state_name(enum health_state state)
{
	static const char *const names[] = {
	    [HEALTH_NONE] = "none",
	    [HEALTH_STARTING] = "starting",
	    [HEALTH_READY] = "ready",
	    [HEALTH_ERROR] = "error",
	};

	return names[state];
}
