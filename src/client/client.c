/*
 * The client's shared parts (client.h).  Where to talk: --api/--token
 * win over SANDBOXD_API/SANDBOXD_TOKEN, which win over the config file
 * (`api=` and `token=` lines, written by `sandboxd login`, mode 0600).
 * Every call is one net/http transfer whose body is gathered (capped at
 * CLI_MAX_RESPONSE_BYTES); an answer of 400 or more is the API's error
 * envelope, printed as one line.  A 401 without any token configured
 * says how to get one, since that is the usual first mistake on the
 * host.  Terminal niceties (colour, spinners) need stdout to be a
 * terminal and NO_COLOR unset; --json and -q turn them off too, so
 * scripts see exactly the API's bytes or the ids.
 */
#include "client/client.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "client/table.h"
#include "net/http.h"
#include "lib/limits.h"

const struct cli_opt cli_global_opts[] = {
    {.name = "api", .value = true, .help = "URL: the API (SANDBOXD_API)"},
    {.name = "token",
     .value = true,
     .help = "TOKEN: the API token (SANDBOXD_TOKEN; visible in ps)"},
    {.name = "json", .help = "print the API's JSON unchanged"},
    {.name = "quiet", .short_name = 'q', .help = "print ids only"},
    {.name = "no-color", .help = "no colour or progress"},
    {.name = "help", .short_name = 'h', .help = "this help"},
    {0},
};

long long
cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
cli_fail(int rc, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line, whatever the message held. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	fprintf(stderr, "error: %s (%s)\n", msg, code);
	return rc;
}

const char *
cli_sgr(const struct cli *c, const char *sgr)
{
	static char b[8][16];
	static unsigned n;
	char *s;

	if (!c->fancy)
		return "";
	s = b[n++ % 8];
	snprintf(s, sizeof(b[0]), "\033[%sm", sgr);
	return s;
}

int
cli_config_path(char *out, size_t len)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (x && x[0] == '/')
		n = snprintf(out, len, "%s/sandboxd/config", x);
	else if (home && home[0])
		n = snprintf(out, len, "%s/.config/sandboxd/config", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* "api=" and "token=" of the config file, when there is one. */
static void
config_read(char *api, size_t apilen, char *token, size_t toklen, bool *tok)
{
	char path[4096], text[CLI_CONFIG_BYTES + 1];
	ssize_t n;
	int fd;

	if (cli_config_path(path, sizeof(path)) < 0)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, text, CLI_CONFIG_BYTES);
	close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "api=", 4) == 0 && api[0] == '\0')
			snprintf(api, apilen, "%s", line + 4);
		else if (strncmp(line, "token=", 6) == 0 && !*tok) {
			snprintf(token, toklen, "%s", line + 6);
			*tok = token[0] != '\0';
		}
	}
	explicit_bzero(text, sizeof(text));
}

int
cli_config_save(const char *api, const char *token, char *err, size_t errlen)
{
	char path[4096], tmp[WORKSPACE_PATH_MAX], *slash;
	FILE *f;
	int fd;

	if (cli_config_path(path, sizeof(path)) < 0) {
		snprintf(err, errlen,
		         "neither XDG_CONFIG_HOME nor HOME is set");
		return -1;
	}
	/* The directories: .config (if missing) and sandboxd, 0700. */
	for (slash = strchr(path + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot make %s: %s", path,
			         strerror(errno));
			return -1;
		}
		*slash = '/';
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		snprintf(err, errlen, "cannot write %s: %s", tmp,
		         strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fchmod(fd, 0600);
	fprintf(f, "# sandboxd client (sandboxd login)\napi=%s\ntoken=%s\n",
	        api, token);
	if (fflush(f) != 0 || fsync(fd) != 0 || fclose(f) != 0 ||
	    rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path,
		         strerror(errno));
		unlink(tmp);
		return -1;
	}
	snprintf(err, errlen, "%s", path);
	return 0;
}

