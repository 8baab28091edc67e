/*
 * Pumps: a TLS session joined to a plain fd (a stream op's two ends),
 * and two plain sockets joined (the relays).  One thread per pump, a
 * poll(2) on both sides, bytes copied through a small buffer: a side
 * that does not read stops the other side's reads (TCP's own
 * back-pressure), never a queue in memory.  Half-closes cross over:
 * EOF on the plain fd sends TLS close_notify (gnutls_bye SHUT_WR), and
 * close_notify from the peer is shutdown(SHUT_WR) of the plain fd, so
 * "send a tar, half-close, read the trailer" works end to end.  A pump
 * ends when both halves closed, on an error, or after idle_ms with no
 * byte either way.
 *
 * Records GnuTLS already decrypted are not visible to poll(2), hence
 * gnutls_record_check_pending before every poll.
 */
#include "nodelink/nlint.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define NL_PUMP_BUF (16u << 10)

atomic_int nl_streams_open;

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* All n bytes to a plain fd (socket or pipe) by deadline. */
static int
fd_send(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			if (nl_wait_fd(fd, POLLOUT, deadline) < 0)
				return -1;
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One read of the plain fd: >0 bytes, 0 EOF, -1 error, -2 nothing yet. */
static ssize_t
fd_read(int fd, char *buf, size_t cap)
{
	ssize_t r = read(fd, buf, cap);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return -2;
	return r;
}

/* TLS -> fd once; -1 ends the pump. */
static int
tls_to_fd(gnutls_session_t s, int fd, bool *open, char *buf, int idle_ms)
{
	ssize_t r = gnutls_record_recv(s, buf, NL_PUMP_BUF);

	if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
		return 0;
	if (r < 0)
		return -1;
	if (r == 0) {
		shutdown(fd, SHUT_WR);
		*open = false;
		return 0;
	}
	return fd_send(fd, buf, (size_t)r, nl_deadline(idle_ms));
}

static int
fd_to_tls(gnutls_session_t s, int tcp, int fd, bool *open, char *buf,
          int idle_ms)
{
	ssize_t r = fd_read(fd, buf, NL_PUMP_BUF);

	if (r == -2)
		return 0;
	if (r < 0)
		return -1;
	if (r == 0) {
		nl_tls_bye(s, tcp, nl_deadline(idle_ms));
		*open = false;
		return 0;
	}
	return nl_tls_send(s, tcp, buf, (size_t)r, nl_deadline(idle_ms));
}

void
nl_tls_pump(gnutls_session_t s, int tcp, int fd, int idle_ms)
{
	char *buf = malloc(NL_PUMP_BUF);
	bool tls_in = true, fd_in = true;
	/* With no idle limit (-1), a write still gives up after the
	 * default: a side that stops reading does not hold us forever. */
	int poll_ms = idle_ms < 0   ? -1
	              : idle_ms > 0 ? idle_ms
	                            : NL_STREAM_IDLE_MS;

	if (idle_ms <= 0)
		idle_ms = NL_STREAM_IDLE_MS;
	if (buf == NULL)
		return;
	set_nonblock(fd);
	while (tls_in || fd_in) {
		struct pollfd p[2] = {
		    {.fd = tls_in ? tcp : -1, .events = POLLIN},
		    {.fd = fd_in ? fd : -1, .events = POLLIN}};
		int n;

		if (tls_in && gnutls_record_check_pending(s) > 0) {
			n = 1;
			p[0].revents = POLLIN;
		} else {
			n = poll(p, 2, poll_ms);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (p[0].revents != 0 &&
		    tls_to_fd(s, fd, &tls_in, buf, idle_ms) < 0)
			break;
		if (p[1].revents != 0 &&
		    fd_to_tls(s, tcp, fd, &fd_in, buf, idle_ms) < 0)
			break;
	}
	free(buf);
}

/* from -> to once; -1 ends the pump. */
static int
plain_step(int from, int to, bool *open, char *buf, int idle_ms)
{
	ssize_t r = fd_read(from, buf, NL_PUMP_BUF);

	if (r == -2)
		return 0;
	if (r < 0)
		return -1;
	if (r == 0) {
		shutdown(to, SHUT_WR);
		*open = false;
		return 0;
	}
	return fd_send(to, buf, (size_t)r, nl_deadline(idle_ms));
}

struct plain {
	int a, b;
};

static void *
plain_main(void *arg)
{
	struct plain *pp = arg;
	char *buf = malloc(NL_PUMP_BUF);
	bool a_in = true, b_in = true;

	while (buf != NULL && (a_in || b_in)) {
		struct pollfd p[2] = {
		    {.fd = a_in ? pp->a : -1, .events = POLLIN},
		    {.fd = b_in ? pp->b : -1, .events = POLLIN}};
		int n = poll(p, 2, NL_STREAM_IDLE_MS);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (p[0].revents != 0 &&
		    plain_step(pp->a, pp->b, &a_in, buf, NL_STREAM_IDLE_MS) < 0)
			break;
		if (p[1].revents != 0 &&
		    plain_step(pp->b, pp->a, &b_in, buf, NL_STREAM_IDLE_MS) < 0)
			break;
	}
	free(buf);
	close(pp->a);
	close(pp->b);
	free(pp);
	atomic_fetch_sub(&nl_streams_open, 1);
	return NULL;
}

int
nl_spawn(void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	pthread_t t;
	int rc;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256u << 10);
	rc = pthread_create(&t, &at, fn, arg);
	pthread_attr_destroy(&at);
	return rc == 0 ? 0 : -1;
}

int
nl_pump(int a, int b)
{
	struct plain *pp = malloc(sizeof(*pp));

	if (pp == NULL ||
	    atomic_fetch_add(&nl_streams_open, 1) >= (int)NL_STREAMS)
		goto fail;
	set_nonblock(a);
	set_nonblock(b);
	pp->a = a;
	pp->b = b;
	if (nl_spawn(plain_main, pp) == 0)
		return 0;
fail:
	if (pp != NULL)
		atomic_fetch_sub(&nl_streams_open, 1);
	free(pp);
	close(a);
	close(b);
	return -1;
}
