/*
 * A session's thread (terminal/internal.h): relays between the process's
 * stream and the WebSocket attached, if any.
 *
 * Memory is fixed per session: out holds one frame being sent (a chunk
 * read from the process, or the replay of the ring), in one message
 * from the client, stdin what is being written to the process.  The
 * process's stream is read only while out is empty and a WebSocket is
 * attached: a client that reads slowly (its send buffer full) stops the
 * reading, the engine's buffers fill and the process blocks on write.
 * The WebSocket is read only while stdin is empty, the other way round.
 * A client may also ask for a pause ({"type":"pause"}, until
 * {"type":"resume"}): the process's stream is not read meanwhile, so
 * the process blocks the same way; the idle and lifetime limits still
 * end a session whose client never resumes.
 */
#include "terminal/terminal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "docker/docker.h"
#include "lib/clock.h"
#include "lib/jv.h"
#include "lib/log.h"
#include "lib/wsframe.h"
#include "orch/orch.h"
#include "sandbox/activity.h"
#include "store/store.h"
#include "timeline/timeline.h"
#include "terminal/internal.h"

#define OUT_CAP (TERMINAL_RING_BYTES + TERMINAL_CHUNK_BYTES + 64)
#define IN_CAP  (TERMINAL_IN_BYTES + WSFRAME_HEAD_LEN)

struct relay {
	struct term_session *s;
	const struct config *cfg;
	int ws; /* the WebSocket, or -1 when detached */
	void (*done)(void *);
	void *done_arg;
	uint8_t *out; /* frames to send */
	size_t olen, ooff;
	uint8_t *in; /* bytes read from the WebSocket */
	size_t ilen;
	uint8_t *msgbuf; /* a message joined from its fragments */
	struct wsframe_msg msg;
	uint8_t *stdin_buf; /* to write to the process */
	size_t slen, soff;
	bool eof_pending; /* close the process's stdin once written */
	uint8_t *ring;    /* the last output sent, for a reconnect */
	size_t ring_len, ring_pos;
	uint8_t *pin; /* read from the process, not yet queued */
	size_t pin_len, pin_off;
	uint8_t mux_head[DOCKER_MUX_HEAD];
	size_t mux_have, mux_left;
	int mux_chan;
	int64_t last_input_ms, detached_ms, touched_ms, checked_ms;
	const char *reason;
	bool ended;
	bool ever;   /* a WebSocket was attached once */
	bool paused; /* the client asked: the process's output is not read */
};

static void
ring_add(struct relay *r, const uint8_t *p, size_t n)
{
	if (n >= TERMINAL_RING_BYTES) {
		p += n - TERMINAL_RING_BYTES;
		n = TERMINAL_RING_BYTES;
	}
	while (n) { /* up to the ring's end, then from its start */
		size_t k = TERMINAL_RING_BYTES - r->ring_pos;
		if (k > n)
			k = n;
		memcpy(r->ring + r->ring_pos, p, k);
		r->ring_pos = (r->ring_pos + k) % TERMINAL_RING_BYTES;
		r->ring_len = r->ring_len + k > TERMINAL_RING_BYTES
		                  ? TERMINAL_RING_BYTES
		                  : r->ring_len + k;
		p += k;
		n -= k;
	}
}

/* Queues a frame when it fits in out; false when it does not. */
static bool
queue(struct relay *r, int op, int chan, const uint8_t *p, size_t n)
{
	uint8_t head[WSFRAME_HEAD_LEN];
	size_t extra = chan >= 0 ? 1 : 0;
	size_t h = wsframe_head(head, op, true, n + extra, NULL);

	if (r->ws < 0 || h + extra + n > OUT_CAP - r->olen)
		return false;
	memcpy(r->out + r->olen, head, h);
	r->olen += h;
	if (chan >= 0)
		r->out[r->olen++] = (uint8_t)chan;
	memcpy(r->out + r->olen, p, n);
	r->olen += n;
	return true;
}

static void
queue_text(struct relay *r, const char *text)
{
	queue(r, WS_OP_TEXT, -1, (const uint8_t *)text, strlen(text));
}

