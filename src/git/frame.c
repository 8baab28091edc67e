/*
 * frame.c - the frames both ends of a git helper's socket speak (the
 * protocol is helper.c's): a 32-bit length (network order, as the frames
 * also cross nodes: relay.c), then that many bytes, read against a
 * deadline of gitws_now_ms.  Used by the daemon's side (spawn.c,
 * session.c, relay.c) and the helper's (helper.c) alike, so it calls
 * none of them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "git/internal.h"
#include "lib/buf.h"

int64_t
gitws_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1; /* the peer died; its exit says why */
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int
gitws_frame_send(int fd, const void *p, size_t n)
{
	uint32_t len = htonl((uint32_t)n);

	if (n > UINT32_MAX || send_all(fd, &len, sizeof(len)) < 0)
		return -1;
	return send_all(fd, p, n);
}

/* n bytes into p, waiting until deadline (-1: forever): 0, -1, 1 late. */
static int
recv_all(int fd, void *p, size_t n, int64_t deadline)
{
	char *c = p;

	while (n > 0) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int64_t left = deadline < 0 ? -1 : deadline - gitws_now_ms();
		ssize_t r;

		if (deadline >= 0 && left <= 0)
			return 1;
		if (poll(&pf, 1,
		         left < 0 ? -1 : (int)(left > 60000 ? 60000 : left)) <=
		    0)
			continue;
		r = recv(fd, c, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int
gitws_frame_recv(int fd, struct buf *b, int64_t deadline)
{
	char chunk[65536];
	uint32_t len;
	int rc;

	buf_reset(b);
	if ((rc = recv_all(fd, &len, sizeof(len), deadline)) != 0)
		return rc;
	len = ntohl(len);
	if (len > (b->max ? b->max : BUF_DEFAULT_MAX))
		return -1;
	while (len > 0) {
		size_t n = len < sizeof(chunk) ? len : sizeof(chunk);

		if ((rc = recv_all(fd, chunk, n, deadline)) != 0)
			return rc;
		if (buf_append(b, chunk, n) < 0)
			return -1;
		len -= (uint32_t)n;
	}
	return 0;
}

int
gitws_frame_send_json(int fd, const struct jv *v)
{
	struct buf b;
	int rc = -1;

	buf_init(&b, GITWS_HELPER_OUT_MAX);
	if (jv_dump(v, &b) == 0)
		rc = gitws_frame_send(fd, b.data, b.len);
	buf_release(&b);
	return rc;
}

int
gitws_frame_send_err(int fd, const struct err *e)
{
	struct jv *o = jv_obj(), *ev = jv_obj();
	int rc;

	jv_set_int(ev, "status", e->status ? e->status : 500);
	jv_set_str(ev, "code", e->code[0] ? e->code : "internal");
	jv_set_str(ev, "message", e->msg);
	jv_set(o, "error", ev);
	rc = gitws_frame_send_json(fd, o);
	jv_free(o);
	return rc;
}
