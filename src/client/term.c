/*
 * `sandboxd sandbox shell SB` and `sandboxd sandbox exec SB -- CMD…`
 * (docs/cli.md): a terminal's ticket from the API, then its WebSocket
 * (docs/api.md, "Terminal") on a plain socket of our own with the frame
 * codec of lib/wsframe: the client does not link libmicrohttpd, and
 * libcurl's WebSocket support is not in every distribution's build.
 * Only http:// APIs (a loopback or a tunnel); https needs TLS we do not
 * carry here.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "client/client.h"
#include "client/commands.h"
#include "lib/fileio.h"
#include "lib/wsframe.h"

#define TERM_IN_MAX (1u << 20) /* a frame from the daemon */

struct term {
	int fd;
	uint8_t *in;
	size_t ilen;
	bool stdin_open;
	int code;
	bool exited;
};

static struct termios saved;
static bool raw_on;
static int winch_pipe[2] = {-1, -1};

static void
raw_restore(void)
{
	if (raw_on)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	raw_on = false;
}

static void
raw_enter(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved) < 0)
		return;
	t = saved;
	cfmakeraw(&t);
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0) {
		raw_on = true;
		atexit(raw_restore);
	}
}

static void
on_winch(int sig)
{
	char b = 1;

	(void)sig;
	if (write(winch_pipe[1], &b, 1) < 0) {
		/* the pipe is full: a resize is pending already */
	}
}