int
cli_setup(struct cli *c, const struct cli_args *a)
{
	const char *api = cli_args_get(a, "api"),
	           *tok = cli_args_get(a, "token");
	const char *nc = getenv("NO_COLOR");
	struct winsize ws;

	memset(c, 0, sizeof(*c));
	if (api == NULL)
		api = getenv("SANDBOXD_API");
	if (tok == NULL)
		tok = getenv("SANDBOXD_TOKEN");
	if (api && api[0])
		snprintf(c->api, sizeof(c->api), "%s", api);
	if (tok && tok[0]) {
		snprintf(c->token, sizeof(c->token), "%s", tok);
		c->token_set = true;
	}
	if (c->api[0] == '\0' || !c->token_set)
		config_read(c->api, sizeof(c->api), c->token, sizeof(c->token),
		            &c->token_set);
	if (c->api[0] == '\0')
		snprintf(c->api, sizeof(c->api), "%s", CLI_DEFAULT_API);
	for (size_t n = strlen(c->api); n > 0 && c->api[n - 1] == '/'; n--)
		c->api[n - 1] = '\0';
	if (strncmp(c->api, "http://", 7) != 0 &&
	    strncmp(c->api, "https://", 8) != 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "the API must be an http:// or https:// URL, "
		                "not %s",
		                c->api);
	c->json = cli_args_has(a, "json");
	c->quiet = cli_args_has(a, "quiet");
	c->fancy = isatty(STDOUT_FILENO) && !(nc && nc[0]) && !c->json &&
	           !c->quiet && !cli_args_has(a, "no-color");
	c->err_tty = isatty(STDERR_FILENO);
	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		c->width = ws.ws_col;
	return 0;
}

int
cli_status_exit(long status)
{
	switch (status) {
	case 401:
	case 403:
		return CLI_EAUTH;
	case 404:
		return CLI_ENOTFOUND;
	case 409:
		return CLI_ECONFLICT;
	case 413:
		return CLI_ETOOLARGE;
	case 503:
	case 507:
		return CLI_EUNAVAILABLE;
	default:
		return CLI_EFAIL;
	}
}

static bool
api_is_local(const char *api)
{
	const char *h = strstr(api, "://");

	h = h ? h + 3 : api;
	return strncmp(h, "127.", 4) == 0 || strncmp(h, "localhost", 9) == 0 ||
	       strncmp(h, "[::1]", 5) == 0;
}

/* The error of an answer >= 400, one line; the exit status. */
static int
answer_error(struct cli *c, const struct cli_resp *r)
{
	const struct jv *e = r->json ? jv_get(r->json, "error") : NULL;
	const char *code = e ? jv_str(jv_get(e, "code")) : NULL;
	const char *msg = e ? jv_str(jv_get(e, "message")) : NULL;
	int rc = cli_status_exit(r->status);
	char fallback[64];

	if (r->status == 401 && !c->token_set)
		return cli_fail(rc, "unauthorized",
		                "no API token: set SANDBOXD_TOKEN or run "
		                "`sandboxd login`%s",
		                api_is_local(c->api)
		                    ? "; on this host the daemon printed one "
		                      "at its first start, and `sandboxd "
		                      "token` makes a new one"
		                    : "");
	if (code == NULL) {
		snprintf(fallback, sizeof(fallback), "http_%ld", r->status);
		code = fallback;
	}
	if (msg == NULL)
		msg = "the API answered without an error message";
	return cli_fail(rc, code, "%s", msg);
}

struct call_ctx {
	struct cli *c;
	struct cli_resp *r;
};

static size_t
gather(const char *p, size_t n, void *arg)
{
	struct cli_resp *r = ((struct call_ctx *)arg)->r;

	return buf_append(&r->body, p, n) == 0 ? n : 0;
}

static size_t
header(const char *p, size_t n, void *arg)
{
	struct cli_resp *r = ((struct call_ctx *)arg)->r;

	if (n > 6 && strncasecmp(p, "ETag:", 5) == 0) {
		const char *v = p + 5;
		size_t l = n - 5;

		while (l > 0 && (*v == ' ' || *v == '\t'))
			v++, l--;
		while (l > 0 && (v[l - 1] == '\r' || v[l - 1] == '\n'))
			l--;
		snprintf(r->etag, sizeof(r->etag), "%.*s", (int)l, v);
	}
	if (n > 18 && strncasecmp(p, "Sandboxd-Trash-Id:", 18) == 0) {
		const char *v = p + 18;
		size_t l = n - 18;

		while (l > 0 && (*v == ' ' || *v == '\t'))
			v++, l--;
		while (l > 0 && (v[l - 1] == '\r' || v[l - 1] == '\n'))
			l--;
		snprintf(r->trash_id, sizeof(r->trash_id), "%.*s", (int)l, v);
	}
	return n;
}

static void
tick(void *arg)
{
	cli_spin_tick(((struct call_ctx *)arg)->c);
}