static void
replay(struct relay *r)
{
	size_t start = (r->ring_pos + TERMINAL_RING_BYTES - r->ring_len) %
	               TERMINAL_RING_BYTES;
	uint8_t head[WSFRAME_HEAD_LEN];
	size_t h;

	if (r->ring_len == 0 || !r->s->tty)
		return;
	h = wsframe_head(head, WS_OP_BINARY, true, r->ring_len + 1, NULL);
	memcpy(r->out + r->olen, head, h);
	r->olen += h;
	r->out[r->olen++] = 1;
	for (size_t i = 0; i < r->ring_len; i++)
		r->out[r->olen++] = r->ring[(start + i) % TERMINAL_RING_BYTES];
}

/* Sends what out holds, as far as the socket takes it. */
static int
flush(struct relay *r)
{
	while (r->ooff < r->olen) {
		ssize_t w = send(r->ws, r->out + r->ooff, r->olen - r->ooff,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w <= 0)
			return -1;
		r->ooff += (size_t)w;
	}
	r->olen = r->ooff = 0;
	return 0;
}

static void
detach(struct relay *r)
{
	if (r->ws < 0)
		return;
	r->ws = -1;
	r->olen = r->ooff = r->ilen = 0;
	r->msg.opcode = 0;
	r->msg.done = false;
	r->paused = false; /* the next WebSocket starts reading */
	r->detached_ms = clock_mono_ms();
	if (r->done)
		r->done(r->done_arg);
	r->done = NULL;
}

