/*
 * The terminal's routes (docs/api.md, "Terminal"): a ticket for a
 * sandbox's terminal, and the WebSocket the ticket opens.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "lib/wsframe.h"
#include "terminal/terminal.h"

/* The command asked for: argv in out (borrowed from body), NULL-ended. */
static int
command_argv(struct resp *w, const struct jv *cmd,
             const char *out[TERMINAL_ARGV_MAX + 1])
{
	size_t n;

	if (cmd == NULL || jv_type(cmd) == JV_NULL) {
		out[0] = NULL;
		return 0;
	}
	n = jv_type(cmd) == JV_ARRAY ? jv_len(cmd) : 0;
	if (n == 0 || n > TERMINAL_ARGV_MAX) {
		api_fail(w, 400, "invalid_request",
		         "command must be an array of 1 to %d strings",
		         TERMINAL_ARGV_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = jv_str(jv_at(cmd, i));
		if (out[i] == NULL || strlen(out[i]) > 4096) {
			api_fail(w, 400, "invalid_request",
			         "command[%zu] must be a string of at most "
			         "4096 bytes",
			         i);
			return -1;
		}
	}
	out[n] = NULL;
	return 0;
}

/*
 * A terminal runs as the sandbox user, never root: a body that asks for
 * another user, or for privileges, is refused rather than quietly given
 * the sandbox user's shell.
 */
static bool
asks_another_user(struct resp *w, const struct jv *body)
{
	const struct jv *user = jv_get(body, "user");
	const struct jv *priv = jv_get(body, "privileged");

	if (user && jv_type(user) != JV_NULL &&
	    (jv_str(user) == NULL || strcmp(jv_str(user), "sandbox") != 0)) {
		api_fail(
		    w, 400, "invalid_request",
		    "user: a terminal runs as the sandbox user (uid 1000); "
		    "root or another user cannot be asked for");
		return true;
	}
	if (priv && jv_type(priv) != JV_NULL &&
	    !(jv_type(priv) == JV_BOOL && !jv_is_true(priv))) {
		api_fail(w, 400, "invalid_request",
		         "privileged: a terminal has the sandbox's own "
		         "confinement; privileges cannot be asked for");
		return true;
	}
	return false;
}

static void
terminal_open(struct req *r, struct resp *w)
{
	const char *argv[TERMINAL_ARGV_MAX + 1];
	struct terminal_ticket tk;
	struct jv *body = NULL, *ans;
	struct err e = {0};
	struct sandbox sb;
	char url[128];

	if (api_load_sandbox(r, w, &sb) < 0 ||
	    api_body_object(r, w, true, &body) < 0)
		return;
	if (asks_another_user(w, body) ||
	    command_argv(w, jv_get(body, "command"), argv) < 0)
		goto out;
	/* Wakes a stopped or frozen sandbox. */
	if ((sb.status != SANDBOX_RUNNING || sb.frozen) &&
	    core_sandbox_start(r->core, sb.id, &sb, &e) < 0) {
		api_reply_err(w, &e);
		goto out;
	}
	{
		const struct terminal_open o = {
		    .owner = sb.owner,
		    .actor = r->via == API_VIA_SESSION ? "console" : r->owner,
		    .session_id = jv_str(jv_get(body, "session_id")),
		    .argv = argv[0] ? argv : NULL,
		    .tty = jv_is_true(jv_get(body, "tty")),
		    .cols = (int)jv_int(jv_get(body, "cols")),
		    .rows = (int)jv_int(jv_get(body, "rows")),
		};
		if (terminal_ticket(r->core->term, &sb, &o, &tk, &e) < 0) {
			api_reply_err(w, &e);
			goto out;
		}
	}
	ans = jv_obj();
	jv_set_str(ans, "ticket", tk.ticket);
	jv_set_str(ans, "session_id", tk.session_id);
	snprintf(url, sizeof(url), "/v1/terminal?ticket=%s", tk.ticket);
	jv_set_str(ans, "url", url);
	api_set_time(ans, "expires_at", tk.expires_at);
	api_reply_json(w, 201, ans);
out:
	jv_free(body);
}

static void
attach(void *arg, int fd, const uint8_t *extra, size_t len,
       void (*done)(void *), void *done_arg)
{
	terminal_attach(arg, fd, extra, len, done, done_arg);
}

static void
abandon(void *arg)
{
	terminal_abandon(arg);
}

/* Origin, when sent, must be exactly this server's own. */
static bool
origin_ok(struct req *r)
{
	const char *origin = api_header(r, "Origin");
	const char *host = api_header(r, "Host");
	char want[320];

	if (origin == NULL)
		return true; /* not a browser: the ticket is the authority */
	if (host == NULL)
		return false;
	snprintf(want, sizeof(want), "%s://%s", r->https ? "https" : "http",
	         host);
	return strcmp(origin, want) == 0;
}

static void
terminal_socket(struct req *r, struct resp *w)
{
	const char *key = api_header(r, "Sec-WebSocket-Key");
	const char *up = api_header(r, "Upgrade");
	const char *ver = api_header(r, "Sec-WebSocket-Version");
	const char *ticket;
	struct term_session *s;
	struct err e = {0};
	bool bad = false;

	if (!origin_ok(r)) {
		api_fail(w, 403, "csrf_failed",
		         "a terminal from another origin is refused: Origin "
		         "must be this server's own");
		return;
	}
	if (up == NULL || strcasecmp(up, "websocket") != 0 || key == NULL ||
	    !wsframe_key_valid(key) || ver == NULL || strcmp(ver, "13") != 0) {
		api_fail(w, 400, "invalid_request",
		         "a WebSocket handshake (version 13) is expected");
		return;
	}
	ticket = api_query(r, w, "ticket", &bad);
	if (bad)
		return;
	s = terminal_redeem(r->core->term, ticket ? ticket : "", &e);
	if (s == NULL) {
		api_reply_err(w, &e);
		return;
	}
	w->status = 101;
	w->upgrade.attach = attach;
	w->upgrade.abandon = abandon;
	w->upgrade.arg = s;
	wsframe_accept(key, w->upgrade.accept);
}

const struct route terminal_routes[] = {
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/terminal",
     .fn = terminal_open},
    {.method = "GET",
     .pattern = "/v1/terminal",
     .fn = terminal_socket,
     .open = true},
    {0},
};