static int
perform(struct cli *c, const char *method, const char *path, const void *body,
        size_t len, bool send, const char *ctype, struct cli_resp *r)
{
	char url[4096], auth[CLI_MAX_SECRET_BYTES + 32], ct[64];
	const char *hdrs[4];
	struct call_ctx ctx = {c, r};
	struct http_call call = {0};
	int nh = 0, rc;

	memset(r, 0, sizeof(*r));
	buf_init(&r->body, CLI_MAX_RESPONSE_BYTES);
	snprintf(url, sizeof(url), "%s%s", c->api, path);
	if (c->token_set) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		         c->token);
		hdrs[nh++] = auth;
	}
	snprintf(ct, sizeof(ct), "Content-Type:%s%s", ctype ? " " : "",
	         ctype ? ctype : ""); /* bare: no form type (API refuses) */
	if (ctype || send)
		hdrs[nh++] = ct;
	hdrs[nh] = NULL;
	call.method = method;
	call.url = url;
	call.https = true;
	call.headers = hdrs;
	call.body = body;
	call.body_len = len;
	call.send_body = send;
	call.connect_timeout_ms = CLI_CONNECT_TIMEOUT_MS;
	call.on_body = gather;
	call.on_header = header;
	call.on_tick = c->spin_label ? tick : NULL;
	call.arg = &ctx;
	rc = http_perform(&call);
	explicit_bzero(auth, sizeof(auth));
	cli_spin_stop(c);
	r->status = call.status;
	if (rc < 0 && call.status == 0)
		return cli_fail(CLI_EUNREACHABLE, "unreachable",
		                "cannot reach sandboxd at %s: %s", c->api,
		                call.err);
	if (rc < 0)
		return cli_fail(CLI_EFAIL, "transfer_failed",
		                "the answer from %s broke off: %s", c->api,
		                call.err);
	if (r->body.len > 0 && r->body.data[0] == '{') {
		char perr[128];
		r->json =
		    jv_parse(r->body.data, r->body.len, 64, perr, sizeof(perr));
	}
	if (r->status >= 400)
		return answer_error(c, r);
	return CLI_OK;
}

int
cli_call(struct cli *c, const char *method, const char *path,
         const struct jv *body, struct cli_resp *r)
{
	struct buf b;
	int rc;

	memset(r, 0, sizeof(*r));
	if (body == NULL)
		return perform(c, method, path, NULL, 0,
		               strcmp(method, "POST") == 0, NULL, r);
	buf_init(&b, 0);
	if (jv_dump(body, &b) < 0) {
		buf_release(&b);
		memset(r, 0, sizeof(*r));
		return cli_fail(CLI_EFAIL, "internal", "out of memory");
	}
	rc = perform(c, method, path, b.data, b.len, true, "application/json",
	             r);
	explicit_bzero(b.data, b.len);
	buf_release(&b);
	return rc;
}

int
cli_call_raw(struct cli *c, const char *method, const char *path,
             const void *body, size_t len, struct cli_resp *r)
{
	memset(r, 0, sizeof(*r));
	return perform(c, method, path, body, len, true,
	               "application/octet-stream", r);
}

void
cli_resp_release(struct cli_resp *r)
{
	buf_release(&r->body);
	jv_free(r->json);
	r->json = NULL;
}

void
cli_print_raw(const struct cli_resp *r)
{
	if (r->body.len) {
		fwrite(r->body.data, 1, r->body.len, stdout);
		if (r->body.data[r->body.len - 1] != '\n')
			putchar('\n');
	}
	fflush(stdout);
}

const char *
cli_field(const struct jv *o, const char *key, char *tmp, size_t len)
{
	const struct jv *v = o ? jv_get(o, key) : NULL;
	struct buf b;

	if (v == NULL)
		return "-";
	switch (jv_type(v)) {
	case JV_NULL:
		return "-";
	case JV_STRING:
		return jv_str(v);
	case JV_BOOL:
		return jv_is_true(v) ? "true" : "false";
	case JV_INT:
		snprintf(tmp, len, "%lld", (long long)jv_int(v));
		return tmp;
	default:
		buf_init(&b, 0);
		jv_dump(v, &b);
		snprintf(tmp, len, "%s", b.data ? b.data : "");
		buf_release(&b);
		return tmp;
	}
}

