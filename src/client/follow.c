/*
 * Following a task (follow.h).  Bytes of the stream go through the SSE
 * parser (sse.h); each event is printed as it comes: with --json its
 * data alone on a line, otherwise phases as "• …" lines, the agent's
 * text as it is, tool calls with the file or command they touch, the
 * build's result and, at the end, the outcome with the files changed
 * and the token use.  On a terminal the running tool and the current
 * phase sit in a spinner line below the text.
 *
 * Resuming: the stream ends after `done`; an end without it (the
 * daemon restarted, the connection dropped or went silent for
 * CLI_STREAM_SILENCE_S) is followed by a new request with
 * Last-Event-ID: <last id seen>, again every 1-5 s for
 * CLI_FOLLOW_RETRY_S.  Ctrl-C (SIGINT) sets a flag the transfer
 * watches; the task is not touched.
 */
#include "client/follow.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/sse.h"

static atomic_bool interrupted;

static void
on_sigint(int sig)
{
	(void)sig;
	atomic_store(&interrupted, true);
}

struct follow {
	struct cli *c;
	struct sse sse;
	long last_id;
	bool done;
	bool got_event;
	bool at_line_start;
	struct jv *result;
	char spin[256];
};

const char *
cli_phase_label(const char *phase)
{
	static const struct {
		const char *phase, *label;
	} labels[] = {
	    {"starting", "starting"},
	    {"checkpoint", "checkpoint of the files"},
	    {"agent_running", "agent running"},
	    {"build_check", "build check"},
	    {"health_check", "health check"},
	    {"model", "model"},
	};

	for (size_t i = 0; phase && i < sizeof(labels) / sizeof(labels[0]); i++)
		if (strcmp(labels[i].phase, phase) == 0)
			return labels[i].label;
	return phase ? phase : "?";
}

int
cli_task_exit(const struct jv *t)
{
	const char *st = jv_str(jv_get(t, "status"));
	const char *why = jv_str(jv_get(t, "failure_reason"));

	if (st && strcmp(st, "succeeded") == 0)
		return CLI_OK;
	if (st && strcmp(st, "cancelled") == 0)
		return CLI_TASK_CANCELLED;
	if (why && strcmp(why, "agent_timeout") == 0)
		return CLI_TASK_TIMEOUT;
	if (why && strcmp(why, "cancelled") == 0)
		return CLI_TASK_CANCELLED;
	return CLI_TASK_FAILED;
}

/* Text from a hostile agent, printed without its control sequences. */
static void
put_text(struct follow *f, const char *s)
{
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '\n' || ch == '\t' || ch >= 0x20) {
			if (ch != 0x7f)
				putchar(ch);
		}
	}
	f->at_line_start = s[0] && s[strlen(s) - 1] == '\n';
}

static void
new_line(struct follow *f)
{
	if (!f->at_line_start)
		putchar('\n');
	f->at_line_start = true;
}

static void
show_status(struct follow *f, const struct jv *d)
{
	struct cli *c = f->c;
	const char *phase = jv_str(jv_get(d, "phase"));
	const char *extra = jv_str(jv_get(d, "build"));

	if (extra == NULL)
		extra = jv_str(jv_get(d, "model"));
	new_line(f);
	printf("%s• %s%s%s%s\n", cli_sgr(c, "36"), cli_phase_label(phase),
	       extra ? ": " : "", extra ? extra : "", CLI_RESET(c));
	snprintf(f->spin, sizeof(f->spin), "%s", cli_phase_label(phase));
}

static void
show_tool(struct follow *f, const struct jv *d)
{
	struct cli *c = f->c;
	const char *name = jv_str(jv_get(d, "name"));
	const char *st = jv_str(jv_get(d, "status"));
	const char *path = jv_str(jv_get(d, "path"));
	bool err = st && strcmp(st, "error") == 0;

	if (st && (strcmp(st, "pending") == 0 || strcmp(st, "running") == 0)) {
		/* Only on the spinner line: its end gets a line of its own. */
		snprintf(f->spin, sizeof(f->spin), "%s %s", name ? name : "?",
		         path ? path : "");
		return;
	}
	new_line(f);
	printf("  %s%s%s %s%s%s", cli_sgr(c, err ? "31" : "32"),
	       err ? "✗" : "✓", CLI_RESET(c), cli_sgr(c, "1"),
	       name ? name : "?", CLI_RESET(c));
	if (path) {
		putchar(' ');
		put_text(f, path);
	}
	putchar('\n');
	f->at_line_start = true;
}

