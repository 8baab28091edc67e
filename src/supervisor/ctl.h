/*
 * ctl.h - the control socket: one request line (and for `env` a body of
 * the length it gives) in, one JSON line out (docs/supervisor.md,
 * "Control protocol").
 *
 * ctl_parse() is a pure function over the bytes received so far.  The rest
 * is driven by the main loop: ctl_pollfds() says what to wait for,
 * ctl_on_poll() and ctl_tick() do the work and never block.
 */
#ifndef SUPERVISOR_CTL_H
#define SUPERVISOR_CTL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "jw.h"
#include "limits.h"

enum ctl_op {
	CTL_UNKNOWN,  /* anything we do not understand */
	CTL_TOO_LONG, /* no '\n' within CTL_LINE_MAX bytes, or a body
	                 longer than CTL_BODY_MAX */
	CTL_SHORT,    /* the input ended before the body did */
	CTL_PING,
	CTL_STATUS,
	CTL_RESTART, /* arg: the process name */
	CTL_RELOAD,
	CTL_TASK_START,  /* arg: the task id, arg2: the timeout */
	CTL_TASK_CANCEL, /* arg: the task id */
	CTL_TASK_REVERT, /* arg: the task id */
	CTL_ENV,         /* arg: the length; body: the entries */
};

/* Arguments and the body are borrowed from the buffer and not
 * NUL-terminated; when there are two arguments, the first ends at the
 * first space and the second runs to the end of the line.  No argument is
 * empty; a body may be. */
struct ctl_req {
	enum ctl_op op;
	const char *arg;
	size_t arg_len;
	const char *arg2;
	size_t arg2_len;
	const char *body; /* CTL_ENV: the bytes after the line */
	size_t body_len;
	size_t want; /* while incomplete: bytes the request needs in all,
	                once its line says (0: not known yet) */
};

/*
 * Parses the request at the start of buf, len bytes received so far, eof
 * when the client will send no more.  Returns true with *req set once a
 * request is complete (a '\n' and the body the line announces, the end
 * of input, or too many bytes), false when more bytes are needed (then
 * req->want may say how many in all).
 */
bool ctl_parse(const char *buf, size_t len, bool eof, struct ctl_req *req);

/* Writes the answer to req into w (one JSON object, no newline). */
typedef void ctl_handler_fn(void *ctx, const struct ctl_req *req, struct jw *w);

enum ctl_phase {
	CTL_READING,
	CTL_ANSWERING,
	CTL_DRAINING, /* answered: reading until the client closes */
};

struct ctl_client {
	int fd; /* -1: slot free */
	enum ctl_phase phase;
	long long deadline;
	char *in; /* while reading: CTL_LINE_MAX + 1 bytes, or what an
	             env request needs; wiped before it is freed */
	size_t in_len;
	size_t in_cap;
	struct jw out; /* the answer, once there is one */
	size_t out_off;
};

struct ctl {
	int fd; /* the listening socket */
	char *path;
	ctl_handler_fn *handler;
	void *ctx;
	struct ctl_client clients[CTL_CLIENTS];
};

/*
 * Listens on a unix socket at path (an old socket there is replaced),
 * mode 0600.  Returns 0, or -1 with errno set.
 */
int ctl_open(struct ctl *c, const char *path, ctl_handler_fn *handler,
             void *ctx);

/* Drops every client, closes and removes the socket. */
void ctl_close(struct ctl *c);

/* Fills at most max entries of pfd; returns how many. */
size_t ctl_pollfds(const struct ctl *c, struct pollfd *pfd, size_t max);

/* Handles the entries ctl_pollfds() filled, after poll(). */
void ctl_on_poll(struct ctl *c, const struct pollfd *pfd, size_t n,
                 long long now);

/* Drops clients past their deadline. */
void ctl_tick(struct ctl *c, long long now);

/* The earliest client deadline (CLOCK_MONOTONIC ms), or -1 when none. */
long long ctl_next(const struct ctl *c);

#endif