void
cli_print_object(struct cli *c, const struct jv *o)
{
	struct table t;
	const char *head[] = {"FIELD", "VALUE", NULL};
	void *it = NULL;
	const char *key;
	struct jv *v;
	struct buf b;
	char tmp[4096], *nl;

	if (table_init(&t, head) < 0)
		return;
	while (jv_each(o, &it, &key, &v)) {
		const char *row[2] = {key, cli_field(o, key, tmp, sizeof(tmp))};
		table_add(&t, row);
	}
	/* A record has no header: the FIELD/VALUE line is left out. */
	buf_init(&b, 0);
	table_render(&t, &b, c->width, false);
	nl = b.data ? strchr(b.data, '\n') : NULL;
	if (nl)
		fputs(nl + 1, stdout);
	buf_release(&b);
	table_release(&t);
	fflush(stdout);
}

void
cli_print_table(struct cli *c, const struct table *t)
{
	struct buf b;

	buf_init(&b, 0);
	if (table_render(t, &b, c->width, c->fancy) == 0 && b.data)
		fputs(b.data, stdout);
	buf_release(&b);
	fflush(stdout);
}

/* --- the spinner ------------------------------------------------------ */

static const char *const frames[] = {"⠋", "⠙", "⠹", "⠸", "⠼",
                                     "⠴", "⠦", "⠧", "⠇", "⠏"};

void
cli_spin_start(struct cli *c, const char *label)
{
	if (!c->fancy || !c->err_tty)
		return;
	c->spin_label = label;
	c->spin_start_ms = cli_now_ms();
	c->spin_last_ms = 0;
	c->spin_frame = 0;
	cli_spin_tick(c);
}

void
cli_spin_tick(struct cli *c)
{
	long long now = cli_now_ms();

	if (c->spin_label == NULL || now - c->spin_last_ms < 100)
		return;
	c->spin_last_ms = now;
	fprintf(stderr, "\r\033[36m%s\033[0m %s %llds\033[K",
	        frames[c->spin_frame++ % 10], c->spin_label,
	        (now - c->spin_start_ms) / 1000);
	fflush(stderr);
	c->spin_drawn = true;
}

void
cli_spin_stop(struct cli *c)
{
	if (c->spin_drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	c->spin_drawn = false;
	c->spin_label = NULL;
}

/* --- prompts ----------------------------------------------------------- */

static struct termios saved_tio;
static volatile sig_atomic_t tio_saved;

static void
restore_tty(int sig)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' ||
	                 s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	if (i)
		memmove(s, s + i, n - i + 1);
}

/* Reads stdin up to EOF or, with one_line, the first newline. */
static int
read_stdin(char *out, size_t len, bool one_line)
{
	size_t n = 0;
	ssize_t got;

	while (n + 1 < len) {
		got = read(STDIN_FILENO, out + n, one_line ? 1 : len - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
		if (one_line && out[n - 1] == '\n')
			break;
	}
	out[n] = '\0';
	if (n + 1 >= len && !one_line) {
		char extra;
		if (read(STDIN_FILENO, &extra, 1) > 0) {
			explicit_bzero(out, len);
			return -1;
		}
	}
	trim(out);
	return out[0] ? 0 : -1;
}

static int
prompt_tty(const char *prompt, char *out, size_t len, bool echo)
{
	struct termios t;
	int rc;

	fputs(prompt, stderr);
	fflush(stderr);
	if (!echo && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		t = saved_tio;
		t.c_lflag &= ~(tcflag_t)ECHO;
		t.c_lflag |= ECHONL;
		tio_saved = 1;
		signal(SIGINT, restore_tty);
		signal(SIGTERM, restore_tty);
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
	}
	rc = read_stdin(out, len, true);
	if (tio_saved) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
		tio_saved = 0;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
	}
	return rc;
}

int
cli_read_secret(const char *prompt, char *out, size_t len)
{
	if (!isatty(STDIN_FILENO))
		return read_stdin(out, len, false);
	return prompt_tty(prompt, out, len, false);
}

int
cli_read_line(const char *prompt, char *out, size_t len)
{
	if (!isatty(STDIN_FILENO))
		return read_stdin(out, len, true);
	return prompt_tty(prompt, out, len, true);
}

bool
cli_confirm(const char *question)
{
	char answer[16];

	if (!isatty(STDIN_FILENO))
		return false;
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	if (read_stdin(answer, sizeof(answer), true) < 0)
		return false;
	return strcasecmp(answer, "y") == 0 || strcasecmp(answer, "yes") == 0;
}

