/*
 * ctl.c - the control socket.
 *
 * One request per connection, answered with one JSON line, then closed:
 * no sessions, no pipelining, nothing to keep between requests.  Every
 * socket is non-blocking and every client has one deadline for the whole
 * exchange, so a client that sends nothing, sends half a line or never
 * reads its answer costs a slot for at most CTL_DEADLINE_MS and never
 * stalls the loop.  At most CTL_CLIENTS are served at once; while all
 * slots are taken the listening socket is not polled and newcomers wait
 * in the kernel's backlog.
 *
 * Buffers are per client and only while connected: the request buffer is
 * CTL_LINE_MAX + 1 bytes (a longer line is answered "request too long"),
 * the answer is capped at CTL_ANSWER_MAX by the JSON writer.  Once the
 * answer is sent, the write side is shut down and whatever the client
 * still sends is read and dropped until it closes: closing a socket with
 * unread input sends a reset, which can destroy the answer in flight (the
 * "request too long" case).
 *
 * One request has a body: `env <N>` is followed by exactly N bytes (at
 * most CTL_BODY_MAX), the app's environment as NUL-terminated entries, so
 * values need no escaping.  Once its line is in, the buffer grows to the
 * line plus N and reads never go past that; the buffer is wiped before it
 * is freed, since the body holds the app's secrets.  Rejected: base64 in
 * an overlong line (a third more bytes, a decoder, and the line limit
 * would have to depend on the word).
 *
 * Requests are dispatched to the supervisor through one handler function;
 * this module knows the protocol's framing and words, not what they do.
 *
 * Rejected: a persistent connection with many requests (the control plane
 * asks rarely, and a closed connection per answer is the simplest correct
 * framing); a datagram socket (answers can exceed a datagram).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "log.h"

#define CTL_BACKLOG 16

static const struct ctl_word {
	const char *word;
	enum ctl_op op;
	unsigned args; /* " <arg>" or " <arg> <arg2>" after the word */
	bool body;     /* the argument is the length of a body */
} ctl_words[] = {
    {.word = "ping", .op = CTL_PING},
    {.word = "status", .op = CTL_STATUS},
    {.word = "restart", .op = CTL_RESTART, .args = 1},
    {.word = "reload", .op = CTL_RELOAD},
    {.word = "task start", .op = CTL_TASK_START, .args = 2},
    {.word = "task cancel", .op = CTL_TASK_CANCEL, .args = 1},
    {.word = "task revert", .op = CTL_TASK_REVERT, .args = 1},
    {.word = "env", .op = CTL_ENV, .args = 1, .body = true},
};

/* Splits the n bytes after a word into the request's arguments.  Returns
 * false when they do not fit the word. */
static bool
ctl_args(const char *p, size_t n, unsigned args, struct ctl_req *req)
{
	const char *sp;

	if (args == 0)
		return n == 0;
	if (n < 2 || p[0] != ' ')
		return false;
	req->arg = p + 1;
	req->arg_len = n - 1;
	if (args == 1)
		return true;
	sp = memchr(req->arg, ' ', req->arg_len);
	if (sp == NULL || sp == req->arg || sp + 1 == p + n)
		return false;
	req->arg2 = sp + 1;
	req->arg2_len = (size_t)(p + n - req->arg2);
	req->arg_len = (size_t)(sp - req->arg);
	return true;
}

static void
ctl_match(const char *line, size_t n, struct ctl_req *req)
{
	const struct ctl_word *w;
	size_t i, wl;

	for (i = 0; i < sizeof(ctl_words) / sizeof(ctl_words[0]); i++) {
		w = &ctl_words[i];
		wl = strlen(w->word);
		if (n < wl || memcmp(line, w->word, wl) != 0)
			continue;
		if (ctl_args(line + wl, n - wl, w->args, req)) {
			req->op = w->op;
			return;
		}
		req->arg = req->arg2 = NULL;
		req->arg_len = req->arg2_len = 0;
	}
}

/* A body length: decimal, no sign, no leading zero.  Returns false when
 * s is not one; *v is capped just past CTL_BODY_MAX. */
static bool
ctl_length(const char *s, size_t n, size_t *v)
{
	size_t i;

	if (n == 0 || (s[0] == '0' && n > 1))
		return false;
	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (*v <= CTL_BODY_MAX)
			*v = *v * 10 + (size_t)(s[i] - '0');
	}
	return true;
}

static void
ctl_become(struct ctl_req *req, enum ctl_op op)
{
	memset(req, 0, sizeof(*req));
	req->op = op;
}

