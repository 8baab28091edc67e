/*
 * A connection's sockets and buffers, below everything that decides
 * what goes through them: the epoll registration of a side (edge_watch,
 * and edge_forget for a socket closed while its batch is handled), the
 * app side's close, and the reads into and writes out of a direction's
 * buffer (struct edge_io) under the edge's memory budget (pool.c).
 *
 * The state machine (conn.c), the upstream connection (upstream.c) and
 * our own answers (pages.c) all call these; none of these calls back,
 * so the edge's files form no cycle.  Rejected: keeping the reads and
 * writes in conn.c (they are its steps' tools, not its states, and
 * conn.c is long enough).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "edge/internal.h"

int
edge_watch(struct edge *e, struct edge_side *s)
{
	struct epoll_event ev = {
	    .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
	    .data.ptr = s,
	};

	return epoll_ctl(e->efd, EPOLL_CTL_ADD, s->fd, &ev);
}

void
edge_forget(struct edge *e, struct edge_side *s)
{
	for (int i = e->cur + 1; i < e->nev; i++)
		if (e->events[i].data.ptr == s)
			e->events[i].data.ptr = NULL;
}

void
edge_upstream_close(struct edge_conn *c)
{
	if (c->up.fd < 0)
		return;
	edge_forget(c->e, &c->up);
	close(c->up.fd);
	c->up = (struct edge_side){.fd = -1, .c = c};
	c->up_reused = false;
	if (c->up_api) { /* console.c counted it */
		c->e->api_conns--;
		if (c->client)
			c->client->api--;
	}
	c->up_api = false;
}

void
edge_io_release(struct edge_conn *c, struct edge_io *io)
{
	edge_buf_put(c->e, io->data, io->touched);
	io->data = NULL;
	io->touched = 0;
	buf_release(&io->out);
}

/* An empty buffer goes back to the pool between requests. */
void
edge_io_idle(struct edge_conn *c, struct edge_io *io)
{
	if (io->data == NULL || io->off != io->len)
		return;
	edge_buf_put(c->e, io->data, io->touched);
	io->data = NULL;
	io->touched = 0;
	io->off = io->parsed = io->len = 0;
}

/*
 * How far io may fill: up to limit bytes, and no page past what it
 * already touched once the edge's memory budget is spent (the
 * connection is then "starved" and run again by a tick with room).
 */
static size_t
io_room(struct edge_conn *c, struct edge_io *io, size_t limit)
{
	size_t room, free_, budget;

	if (limit > EDGE_MAX_BUFFERED)
		limit = EDGE_MAX_BUFFERED;
	room = limit > io->len ? limit - io->len : 0;
	free_ = io->touched > io->len ? io->touched - io->len : 0;
	budget = edge_buf_budget(c->e);

	if (room > free_ && room - free_ > budget) {
		room = free_ + budget / EDGE_PAGE_SIZE * EDGE_PAGE_SIZE;
		if (room == 0)
			c->starved = true;
	}
	return room;
}

/*
 * Reads what fits into io, at most limit bytes held: 1 read or EOF,
 * 0 nothing, -1 error.
 */
int
edge_read(struct edge_conn *c, struct edge_side *s, struct edge_io *io,
          size_t limit)
{
	size_t room;
	ssize_t n;

	if (s->fd < 0 || !s->rd || s->eof)
		return 0;
	if (io->data == NULL &&
	    (io->data = edge_buf_get(c->e, &io->touched)) == NULL)
		return -1;
	if (io->off == io->len) {
		io->off = io->parsed = io->len = 0;
	} else if (io->off > 0 && io->len > EDGE_MAX_BUFFERED / 4 * 3) {
		/* Rare: the other side is slow and we are near the end. */
		memmove(io->data, io->data + io->off, io->len - io->off);
		io->parsed -= io->off;
		io->len -= io->off;
		io->off = 0;
	}
	room = io_room(c, io, limit);
	if (room == 0)
		return 0; /* full: read again once the other side took some */
	n = recv(s->fd, io->data + io->len, room, 0);
	if (n > 0) {
		io->len += (size_t)n;
		edge_buf_touched(c->e, &io->touched, io->len);
		/* A short read emptied the socket; new data brings a new edge.
		 */
		if ((size_t)n < room && !s->rdhup)
			s->rd = false;
		c->last_io = c->e->now;
		return 1;
	}
	if (n == 0) {
		s->eof = true;
		s->rd = false;
		return 1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		s->rd = false;
		return 0;
	}
	return errno == EINTR ? 1 : -1;
}