/* Takes a WebSocket handed over (terminal_attach), closing the last. */
static void
adopt(struct relay *r)
{
	struct term_session *s = r->s;
	uint64_t v;
	int fd;

	if (read(s->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("terminal: wake: %s", strerror(errno));
	pthread_mutex_lock(&s->t->mu);
	if (s->t->stopping)
		r->reason = "closed";
	if (s->sandbox_stopping)
		r->reason = "sandbox_stopped";
	fd = s->new_fd;
	/* Its only ticket's upgrade failed: nobody will come. */
	if (s->abandoned && fd < 0 && !r->ever)
		r->reason = "closed";
	s->abandoned = false;
	if (fd < 0) {
		pthread_mutex_unlock(&s->t->mu);
		return;
	}
	if (r->ws >= 0) {
		const uint8_t bye[] = {0x03, 0xe8};
		queue(r, WS_OP_CLOSE, -1, bye, sizeof(bye));
		flush(r);
		detach(r);
	}
	r->ws = fd;
	r->ever = true;
	r->done = s->new_done;
	r->done_arg = s->new_arg;
	if (s->new_extra_len <= IN_CAP && s->new_extra) {
		memcpy(r->in, s->new_extra, s->new_extra_len);
		r->ilen = s->new_extra_len;
	}
	free(s->new_extra);
	s->new_extra = NULL;
	s->new_fd = -1;
	pthread_mutex_unlock(&s->t->mu);
	r->last_input_ms = clock_mono_ms();
	queue_text(r, "{\"type\":\"status\",\"state\":\"ready\"}");
	replay(r);
}

static void
control(struct relay *r, const uint8_t *p, size_t n)
{
	char err[64], msg[DOCKER_MSG_LEN];
	struct jv *v = jv_parse((const char *)p, n, 4, err, sizeof(err));
	const char *type = jv_str(jv_get(v, "type"));

	if (type && strcmp(type, "resize") == 0 && r->s->tty) {
		int64_t cols = jv_int(jv_get(v, "cols"));
		int64_t rows = jv_int(jv_get(v, "rows"));
		if (cols > 0 && cols <= 1000 && rows > 0 && rows <= 1000 &&
		    orch_exec_resize(r->s->t->c->orch, r->s->exec_id, (int)cols,
		                     (int)rows, msg) != DOCKER_OK)
			log_warn("terminal %s: resize: %s", r->s->id, msg);
	} else if (type && strcmp(type, "eof") == 0) {
		r->eof_pending = true;
	} else if (type && strcmp(type, "pause") == 0) {
		r->paused = true; /* the idle and lifetime limits still run */
	} else if (type && strcmp(type, "resume") == 0) {
		r->paused = false;
	}
	jv_free(v);
}

/* One message from the client. */
static void
message(struct relay *r)
{
	const struct wsframe_msg *m = &r->msg;

	if (m->opcode == WS_OP_TEXT) {
		control(r, m->data, m->len);
	} else if (m->len > 1 && m->data[0] == 0 && !r->eof_pending) {
		memcpy(r->stdin_buf, m->data + 1, m->len - 1);
		r->slen = m->len - 1;
		r->soff = 0;
		r->last_input_ms = clock_mono_ms();
	}
}

/*
 * Parses what in holds while stdin is empty: messages, pings, a close
 * (the client detaches).  -1 on a protocol error.
 */
static int
parse_in(struct relay *r)
{
	size_t off = 0;
	int close_code;

	while (r->slen == 0 && r->ws >= 0) {
		struct wsframe f;
		long n =
		    wsframe_parse(r->in + off, r->ilen - off, TERMINAL_IN_BYTES,
		                  true, &f, &close_code);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		off += (size_t)n;
		if (f.opcode == WS_OP_PING) {
			queue(r, WS_OP_PONG, -1, f.payload, f.len);
		} else if (f.opcode == WS_OP_CLOSE) {
			const uint8_t bye[] = {0x03, 0xe8};
			queue(r, WS_OP_CLOSE, -1, bye, sizeof(bye));
			flush(r);
			detach(r);
			return 0;
		} else if (f.opcode != WS_OP_PONG) {
			int rc = wsframe_msg_add(&r->msg, &f, &close_code);
			if (rc < 0)
				return -1;
			if (rc == 1)
				message(r);
		}
	}
	if (r->ws >= 0 && off) {
		memmove(r->in, r->in + off, r->ilen - off);
		r->ilen -= off;
	}
	return 0;
}

static void
read_ws(struct relay *r)
{
	ssize_t n =
	    recv(r->ws, r->in + r->ilen, IN_CAP - r->ilen, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		detach(r);
		return;
	}
	r->ilen += (size_t)n;
	if (parse_in(r) < 0) {
		const uint8_t bye[] = {0x03, 0xea}; /* 1002 */
		queue(r, WS_OP_CLOSE, -1, bye, sizeof(bye));
		flush(r);
		detach(r);
	}
}

static void
write_stdin(struct relay *r)
{
	ssize_t w = send(r->s->dfd, r->stdin_buf + r->soff, r->slen - r->soff,
	                 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w < 0) {
		r->slen = r->soff = 0;
		return;
	}
	r->soff += (size_t)w;
	if (r->soff == r->slen)
		r->slen = r->soff = 0;
}

/*
 * Queues frames from what pin holds, as far as out takes them.  Without
 * a tty the stream is multiplexed: a head, then that many bytes of one
 * stream; heads are parsed from pin too.
 */
static void
drain_process(struct relay *r)
{
	bool tty = r->s->tty;

	while (r->pin_off < r->pin_len) {
		const uint8_t *p = r->pin + r->pin_off;
		size_t n = r->pin_len - r->pin_off;
		if (!tty && r->mux_left == 0) {
			size_t k = DOCKER_MUX_HEAD - r->mux_have;
			const uint8_t *h = r->mux_head;
			if (k > n)
				k = n;
			memcpy(r->mux_head + r->mux_have, p, k);
			r->mux_have += k;
			r->pin_off += k;
			if (r->mux_have < DOCKER_MUX_HEAD)
				continue;
			r->mux_chan = h[0] == 2 ? 2 : 1;
			r->mux_left = (size_t)h[4] << 24 | (size_t)h[5] << 16 |
			              (size_t)h[6] << 8 | h[7];
			r->mux_have = 0;
			continue;
		}
		if (!tty && r->mux_left < n)
			n = r->mux_left;
		if (!queue(r, WS_OP_BINARY, tty ? 1 : r->mux_chan, p, n))
			return; /* the rest once out is sent */
		ring_add(r, p, n);
		r->pin_off += n;
		if (!tty)
			r->mux_left -= n;
	}
	r->pin_off = r->pin_len = 0;
}

/* Reads from the process (TERMINAL_CHUNK_BYTES at most) into frames,
 * or first queues what is left of the last read.  0 at its end. */
static ssize_t
read_process(struct relay *r)
{
	ssize_t n;

	if (r->pin_off < r->pin_len) {
		drain_process(r);
		return 1;
	}
	n = recv(r->s->dfd, r->pin, TERMINAL_CHUNK_BYTES, MSG_DONTWAIT);
	if (n <= 0)
		return n;
	r->pin_len = (size_t)n;
	r->pin_off = 0;
	drain_process(r);
	return n;
}

/* Whether the sandbox's container is no longer running. */
static bool
sandbox_gone(struct relay *r)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;
	struct core *c = r->s->t->c;

	core_container_name(c, r->s->sandbox, name, sizeof(name));
	return orch_inspect(c->orch, name, &st, msg) != DOCKER_OK ||
	       !st.d.running;
}

/* The exit code once the engine sees the process ended; -1 unknown
 * (and the reason sandbox_stopped when its container went with it). */
static int
exit_code(struct relay *r)
{
	char msg[DOCKER_MSG_LEN];
	bool running = true;
	int code = -1;

	for (int i = 0; i < 20 && running; i++) {
		if (orch_exec_inspect(r->s->t->c->orch, r->s->exec_id, &running,
		                      &code, msg) != DOCKER_OK) {
			r->reason = "sandbox_stopped";
			return -1;
		}
		if (running)
			usleep(50000);
	}
	if (!running && sandbox_gone(r))
		r->reason = "sandbox_stopped";
	return running ? -1 : code;
}

/* Tells the client why it ended, and lets the WebSocket go. */
static void
finish(struct relay *r, int code)
{
	char text[128];
	const uint8_t bye[] = {0x03, 0xe8};

	snprintf(text, sizeof(text),
	         "{\"type\":\"exit\",\"code\":%d,\"reason\":\"%s\"}", code,
	         r->reason);
	if (r->ws >= 0) {
		r->olen = r->ooff = 0; /* a frame cut short is dropped whole */
		queue_text(r, text);
		queue(r, WS_OP_CLOSE, -1, bye, sizeof(bye));
		for (int i = 0; i < 20 && r->olen; i++) { /* up to 1 s */
			struct pollfd p = {.fd = r->ws, .events = POLLOUT};
			if (poll(&p, 1, 50) < 0 || flush(r) < 0)
				break;
		}
		detach(r);
	}
}

/* The limits: idle (no input), lifetime, detached too long. */
static void
check_limits(struct relay *r)
{
	int64_t now = clock_mono_ms();

	if (r->ws >= 0 && now - r->last_input_ms > r->cfg->term_idle_s * 1000)
		r->reason = "idle";
	else if (now - r->s->started_ms > r->cfg->term_max_s * 1000)
		r->reason = "lifetime";
	else if (r->ws < 0 &&
	         now - r->detached_ms > r->cfg->term_reattach_s * 1000)
		r->reason = "closed";
	/* The engine may keep the stream of a stopped container's exec
	 * open: the sandbox's row says it stopped. */
	if (r->reason == NULL && now - r->checked_ms >= 2000) {
		struct sandbox sb;
		r->checked_ms = now;
		if (store_sandbox_get(r->s->t->c->store, r->s->sandbox, &sb) !=
		        0 ||
		    sb.status != SANDBOX_RUNNING)
			r->reason = "sandbox_stopped";
	}
	/* Typing keeps the sandbox awake; a forgotten tab ends as idle. */
	if (r->ws >= 0 && r->last_input_ms > r->touched_ms) {
		activity_touch(r->s->t->c->act, r->s->sandbox);
		r->touched_ms = now;
	}
}

static void
step(struct relay *r, bool *stdin_closed)
{
	struct pollfd p[3] = {
	    {.fd = r->s->wake, .events = POLLIN}, {.fd = -1}, {.fd = -1}};
	bool more;

	if (r->ws >= 0)
		p[1] = (struct pollfd){
		    .fd = r->ws,
		    .events = (short)((r->slen == 0 && r->ilen < IN_CAP ? POLLIN
		                                                        : 0) |
		                      (r->olen ? POLLOUT : 0))};
	p[2].events =
	    (short)((r->ws >= 0 && r->olen == 0 && !r->paused ? POLLIN : 0) |
	            (r->slen ? POLLOUT : 0));
	/* Nothing wanted: not polled (a hangup would spin the loop). */
	p[2].fd = p[2].events ? r->s->dfd : -1;
	/* Output read and not yet queued: no waiting. */
	more =
	    r->ws >= 0 && r->olen == 0 && !r->paused && r->pin_off < r->pin_len;
	if (poll(p, 3, more ? 0 : 1000) < 0 && errno != EINTR) {
		r->reason = "closed";
		return;
	}
	if (r->ws >= 0 && (p[1].revents & POLLOUT) && flush(r) < 0)
		detach(r);
	if (r->ws >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
		read_ws(r);
	if (p[2].revents & POLLOUT)
		write_stdin(r);
	if (r->ws >= 0 && r->slen == 0 && parse_in(r) < 0)
		detach(r);
	if (r->eof_pending && r->slen == 0 && !*stdin_closed) {
		shutdown(r->s->dfd, SHUT_WR);
		*stdin_closed = true;
	}
	if (r->ws >= 0 && r->olen == 0 && !r->paused &&
	    (r->pin_off < r->pin_len ||
	     (p[2].revents & (POLLIN | POLLHUP | POLLERR)))) {
		ssize_t n = read_process(r);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			r->ended = true;
	}
	if (r->ws >= 0 && r->olen && flush(r) < 0)
		detach(r);
	/* Last: the revents above are the old WebSocket's. */
	if (p[0].revents & POLLIN)
		adopt(r);
}

static void
relay_run(struct relay *r)
{
	bool stdin_closed = false;
	int code = -1;

	while (r->reason == NULL && !r->ended) {
		step(r, &stdin_closed);
		if (r->reason == NULL)
			check_limits(r);
	}
	if (r->ended && r->reason == NULL) {
		r->reason = "exited";
		if (r->ws >= 0 && r->olen) { /* the last output first */
			struct pollfd p = {.fd = r->ws, .events = POLLOUT};
			for (int i = 0; i < 20 && r->olen && flush(r) == 0; i++)
				poll(&p, 1, 50);
		}
		code = exit_code(r);
	}
	finish(r, code);
}

/* The session ended: its slot may be reused. */
static void
session_ended(struct term_session *s)
{
	struct terminal *t = s->t;
	void (*done)(void *) = NULL;
	void *arg = NULL;

	pthread_mutex_lock(&t->mu);
	s->live = false;
	if (s->new_fd >= 0) {
		done = s->new_done;
		arg = s->new_arg;
		free(s->new_extra);
		s->new_extra = NULL;
		s->new_fd = -1;
	}
	/* Its tickets not redeemed: the slot may be reused. */
	for (int i = 0; i < TERMINAL_TABLE_MAX; i++)
		if (t->tickets[i].s == s)
			t->tickets[i].s = NULL;
	pthread_mutex_unlock(&t->mu);
	if (done)
		done(arg);
}

void *
terminal_relay(void *arg)
{
	struct term_session *s = arg;
	struct relay r = {.s = s, .cfg = s->t->c->cfg, .ws = -1};
	char payload[96];
	struct tl_event ev = {.app_id = s->app,
	                      .type = "terminal.closed",
	                      .sandbox_id = s->sandbox};

	tl_set_actor(s->actor);
	r.out = malloc(OUT_CAP);
	r.in = malloc(IN_CAP);
	r.msgbuf = malloc(TERMINAL_IN_BYTES);
	r.stdin_buf = malloc(TERMINAL_IN_BYTES);
	r.ring = malloc(TERMINAL_RING_BYTES);
	r.pin = malloc(TERMINAL_CHUNK_BYTES);
	r.msg =
	    (struct wsframe_msg){.data = r.msgbuf, .cap = TERMINAL_IN_BYTES};
	r.detached_ms = r.last_input_ms = clock_mono_ms();
	if (r.out && r.in && r.msgbuf && r.stdin_buf && r.ring && r.pin)
		relay_run(&r);
	else
		r.reason = "closed";
	detach(&r);
	close(s->dfd);
	snprintf(payload, sizeof(payload),
	         "{\"session_id\":\"%s\",\"reason\":\"%s\"}", s->id, r.reason);
	ev.payload_json = payload;
	timeline_note(s->t->c->tl, &ev, "terminal %s closed (%s)", s->id,
	              r.reason);
	free(r.out);
	free(r.in);
	free(r.msgbuf);
	free(r.stdin_buf);
	free(r.ring);
	free(r.pin);
	session_ended(s);
	return NULL;
}