/*
 * The body of a request whose line (line bytes with its '\n') is in buf.
 * Returns true when the request is complete or refused, false with
 * req->want set when more bytes are needed.
 */
static bool
ctl_body(const char *buf, size_t len, size_t line, bool eof,
         struct ctl_req *req)
{
	size_t n;

	if (!ctl_length(req->arg, req->arg_len, &n)) {
		ctl_become(req, CTL_UNKNOWN);
		return true;
	}
	if (n > CTL_BODY_MAX) {
		ctl_become(req, CTL_TOO_LONG);
		return true;
	}
	if (len - line >= n) {
		req->body = buf + line;
		req->body_len = n;
		return true;
	}
	ctl_become(req, eof ? CTL_SHORT : CTL_UNKNOWN);
	req->want = eof ? 0 : line + n;
	return eof;
}

bool
ctl_parse(const char *buf, size_t len, bool eof, struct ctl_req *req)
{
	const char *nl = memchr(buf, '\n', len);
	size_t n = nl != NULL ? (size_t)(nl - buf) : len;
	size_t line = nl != NULL ? n + 1 : n;

	ctl_become(req, CTL_UNKNOWN);
	if (n > CTL_LINE_MAX) {
		req->op = CTL_TOO_LONG;
		return true;
	}
	if (nl == NULL && !eof)
		return false;
	/* Tolerate "\r\n" from line-oriented tools. */
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	ctl_match(buf, n, req);
	if (req->op == CTL_ENV)
		return ctl_body(buf, len, line, eof, req);
	return true;
}

static int
ctl_bind(int fd, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t old;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (unlink(path) == -1 && errno != ENOENT)
		return -1;
	/* The mode is fixed at bind(); no window with a looser one. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	return r;
}

int
ctl_open(struct ctl *c, const char *path, ctl_handler_fn *handler, void *ctx)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < CTL_CLIENTS; i++)
		c->clients[i].fd = -1;
	c->handler = handler;
	c->ctx = ctx;
	c->path = strdup(path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->path == NULL || c->fd == -1)
		goto fail;
	if (ctl_bind(c->fd, path) == -1 || chmod(path, 0600) == -1 ||
	    listen(c->fd, CTL_BACKLOG) == -1)
		goto fail;
	return 0;
fail:
	ctl_close(c);
	return -1;
}

/* The request may hold the app's secrets (env). */
static void
ctl_free_in(struct ctl_client *cl)
{
	if (cl->in != NULL) {
		explicit_bzero(cl->in, cl->in_len);
		free(cl->in);
	}
	cl->in = NULL;
	cl->in_len = cl->in_cap = 0;
}

static void
ctl_drop(struct ctl_client *cl)
{
	if (cl->fd != -1)
		close(cl->fd);
	ctl_free_in(cl);
	jw_release(&cl->out);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
}

void
ctl_close(struct ctl *c)
{
	int saved = errno;
	size_t i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (c->clients[i].fd != -1)
			ctl_drop(&c->clients[i]);
	if (c->fd != -1) {
		close(c->fd);
		if (c->path != NULL)
			unlink(c->path);
	}
	c->fd = -1;
	free(c->path);
	c->path = NULL;
	errno = saved;
}

static struct ctl_client *
ctl_free_slot(struct ctl *c)
{
	size_t i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (c->clients[i].fd == -1)
			return &c->clients[i];
	return NULL;
}

static bool
ctl_full(const struct ctl *c)
{
	size_t i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (c->clients[i].fd == -1)
			return false;
	return true;
}

size_t
ctl_pollfds(const struct ctl *c, struct pollfd *pfd, size_t max)
{
	const struct ctl_client *cl;
	size_t n = 0, i;

	if (c->fd == -1)
		return 0;
	if (!ctl_full(c) && n < max)
		pfd[n++] = (struct pollfd){.fd = c->fd, .events = POLLIN};
	for (i = 0; i < CTL_CLIENTS && n < max; i++) {
		cl = &c->clients[i];
		if (cl->fd != -1)
			pfd[n++] = (struct pollfd){
			    .fd = cl->fd,
			    .events =
			        cl->phase == CTL_ANSWERING ? POLLOUT : POLLIN};
	}
	return n;
}

static void
ctl_accept(struct ctl *c, long long now)
{
	struct ctl_client *cl;
	int fd;

	while ((cl = ctl_free_slot(c)) != NULL) {
		fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_msg("control socket: accept: %s",
				        strerror(errno));
			return;
		}
		cl->in = malloc(CTL_LINE_MAX + 1);
		if (cl->in == NULL) {
			close(fd);
			return;
		}
		cl->in_cap = CTL_LINE_MAX + 1;
		cl->fd = fd;
		cl->deadline = now + CTL_DEADLINE_MS;
		jw_init(&cl->out, CTL_ANSWER_MAX - 1);
	}
}