static void
win_size(int *cols, int *rows)
{
	struct winsize ws = {0};

	*cols = 80;
	*rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

/* One masked frame (with a channel byte when chan >= 0). */
static int
send_frame(int fd, int op, int chan, const void *data, size_t n)
{
	uint8_t mask[4], head[WSFRAME_HEAD_LEN], *buf;
	size_t h, extra = chan >= 0 ? 1 : 0;
	int rc;

	if (getrandom(mask, sizeof(mask), 0) != (ssize_t)sizeof(mask))
		return -1;
	h = wsframe_head(head, op, true, n + extra, mask);
	buf = malloc(h + extra + n);
	if (buf == NULL)
		return -1;
	memcpy(buf, head, h);
	if (chan >= 0)
		buf[h] = (uint8_t)chan;
	memcpy(buf + h + extra, data, n);
	wsframe_mask(buf + h, extra + n, mask, 0);
	rc = fileio_send_all(fd, buf, h + extra + n);
	free(buf);
	return rc;
}

static void
send_resize(int fd)
{
	char msg[96];
	int cols, rows;

	win_size(&cols, &rows);
	snprintf(msg, sizeof(msg),
	         "{\"type\":\"resize\",\"cols\":%d,\"rows\":%d}", cols, rows);
	send_frame(fd, WS_OP_TEXT, -1, msg, strlen(msg));
}

/* Connects to the API's host and port (an http:// URL); -(exit
 * status) when it cannot. */
static int
dial_api(const char *api)
{
	char host[256], port[16] = "80";
	const char *p, *end;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	int fd = -1;

	if (strncmp(api, "http://", 7) != 0)
		return -cli_fail(CLI_EUSAGE, "usage",
		                 "the terminal needs an http:// API (%s)", api);
	p = api + 7;
	end = p + strcspn(p, "/");
	if (*p == '[') { /* [v6]:port */
		const char *rb = memchr(p, ']', (size_t)(end - p));
		if (rb == NULL)
			return -cli_fail(CLI_EUSAGE, "usage", "bad API URL");
		snprintf(host, sizeof(host), "%.*s", (int)(rb - p - 1), p + 1);
		if (rb[1] == ':')
			snprintf(port, sizeof(port), "%.*s",
			         (int)(end - rb - 2), rb + 2);
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		snprintf(host, sizeof(host), "%.*s",
		         (int)((colon ? colon : end) - p), p);
		if (colon)
			snprintf(port, sizeof(port), "%.*s",
			         (int)(end - colon - 1), colon + 1);
	}
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -cli_fail(CLI_EUNREACHABLE, "unreachable",
		                 "cannot resolve %s", host);
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return -cli_fail(CLI_EUNREACHABLE, "unreachable",
		                 "cannot connect to %s", api);
	return fd;
}

/* The upgrade; the bytes read past the answer's head stay in t->in. */
static int
handshake(struct term *t, const char *api, const char *ticket)
{
	uint8_t raw[16];
	char key[32], want[WSFRAME_ACCEPT_LEN], req[1024];
	const char *b64 =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *end, *acc;
	int n, status = 0;
	size_t k = 0;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return cli_fail(CLI_EFAIL, "internal", "no randomness");
	for (int i = 0; i < 16; i += 3) {
		uint32_t v = (uint32_t)raw[i] << 16 |
		             (uint32_t)(i + 1 < 16 ? raw[i + 1] : 0) << 8 |
		             (i + 2 < 16 ? raw[i + 2] : 0);
		key[k++] = b64[(v >> 18) & 63];
		key[k++] = b64[(v >> 12) & 63];
		key[k++] = i + 1 < 16 ? b64[(v >> 6) & 63] : '=';
		key[k++] = i + 2 < 16 ? b64[v & 63] : '=';
	}
	key[k] = '\0';
	wsframe_accept(key, want);
	n = snprintf(
	    req, sizeof(req),
	    "GET /v1/terminal?ticket=%s HTTP/1.1\r\nHost: %.*s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
	    ticket, (int)strcspn(api + 7, "/"), api + 7, key);
	if (fileio_send_all(t->fd, (const uint8_t *)req, (size_t)n) < 0)
		return cli_fail(CLI_EUNREACHABLE, "unreachable", "send failed");
	while ((end = memmem(t->in, t->ilen, "\r\n\r\n", 4)) == NULL) {
		ssize_t r = recv(t->fd, t->in + t->ilen, 8192 - t->ilen - 1, 0);
		if (r <= 0 || t->ilen + (size_t)r >= 8191)
			return cli_fail(CLI_EUNREACHABLE, "unreachable",
			                "the terminal did not open");
		t->ilen += (size_t)r;
		t->in[t->ilen] = '\0';
	}
	*end = '\0';
	sscanf((char *)t->in, "HTTP/1.%*d %d", &status);
	acc = strcasestr((char *)t->in, "\r\nSec-WebSocket-Accept: ");
	if (status != 101 || acc == NULL || strncmp(acc + 24, want, 28) != 0)
		return cli_fail(
		    status >= 400 ? cli_status_exit(status) : CLI_EFAIL,
		    "terminal", "the terminal did not open (%d)", status);
	k = (size_t)(end + 4 - (char *)t->in);
	memmove(t->in, t->in + k, t->ilen - k);
	t->ilen -= k;
	return 0;
}

static void
control(struct term *t, const struct wsframe *f)
{
	char err[64];
	struct jv *v =
	    jv_parse((const char *)f->payload, f->len, 4, err, sizeof(err));
	const char *type = jv_str(jv_get(v, "type"));

	if (type && strcmp(type, "exit") == 0) {
		const char *why = jv_str(jv_get(v, "reason"));
		t->exited = true;
		t->code = (int)jv_int(jv_get(v, "code"));
		if (why && strcmp(why, "exited") != 0) {
			raw_restore();
			fprintf(stderr, "\r\nthe terminal ended: %s\n", why);
			t->code = CLI_EFAIL;
		} else if (t->code < 0 || t->code > 255) {
			t->code = CLI_EFAIL;
		}
	}
	jv_free(v);
}

/* Frames the daemon sent: 1 at the close, -1 on an error, else 0. */
static int
frames(struct term *t)
{
	size_t off = 0;
	int close_code, rc = 0;

	for (;;) {
		struct wsframe f;
		long n = wsframe_parse(t->in + off, t->ilen - off, TERM_IN_MAX,
		                       false, &f, &close_code);
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		off += (size_t)n;
		if (f.opcode == WS_OP_BINARY && f.len > 1)
			fileio_write_all(f.payload[0] == 2 ? STDERR_FILENO
			                                   : STDOUT_FILENO,
			                 f.payload + 1, f.len - 1);
		else if (f.opcode == WS_OP_TEXT)
			control(t, &f);
		else if (f.opcode == WS_OP_PING)
			send_frame(t->fd, WS_OP_PONG, -1, f.payload, f.len);
		else if (f.opcode == WS_OP_CLOSE) {
			rc = 1;
			break;
		}
	}
	memmove(t->in, t->in + off, t->ilen - off);
	t->ilen -= off;
	return rc;
}

static int
relay(struct term *t)
{
	uint8_t buf[16384];

	for (;;) {
		struct pollfd p[3] = {
		    {.fd = t->fd, .events = POLLIN},
		    {.fd = t->stdin_open ? STDIN_FILENO : -1, .events = POLLIN},
		    {.fd = winch_pipe[0], .events = POLLIN}};
		ssize_t n;

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[2].revents & POLLIN) {
			char d[16];
			if (read(winch_pipe[0], d, sizeof(d)) > 0)
				send_resize(t->fd);
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n > 0) {
				send_frame(t->fd, WS_OP_BINARY, 0, buf,
				           (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				t->stdin_open = false;
				send_frame(t->fd, WS_OP_TEXT, -1,
				           "{\"type\":\"eof\"}",
				           strlen("{\"type\":\"eof\"}"));
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (t->ilen >= TERM_IN_MAX + WSFRAME_HEAD_LEN)
				return -1;
			n = recv(t->fd, t->in + t->ilen,
			         TERM_IN_MAX + WSFRAME_HEAD_LEN - t->ilen, 0);
			if (n <= 0)
				return t->exited ? 0 : -1;
			t->ilen += (size_t)n;
			n = frames(t);
			if (n != 0)
				return n < 0 ? -1 : 0;
		}
	}
}

/* Opens a terminal as body asks and relays it; the exit status. */
static int
term_run(struct cli *c, const char *sb, struct jv *body, bool interactive)
{
	struct cli_resp r = {0};
	struct term t = {.fd = -1, .stdin_open = true, .code = CLI_EFAIL};
	char path[160], ticket[64];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/sandboxes/%s/terminal", sb) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_call(c, "POST", path, body, &r);
	if (rc == 0)
		snprintf(ticket, sizeof(ticket), "%s",
		         jv_str(jv_get(r.json, "ticket")) ?: "");
	cli_resp_release(&r);
	if (rc != 0)
		return rc;
	t.in = malloc(TERM_IN_MAX + WSFRAME_HEAD_LEN + 1);
	if (t.in == NULL)
		return cli_fail(CLI_EFAIL, "internal", "out of memory");
	t.fd = dial_api(c->api);
	if (t.fd < 0) {
		free(t.in);
		return -t.fd;
	}
	rc = handshake(&t, c->api, ticket);
	if (rc == 0) {
		if (interactive) {
			raw_enter();
			if (pipe(winch_pipe) == 0)
				signal(SIGWINCH, on_winch);
		}
		rc = frames(&t) < 0 || relay(&t) < 0 ? -1 : 0;
		raw_restore();
		if (rc < 0 && !t.exited)
			rc =
			    cli_fail(CLI_EUNREACHABLE, "terminal",
			             "the connection to the terminal was lost");
		else
			rc = t.code;
	}
	close(t.fd);
	free(t.in);
	return rc;
}

int
cmd_sb_shell(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj();
	int cols, rows, rc;

	win_size(&cols, &rows);
	jv_set_int(body, "cols", cols);
	jv_set_int(body, "rows", rows);
	rc = term_run(c, a->pos[0], body, true);
	jv_free(body);
	return rc;
}

int
cmd_sb_exec(struct cli *c, const struct cli_args *a)
{
	struct jv *body = jv_obj(), *argv = jv_arr();
	bool tty = cli_args_has(a, "tty");
	int cols, rows, rc;

	for (int i = 1; i < a->npos; i++)
		jv_push(argv, jv_new_str(a->pos[i]));
	jv_set(body, "command", argv);
	if (tty) {
		win_size(&cols, &rows);
		jv_set_bool(body, "tty", true);
		jv_set_int(body, "cols", cols);
		jv_set_int(body, "rows", rows);
	}
	rc = term_run(c, a->pos[0], body, tty && isatty(STDIN_FILENO));
	jv_free(body);
	return rc;
}