static void
show_build(struct follow *f, const struct jv *d)
{
	struct cli *c = f->c;
	const char *st = jv_str(jv_get(d, "build_status"));
	const char *msg = jv_str(jv_get(d, "build_error_message"));
	bool ok = jv_is_true(jv_get(d, "build_ok"));

	new_line(f);
	if (st && strcmp(st, "skipped") == 0)
		printf("%s• build skipped%s\n", cli_sgr(c, "2"), CLI_RESET(c));
	else
		printf("%s%s build %s%s\n", cli_sgr(c, ok ? "32" : "31"),
		       ok ? "✓" : "✗", ok ? "passed" : "failed", CLI_RESET(c));
	if (msg && !ok) {
		put_text(f, msg);
		new_line(f);
	}
}

static void
show_done(struct follow *f, const struct jv *t)
{
	struct cli *c = f->c;
	const struct jv *files = jv_get(t, "files_changed");
	const struct jv *tok = jv_get(t, "tokens");
	const char *st = jv_str(jv_get(t, "status"));
	const char *why = jv_str(jv_get(t, "failure_reason"));
	const char *msg = jv_str(jv_get(t, "error_message"));
	bool ok = st && strcmp(st, "succeeded") == 0;

	new_line(f);
	printf("%s%s task %s%s%s%s in %.1fs\n",
	       cli_sgr(c, ok ? "1;32" : "1;31"), ok ? "✓" : "✗", st ? st : "?",
	       why ? " (" : "", why ? why : "", why ? ")" : "",
	       jv_num(jv_get(t, "duration_ms")) / 1000.0);
	printf("%s", CLI_RESET(c));
	if (msg && !ok)
		printf("  %s\n", msg);
	if (jv_len(files) > 0) {
		printf("  files changed:");
		for (size_t i = 0; i < jv_len(files); i++)
			printf(" %s", jv_str(jv_at(files, i))
			                  ? jv_str(jv_at(files, i))
			                  : "?");
		printf("\n");
	}
	if (tok)
		printf("  tokens: %lld (input %lld, output %lld), cost $%.4f\n",
		       (long long)jv_int(jv_get(tok, "total")),
		       (long long)jv_int(jv_get(tok, "input")),
		       (long long)jv_int(jv_get(tok, "output")),
		       jv_num(jv_get(tok, "cost")));
}

/* The credential proxy could not get an answer from the provider. */
static void
show_provider(struct follow *f, const struct jv *d)
{
	struct cli *c = f->c;
	const char *msg = jv_str(jv_get(d, "message"));

	new_line(f);
	printf("%s%s provider: %s", cli_sgr(c, "31"),
	       jv_is_true(jv_get(d, "permanent")) ? "✗" : "!", CLI_RESET(c));
	put_text(f, msg ? msg : "?");
	new_line(f);
}

static int
on_event(const struct sse_event *ev, void *arg)
{
	struct follow *f = arg;
	struct cli *c = f->c;
	struct jv *d;
	char err[128];

	f->got_event = true;
	if (ev->id[0])
		f->last_id = strtol(ev->id, NULL, 10);
	d = jv_parse(ev->data, ev->data_len, 64, err, sizeof(err));
	cli_spin_stop(c);
	if (c->quiet) {
		/* -q: nothing but the exit status. */
	} else if (c->json) {
		fwrite(ev->data, 1, ev->data_len, stdout);
		putchar('\n');
	} else if (d == NULL) {
		/* Not JSON: not the daemon's; skipped. */
	} else if (strcmp(ev->type, "status") == 0) {
		show_status(f, d);
	} else if (strcmp(ev->type, "message") == 0) {
		const char *role = jv_str(jv_get(d, "role"));
		const char *text = jv_str(jv_get(d, "text"));
		if (role && strcmp(role, "agent_error") == 0) {
			new_line(f);
			printf("%sagent error: %s", cli_sgr(c, "31"),
			       CLI_RESET(c));
		}
		if (text)
			put_text(f, text);
		if (role && strcmp(role, "agent_error") == 0)
			new_line(f);
		else if (!f->at_line_start)
			new_line(f); /* each message is its own part */
	} else if (strcmp(ev->type, "tool") == 0) {
		show_tool(f, d);
	} else if (strcmp(ev->type, "build") == 0) {
		show_build(f, d);
	} else if (strcmp(ev->type, "provider_error") == 0) {
		show_provider(f, d);
	} else if (strcmp(ev->type, "done") == 0) {
		show_done(f, d);
	}
	if (d && strcmp(ev->type, "done") == 0) {
		f->done = true;
		jv_free(f->result);
		f->result = jv_copy(d);
	}
	jv_free(d);
	fflush(stdout);
	if (!f->done && f->spin[0])
		cli_spin_start(c, f->spin);
	return f->done ? 1 : 0;
}

