/*
 * `sandboxd app events APP [--limit N] [--type T] [--follow]`: an app's
 * activity timeline, oldest of the page first so that --follow goes on
 * below it.  --follow then reads the event stream from the newest event
 * shown (Last-Event-ID), resuming the same way when the connection
 * drops, until Ctrl-C (exit 0: nothing was interrupted but the watch).
 * --json prints each event's object, one a line; -q each event's id.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/calls.h"
#include "client/commands.h"
#include "client/sse.h"

#define EVENTS_LIMIT_DEFAULT 20

static atomic_bool stop;

static void
on_sigint(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

struct watch {
	struct cli *c;
	struct sse sse;
	char last[32]; /* the newest event's id shown, "" none */
};

/* One event as a line: time, type, actor, message. */
static void
show(struct watch *w, const struct jv *e)
{
	char t[32];
	const char *id = jv_str(jv_get(e, "id"));

	if (id)
		snprintf(w->last, sizeof(w->last), "%s", id);
	if (w->c->quiet) {
		printf("%s\n", id ? id : "");
		return;
	}
	printf("%s  %-22s %-12s %s\n",
	       cli_short_time(jv_str(jv_get(e, "created_at")), t, sizeof(t)),
	       jv_str(jv_get(e, "type")) ?: "?",
	       jv_str(jv_get(e, "actor")) ?: "?",
	       jv_str(jv_get(e, "message")) ?: "");
	fflush(stdout);
}

static int
on_event(const struct sse_event *ev, void *arg)
{
	struct watch *w = arg;
	struct jv *d;
	char err[128];

	if (strcmp(ev->type, "app_event") != 0)
		return 0;
	d = jv_parse(ev->data, ev->data_len, 16, err, sizeof(err));
	if (d == NULL)
		return 0; /* not the daemon's: skipped */
	if (w->c->json) {
		fwrite(ev->data, 1, ev->data_len, stdout);
		putchar('\n');
		fflush(stdout);
		snprintf(w->last, sizeof(w->last), "%s", ev->id);
	} else {
		show(w, d);
	}
	jv_free(d);
	return 0;
}

static size_t
on_bytes(const char *p, size_t n, void *arg)
{
	struct watch *w = arg;

	return sse_feed(&w->sse, p, n) == 0 ? n : 0;
}

/* The page, oldest first. */
static int
page(struct cli *c, const char *app, long limit, const char *type,
     struct watch *w)
{
	struct cli_resp r;
	const struct jv *evs;
	char path[640];
	int rc;

	size_t n;

	/* cli_pathf escapes each %s; the query's values are checked. */
	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/events", app) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	n = strlen(path);
	snprintf(path + n, sizeof(path) - n, "?limit=%ld%s%s", limit,
	         type ? "&type=" : "", type ? type : "");
	rc = cli_call(c, "GET", path, NULL, &r);
	evs = jv_get(r.json, "events");
	for (size_t i = jv_len(evs); rc == 0 && i > 0; i--) {
		const struct jv *e = jv_at(evs, i - 1);
		struct buf b;

		if (!c->json) {
			show(w, e);
			continue;
		}
		buf_init(&b, 0);
		if (jv_dump(e, &b) == 0)
			printf("%s\n", b.data);
		buf_release(&b);
		snprintf(w->last, sizeof(w->last), "%s",
		         jv_str(jv_get(e, "id")) ?: "");
	}
	cli_resp_release(&r);
	return rc;
}

/* Follows the stream from w->last until Ctrl-C. */
static int
follow(struct cli *c, const char *app, const char *type, struct watch *w)
{
	char path[640], hdr[64], why[256];
	int wait_s = 1;

	size_t n;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/events/stream", app) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	n = strlen(path);
	snprintf(path + n, sizeof(path) - n, "%s%s", type ? "?type=" : "",
	         type ? type : "");
	while (!atomic_load(&stop)) {
		bool broke = false;
		int r;

		snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", w->last);
		sse_init(&w->sse, on_event, w);
		r = cli_stream(c, path, w->last[0] ? hdr : NULL, on_bytes, w,
		               &stop, &broke, why, sizeof(why));
		sse_release(&w->sse);
		if (r > 0)
			return r; /* an error answer, printed */
		if (atomic_load(&stop))
			break;
		if (c->err_tty)
			fprintf(stderr, "(connection lost: %s; resuming)\n",
			        r < 0 || broke ? why : "closed");
		for (int i = 0; i < wait_s * 10 && !atomic_load(&stop); i++)
			usleep(100 * 1000);
		if (wait_s < 5)
			wait_s++;
	}
	return CLI_OK;
}

int
cmd_app_events(struct cli *c, const struct cli_args *a)
{
	const char *lim = cli_args_get(a, "limit"), *type;
	struct watch w = {.c = c};
	struct sigaction sa = {0}, old;
	long limit = EVENTS_LIMIT_DEFAULT;
	char *end;
	int rc;

	if (lim) {
		limit = strtol(lim, &end, 10);
		if (*lim == '\0' || *end || limit < 1 || limit > 200)
			return cli_fail(CLI_EUSAGE, "usage",
			                "--limit takes a number from 1 to 200");
	}
	type = cli_args_get(a, "type");
	for (const char *p = type ? type : ""; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789._", *p))
			return cli_fail(CLI_EUSAGE, "usage",
			                "--type takes an event type or its "
			                "prefix (a-z, 0-9, '.', '_')");
	rc = page(c, a->pos[0], limit, type, &w);
	if (rc != 0 || !cli_args_has(a, "follow"))
		return rc;
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	atomic_store(&stop, false);
	rc = follow(c, a->pos[0], type, &w);
	sigaction(SIGINT, &old, NULL);
	return rc;
}