static void
ctl_answer(struct ctl *c, struct ctl_client *cl, const struct ctl_req *req)
{
	if (req->op == CTL_TOO_LONG)
		jw_raw(&cl->out,
		       "{\"ok\":false,\"error\":\"request too long\"}");
	else if (req->op == CTL_UNKNOWN)
		jw_raw(&cl->out,
		       "{\"ok\":false,\"error\":\"unknown request\"}");
	else if (req->op == CTL_SHORT)
		jw_raw(&cl->out, "{\"ok\":false,\"error\":\"the request ended "
		                 "before its body\"}");
	else
		c->handler(c->ctx, req, &cl->out);
	if (!jw_ok(&cl->out)) {
		jw_reset(&cl->out);
		jw_raw(&cl->out,
		       "{\"ok\":false,\"error\":\"answer too long\"}");
	}
	jw_raw(&cl->out, "\n");
	cl->phase = CTL_ANSWERING;
	ctl_free_in(cl);
}

/* Returns false when out of memory. */
static bool
ctl_grow(struct ctl_client *cl, size_t cap)
{
	char *in = malloc(cap);

	if (in == NULL)
		return false;
	memcpy(in, cl->in, cl->in_len);
	explicit_bzero(cl->in, cl->in_len);
	free(cl->in);
	cl->in = in;
	cl->in_cap = cap;
	return true;
}

/* Returns false when the client is to be dropped. */
static bool
ctl_read(struct ctl *c, struct ctl_client *cl)
{
	struct ctl_req req;
	ssize_t n;
	bool eof;

	n = read(cl->fd, cl->in + cl->in_len, cl->in_cap - cl->in_len);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR;
	eof = n == 0;
	cl->in_len += (size_t)n;
	if (ctl_parse(cl->in, cl->in_len, eof, &req)) {
		ctl_answer(c, cl, &req);
		return true;
	}
	/* An env line is in: room for exactly its body, so the buffer is
	 * never full while the request is incomplete. */
	return req.want <= cl->in_cap || ctl_grow(cl, req.want);
}

/* Returns false when the client is to be dropped. */
static bool
ctl_write(struct ctl_client *cl)
{
	ssize_t n;

	n = send(cl->fd, cl->out.p + cl->out_off, cl->out.len - cl->out_off,
	         MSG_NOSIGNAL);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR;
	cl->out_off += (size_t)n;
	if (cl->out_off < cl->out.len)
		return true;
	cl->phase = CTL_DRAINING;
	jw_release(&cl->out);
	return shutdown(cl->fd, SHUT_WR) == 0;
}

/* Returns false once the client has closed (or failed). */
static bool
ctl_drain(struct ctl_client *cl)
{
	char buf[512];
	ssize_t n;

	n = read(cl->fd, buf, sizeof(buf));
	if (n == -1)
		return errno == EAGAIN || errno == EINTR;
	return n > 0;
}

/* Returns false when the client is done or to be dropped. */
static bool
ctl_serve(struct ctl *c, struct ctl_client *cl)
{
	switch (cl->phase) {
	case CTL_READING:
		if (!ctl_read(c, cl))
			return false;
		/* A request just parsed: try to answer at once. */
		return cl->phase == CTL_ANSWERING ? ctl_write(cl) : true;
	case CTL_ANSWERING:
		return ctl_write(cl);
	case CTL_DRAINING:
		return ctl_drain(cl);
	}
	return false;
}

static struct ctl_client *
ctl_find(struct ctl *c, int fd)
{
	size_t i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (c->clients[i].fd == fd)
			return &c->clients[i];
	return NULL;
}

void
ctl_on_poll(struct ctl *c, const struct pollfd *pfd, size_t n, long long now)
{
	struct ctl_client *cl;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == c->fd) {
			ctl_accept(c, now);
			continue;
		}
		cl = ctl_find(c, pfd[i].fd);
		if (cl != NULL && !ctl_serve(c, cl))
			ctl_drop(cl);
	}
}

void
ctl_tick(struct ctl *c, long long now)
{
	size_t i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (c->clients[i].fd != -1 && c->clients[i].deadline <= now)
			ctl_drop(&c->clients[i]);
}

long long
ctl_next(const struct ctl *c)
{
	long long next = -1;
	size_t i;

	for (i = 0; i < CTL_CLIENTS; i++)
		if (c->clients[i].fd != -1 &&
		    (next == -1 || c->clients[i].deadline < next))
			next = c->clients[i].deadline;
	return next;
}