static size_t
on_bytes(const char *p, size_t n, void *arg)
{
	struct follow *f = arg;
	int rc = sse_feed(&f->sse, p, n);

	return rc == 0 ? n : 0; /* done, or a runaway line: stop reading */
}

/*
 * Before a dropped stream is resumed: say so, start a new parser and
 * wait *wait_s seconds (one more each time, up to 5).  False once the
 * user interrupted.
 */
static bool
resume_after(struct cli *c, struct follow *f, int *wait_s)
{
	if (c->fancy || c->err_tty)
		fprintf(stderr,
		        "%s(connection lost after event %ld; resuming)%s\n",
		        cli_sgr(c, "2"), f->last_id, CLI_RESET(c));
	sse_release(&f->sse);
	sse_init(&f->sse, on_event, f);
	for (int i = 0; i < *wait_s * 10 && !atomic_load(&interrupted); i++)
		usleep(100000);
	if (*wait_s < 5)
		(*wait_s)++;
	return !atomic_load(&interrupted);
}

/* The exit status once following is over, and what the user is told. */
static int
follow_end(struct follow *f, const char *sb, const char *task, int rc)
{
	if (!f->done && atomic_load(&interrupted)) {
		fflush(stdout);
		fprintf(stderr,
		        "\nstopped following; task %s keeps running.\n"
		        "re-attach with: sandboxd task follow %s %s\n",
		        task, sb, task);
		return CLI_INTERRUPTED;
	}
	return f->done ? cli_task_exit(f->result) : rc;
}

int
cli_follow(struct cli *c, const char *sb, const char *task, long since,
           struct jv **result)
{
	struct follow f = {.c = c, .last_id = since, .at_line_start = true};
	struct sigaction sa = {0}, old;
	long long give_up = 0;
	bool connected = false;
	char path[512], hdr[64], why[256];
	int rc = CLI_OK, wait_s = 1;

	if (cli_pathf(path, sizeof(path), "/v1/sandboxes/%s/tasks/%s/events",
	              sb, task) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	atomic_store(&interrupted, false);
	snprintf(f.spin, sizeof(f.spin), "waiting for the agent");
	sse_init(&f.sse, on_event, &f);
	for (;;) {
		bool broke = false;
		int r;

		if (f.last_id >= 0)
			snprintf(hdr, sizeof(hdr), "Last-Event-ID: %ld",
			         f.last_id);
		f.got_event = false;
		cli_spin_start(c, f.spin);
		r = cli_stream(c, path, f.last_id >= 0 ? hdr : NULL, on_bytes,
		               &f, &interrupted, &broke, why, sizeof(why));
		cli_spin_stop(c);
		if (r > 0) {
			rc = r; /* an error answer, printed */
			break;
		}
		if (r == 0)
			connected = true;
		if (f.done || atomic_load(&interrupted))
			break;
		if (r < 0 && !connected) {
			rc = cli_fail(CLI_EUNREACHABLE, "unreachable",
			              "cannot reach sandboxd at %s: %s", c->api,
			              why);
			break;
		}
		/* Ended without done: the connection dropped.  Resume. */
		if (f.got_event || give_up == 0) {
			give_up = cli_now_ms() + CLI_FOLLOW_RETRY_S * 1000LL;
			wait_s = 1;
		}
		if (cli_now_ms() > give_up) {
			rc = cli_fail(
			    CLI_ESTREAM, "stream_lost",
			    "lost the event stream of task %s after "
			    "event %ld (%s); re-attach with: sandboxd "
			    "task follow %s %s",
			    task, f.last_id, broke ? why : "closed", sb, task);
			break;
		}
		if (!resume_after(c, &f, &wait_s))
			break;
	}
	sse_release(&f.sse);
	sigaction(SIGINT, &old, NULL);
	rc = follow_end(&f, sb, task, rc);
	if (result)
		*result = f.result;
	else
		jv_free(f.result);
	return rc;
}