/* A send that failed: 0 when it would block (s is not writable now). */
static int
write_failed(struct edge_side *s)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		s->wr = false;
		return 0;
	}
	return errno == EINTR ? 1 : -1;
}

/*
 * io->ext from its file: the head first (corked with MSG_MORE, so head
 * and body leave in the same segments), then sendfile.
 */
static int
write_file(struct edge_conn *c, struct edge_side *s, struct edge_io *io,
           size_t head)
{
	size_t ext = io->ext_len - io->ext_sent;
	off_t off = io->ext_off + (off_t)io->ext_sent;
	ssize_t r;

	if (head) {
		r = send(s->fd, io->out.data + io->out_sent, head,
		         MSG_NOSIGNAL | MSG_MORE);
		if (r < 0)
			return write_failed(s);
		io->out_sent += (size_t)r;
		c->last_io = c->e->now;
		if ((size_t)r < head) {
			s->wr = false;
			return 1;
		}
	}
	r = sendfile(s->fd, io->ext_fd, &off, ext);
	if (r < 0) {
		r = write_failed(s);
		return head && r == 0 ? 1 : (int)r;
	}
	io->ext_sent += (size_t)r;
	if ((size_t)r < ext)
		s->wr = false;
	c->last_io = c->e->now;
	return 1;
}

/*
 * Writes io->out, then io->ext (a body from the edge's memory), then
 * data[off, parsed): 1 wrote, 0 nothing, -1 error.
 */
int
edge_write(struct edge_conn *c, struct edge_side *s, struct edge_io *io)
{
	struct iovec v[3];
	struct msghdr m = {.msg_iov = v};
	size_t head = io->out.len - io->out_sent, body = io->parsed - io->off;
	size_t ext = io->ext_len - io->ext_sent, n;
	ssize_t r;

	if (s->fd < 0 || !s->wr || s->shut || head + ext + body == 0)
		return 0;
	if (io->ext_file && ext)
		return write_file(c, s, io, head);
	if (head)
		v[m.msg_iovlen++] =
		    (struct iovec){io->out.data + io->out_sent, head};
	if (ext)
		v[m.msg_iovlen++] =
		    (struct iovec){(char *)io->ext + io->ext_sent, ext};
	if (body)
		v[m.msg_iovlen++] = (struct iovec){io->data + io->off, body};
	r = sendmsg(s->fd, &m, MSG_NOSIGNAL);
	if (r < 0)
		return write_failed(s);
	n = (size_t)r;
	if (n < head + ext + body)
		s->wr = false;
	if (n <= head) {
		io->out_sent += n;
		n = 0;
	} else {
		io->out_sent = io->out.len;
		n -= head;
	}
	if (n <= ext) {
		io->ext_sent += n;
	} else {
		io->ext_sent = io->ext_len;
		io->off += n - ext;
	}
	c->last_io = c->e->now;
	return 1;
}

bool
edge_io_flushed(const struct edge_io *io)
{
	return io->out_sent == io->out.len && io->ext_sent == io->ext_len &&
	       io->off == io->parsed;
}

/* Bytes wait in io for a side that takes none now: read no more. */
bool
edge_io_blocked(const struct edge_io *io, const struct edge_side *to)
{
	return io->off < io->len && (to->fd < 0 || !to->wr);
}