int
cli_pathf(char *out, size_t len, const char *fmt, ...)
{
	char enc[2048];
	size_t n = 0;
	va_list ap;
	int rc = 0;

	va_start(ap, fmt);
	for (const char *f = fmt; *f && rc == 0; f++) {
		const char *piece = f;
		size_t plen = 1;

		if (f[0] == '%' && f[1] == 's') {
			if (http_escape(va_arg(ap, const char *), enc,
			                sizeof(enc)) < 0) {
				rc = -1;
				break;
			}
			piece = enc;
			plen = strlen(enc);
			f++;
		}
		if (n + plen >= len)
			rc = -1;
		else {
			memcpy(out + n, piece, plen);
			n += plen;
		}
	}
	va_end(ap);
	out[n < len ? n : len - 1] = '\0';
	return rc;
}

struct stream_ctx {
	struct cli *c;
	long status;
	struct cli_resp err;
	size_t (*fn)(const char *p, size_t n, void *arg);
	void *arg;
};

static size_t
stream_header(const char *p, size_t n, void *arg)
{
	struct stream_ctx *s = arg;

	/* The last status line wins (a 100 Continue comes before). */
	if (n > 12 && strncmp(p, "HTTP/", 5) == 0) {
		const char *sp = memchr(p, ' ', n);
		if (sp)
			s->status = strtol(sp + 1, NULL, 10);
	}
	return n;
}

static size_t
stream_body(const char *p, size_t n, void *arg)
{
	struct stream_ctx *s = arg;

	if (s->status >= 400)
		return buf_append(&s->err.body, p, n) == 0 ? n : 0;
	return s->fn(p, n, s->arg);
}

static void
stream_tick(void *arg)
{
	cli_spin_tick(((struct stream_ctx *)arg)->c);
}

int
cli_stream(struct cli *c, const char *path, const char *extra,
           size_t (*fn)(const char *p, size_t n, void *arg), void *arg,
           const atomic_bool *stop, bool *broke, char *why, size_t whylen)
{
	char url[4096], auth[CLI_MAX_SECRET_BYTES + 32];
	const char *hdrs[4];
	struct stream_ctx s = {.c = c, .fn = fn, .arg = arg};
	struct http_call call = {0};
	int nh = 0, rc;

	*broke = false;
	buf_init(&s.err.body, 1u << 20);
	snprintf(url, sizeof(url), "%s%s", c->api, path);
	if (c->token_set) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		         c->token);
		hdrs[nh++] = auth;
	}
	hdrs[nh++] = "Accept: text/event-stream";
	if (extra)
		hdrs[nh++] = extra;
	hdrs[nh] = NULL;
	call.method = "GET";
	call.url = url;
	call.https = true;
	call.headers = hdrs;
	call.connect_timeout_ms = CLI_CONNECT_TIMEOUT_MS;
	/* The daemon sends a keep-alive every 15 s: silence means gone. */
	call.low_speed_s = CLI_STREAM_SILENCE_S;
	call.on_body = stream_body;
	call.on_header = stream_header;
	call.on_tick = stream_tick;
	call.stop = stop;
	call.arg = &s;
	rc = http_perform(&call);
	explicit_bzero(auth, sizeof(auth));
	if (s.status >= 400 || call.status >= 400) {
		cli_spin_stop(c);
		s.err.status = s.status >= 400 ? s.status : call.status;
		if (s.err.body.len > 0 && s.err.body.data[0] == '{') {
			char perr[128];
			s.err.json = jv_parse(s.err.body.data, s.err.body.len,
			                      64, perr, sizeof(perr));
		}
		rc = answer_error(c, &s.err);
		cli_resp_release(&s.err);
		return rc;
	}
	cli_resp_release(&s.err);
	if (rc < 0 && call.status == 0 && s.status == 0) {
		snprintf(why, whylen, "%s", call.err);
		return -1;
	}
	if (rc < 0) {
		*broke = true;
		snprintf(why, whylen, "%s", call.err);
	}
	return 0;
}

const char *
cli_short_time(const char *rfc3339, char *tmp, size_t len)
{
	if (rfc3339 == NULL || strlen(rfc3339) < 16)
		return rfc3339 ? rfc3339 : "-";
	snprintf(tmp, len, "%.10s %.5s", rfc3339, rfc3339 + 11);
	return tmp;
}
