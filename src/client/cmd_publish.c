/*
 * The publish commands (docs/publish.md, docs/cli.md): publish, releases,
 * rollback, unpublish.
 *
 * `publish --follow` reads the release's build log as an event stream
 * (GET /v1/apps/{id}/releases/{rid}/log): each `log` event's line is
 * printed as it comes, and the `end` event's release says how it
 * ended: ready (exit 0, the URL printed), failed (exit 1, its error).
 * A dropped connection is resumed where it stopped (Last-Event-ID, the
 * byte offset of the log); Ctrl-C stops following, the build goes on.
 * The lines are printed with their control bytes as '?' whatever the
 * server did, so a build's output cannot drive the terminal.
 *
 * A RELEASE on the command line is its id or its number ("3" or "#3"),
 * looked up in the app's list of releases.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/calls.h"
#include "client/commands.h"
#include "client/follow.h"
#include "client/sse.h"
#include "client/table.h"

static atomic_bool pub_stop;

static void
pub_on_sigint(int sig)
{
	(void)sig;
	atomic_store(&pub_stop, true);
}

/* --- pure parts (tests/unit/test_cli.c) ---------------------------------- */

const char *
cli_size_text(long long bytes, char *out, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 0) {
		snprintf(out, len, "-");
		return out;
	}
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%lld B", bytes);
	else
		snprintf(out, len, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
	return out;
}

const char *
cli_age_text(long long seconds, char *out, size_t len)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds < 60)
		snprintf(out, len, "%llds", seconds);
	else if (seconds < 3600)
		snprintf(out, len, "%lldm", seconds / 60);
	else if (seconds < 86400)
		snprintf(out, len, "%lldh", seconds / 3600);
	else
		snprintf(out, len, "%lldd", seconds / 86400);
	return out;
}

long
cli_release_number(const char *arg)
{
	char *end;
	long n;

	if (arg[0] == '#')
		arg++;
	if (*arg < '0' || *arg > '9' || strlen(arg) > 9)
		return -1;
	n = strtol(arg, &end, 10);
	return *end || n < 1 ? -1 : n;
}

void
cli_print_log_line(FILE *f, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		fputc((ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : ch, f);
	}
	fputc('\n', f);
}

/* --- publish ------------------------------------------------------------- */

/* A field of o as text into out ("" when absent or null). */
static void
field_copy(const struct jv *o, const char *key, char *out, size_t len)
{
	char tmp[64];
	const char *v = cli_field(o, key, tmp, sizeof(tmp));

	snprintf(out, len, "%s", strcmp(v, "-") == 0 ? "" : v);
}

/* The app's URL once it is published (GET /v1/apps/{id}/publish). */
static void
published_url(struct cli *c, const char *app, char *url, size_t len)
{
	struct cli_resp r;
	char path[512];

	memset(&r, 0, sizeof(r));
	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/publish", app) == 0 &&
	    cli_call(c, "GET", path, NULL, &r) == 0)
		field_copy(r.json, "url", url, len);
	cli_resp_release(&r);
}

struct pub_follow {
	struct cli *c;
	struct sse sse;
	char last[24];     /* the last log event's id, "" none */
	struct jv *result; /* the end event's release */
	long lines;
};

static int
pub_on_event(const struct sse_event *ev, void *arg)
{
	struct pub_follow *f = arg;
	char err[128];

	if (strcmp(ev->type, "log") == 0) {
		cli_spin_stop(f->c);
		/* --json keeps stdout for the answer: the log goes beside. */
		cli_print_log_line(f->c->json ? stderr : stdout, ev->data,
		                   ev->data_len);
		fflush(f->c->json ? stderr : stdout);
		snprintf(f->last, sizeof(f->last), "%s", ev->id);
		f->lines++;
		return 0;
	}
	if (strcmp(ev->type, "end") != 0)
		return 0;
	jv_free(f->result);
	f->result = jv_parse(ev->data, ev->data_len, 16, err, sizeof(err));
	if (f->result && f->c->json) {
		fwrite(ev->data, 1, ev->data_len, stdout);
		putchar('\n');
	}
	return 1; /* the stream is over */
}

static size_t
pub_on_bytes(const char *p, size_t n, void *arg)
{
	struct pub_follow *f = arg;

	return sse_feed(&f->sse, p, n) == 0 ? n : 0;
}

/* Reads the log to its end event; resumes a dropped stream. */
static int
pub_follow_log(struct cli *c, const char *app, const char *rid,
               struct pub_follow *f)
{
	char path[640], hdr[64], why[256];
	long long give_up = cli_now_ms() + CLI_FOLLOW_RETRY_S * 1000LL;
	int wait_s = 1;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/releases/%s/log", app,
	              rid) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	while (!atomic_load(&pub_stop) && f->result == NULL) {
		bool broke = false;
		int r;

		snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", f->last);
		sse_init(&f->sse, pub_on_event, f);
		r = cli_stream(c, path, f->last[0] ? hdr : NULL, pub_on_bytes,
		               f, &pub_stop, &broke, why, sizeof(why));
		sse_release(&f->sse);
		if (r > 0)
			return r; /* an error answer, printed */
		if (f->result || atomic_load(&pub_stop))
			break;
		if (cli_now_ms() > give_up)
			return cli_fail(CLI_ESTREAM, "stream_lost",
			                "the build log's stream was lost: %s",
			                why[0] ? why : "closed");
		if (c->err_tty)
			fprintf(stderr, "(connection lost: %s; resuming)\n",
			        r < 0 || broke ? why : "closed");
		for (int i = 0; i < wait_s * 10 && !atomic_load(&pub_stop); i++)
			usleep(100 * 1000);
		if (wait_s < 5)
			wait_s++;
	}
	return CLI_OK;
}

/* How a followed build ended: 0 ready (the URL printed), 1 failed. */
static int
pub_outcome(struct cli *c, const char *rid, const char *url,
            const struct jv *rel)
{
	const char *status = jv_str(jv_get(rel, "status"));
	char size[32];

	if (status && strcmp(status, "ready") == 0) {
		if (c->quiet && !c->json)
			printf("%s\n", url);
		else if (!c->json)
			printf("release #%lld ready (%s, %s, %lld files, "
			       "built in %.1f s)\n%s\n",
			       (long long)jv_int(jv_get(rel, "number")),
			       jv_str(jv_get(rel, "kind")) ?: "?",
			       cli_size_text(jv_int(jv_get(rel, "size_bytes")),
			                     size, sizeof(size)),
			       (long long)jv_int(jv_get(rel, "files")),
			       (double)jv_int(jv_get(rel, "build_ms")) / 1000,
			       url);
		return CLI_OK;
	}
	return cli_fail(CLI_EFAIL, "build_failed", "release %s %s: %s", rid,
	                status ? status : "ended",
	                jv_str(jv_get(rel, "error")) ?: "no reason given");
}

/* Follows release rid of app to its end (publish --follow). */
static int
pub_follow(struct cli *c, const char *app, const char *rid, const char *url0)
{
	char url[512];
	struct pub_follow f = {.c = c};
	struct sigaction sa = {0}, old;
	int rc;

	snprintf(url, sizeof(url), "%s", url0);
	sa.sa_handler = pub_on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	atomic_store(&pub_stop, false);
	rc = pub_follow_log(c, app, rid, &f);
	sigaction(SIGINT, &old, NULL);
	if (rc == CLI_OK && f.result == NULL) {
		fprintf(stderr,
		        "\nstopped following; the build goes on.\n"
		        "see it with: sandboxd releases %s\n",
		        app);
		return CLI_INTERRUPTED;
	}
	if (rc == CLI_OK && url[0] == '\0')
		published_url(c, app, url, sizeof(url));
	if (rc == CLI_OK)
		rc = pub_outcome(c, rid, url, f.result);
	jv_free(f.result);
	return rc;
}

static struct jv *
pub_body(const struct cli_args *a)
{
	static const char *const keys[] = {"commit", "snapshot", "label"};
	struct jv *body = jv_obj();

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (cli_args_get(a, keys[i]))
			jv_set_str(body, keys[i], cli_args_get(a, keys[i]));
	return body;
}

int
cmd_publish(struct cli *c, const struct cli_args *a)
{
	struct jv *body = pub_body(a);
	const struct jv *rel;
	struct cli_resp r;
	char path[512], rid[64], url[512];
	bool follow = cli_args_has(a, "follow");
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/publish", a->pos[0]) <
	    0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc != 0) {
		cli_resp_release(&r);
		return rc;
	}
	rel = jv_get(r.json, "release");
	field_copy(rel, "id", rid, sizeof(rid));
	field_copy(r.json, "url", url, sizeof(url));
	if (c->quiet && !c->json && !follow)
		printf("%s\n", rid);
	else if (!c->json || !follow)
		cli_done(c, &r,
		         "release #%lld %s building (from %s)\nurl: %s\n",
		         (long long)jv_int(jv_get(rel, "number")), rid,
		         jv_str(jv_get(rel, "source")) ?: "files", url);
	fflush(stdout);
	cli_resp_release(&r);
	if (!follow)
		return CLI_OK;
	if (c->fancy)
		cli_spin_start(c, "building");
	rc = pub_follow(c, a->pos[0], rid, url);
	cli_spin_stop(c);
	return rc;
}

/* --- releases, rollback, unpublish ---------------------------------------- */

/* One release as a row: ACTIVE # ID STATUS KIND COMMIT SIZE AGE. */
static int
release_row(struct table *t, const struct jv *o, long long now)
{
	char num[24], size[32], age[24], commit[16];
	const char *cm = jv_str(jv_get(o, "commit"));
	const char *at = jv_str(jv_get(o, "created_at"));
	struct tm tm = {0};
	const char *cells[8];

	snprintf(num, sizeof(num), "%lld",
	         (long long)jv_int(jv_get(o, "number")));
	snprintf(commit, sizeof(commit), "%.12s", cm && *cm ? cm : "-");
	snprintf(age, sizeof(age), "-");
	if (at && strptime(at, "%Y-%m-%dT%H:%M:%S", &tm))
		cli_age_text(now - (long long)timegm(&tm), age, sizeof(age));
	cells[0] = jv_is_true(jv_get(o, "active")) ? "*" : "";
	cells[1] = num;
	cells[2] = jv_str(jv_get(o, "id"));
	cells[3] = jv_str(jv_get(o, "status"));
	cells[4] = jv_str(jv_get(o, "kind"));
	cells[5] = commit;
	cells[6] = jv_str(jv_get(o, "status")) &&
	                   strcmp(jv_str(jv_get(o, "status")), "ready") == 0
	               ? cli_size_text(jv_int(jv_get(o, "size_bytes")), size,
	                               sizeof(size))
	               : "-";
	cells[7] = age;
	if (cells[4] && *cells[4] == '\0')
		cells[4] = "-";
	return table_add(t, cells);
}

int
cmd_releases(struct cli *c, const struct cli_args *a)
{
	static const char *const head[] = {"ACTIVE", "#",    "ID",
	                                   "STATUS", "KIND", "COMMIT",
	                                   "SIZE",   "AGE",  NULL};
	const struct jv *items;
	struct cli_resp r;
	struct table t;
	char path[512], id[64];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/releases", a->pos[0]) <
	    0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_call(c, "GET", path, NULL, &r);
	items = jv_get(r.json, "releases");
	if (rc == 0 && c->json)
		cli_print_raw(&r);
	else if (rc == 0 && c->quiet)
		for (size_t i = 0; i < jv_len(items); i++)
			printf("%s\n", cli_field(jv_at(items, i), "id", id,
			                         sizeof(id)));
	else if (rc == 0 && table_init(&t, head) == 0) {
		long long now = (long long)time(NULL);
		for (size_t i = 0; i < jv_len(items); i++)
			release_row(&t, jv_at(items, i), now);
		cli_print_table(c, &t);
		table_release(&t);
	}
	cli_resp_release(&r);
	return rc;
}

/* RELEASE (an id, or a number looked up) into id. */
static int
release_id(struct cli *c, const char *app, const char *arg, char *id,
           size_t len)
{
	long n = cli_release_number(arg);
	const struct jv *items;
	struct cli_resp r;
	char path[512];
	int rc;

	if (n < 0) {
		snprintf(id, len, "%s", arg);
		return 0;
	}
	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/releases", app) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_call(c, "GET", path, NULL, &r);
	items = jv_get(r.json, "releases");
	for (size_t i = 0; rc == 0 && i < jv_len(items); i++)
		if (jv_int(jv_get(jv_at(items, i), "number")) == n) {
			field_copy(jv_at(items, i), "id", id, len);
			cli_resp_release(&r);
			return 0;
		}
	cli_resp_release(&r);
	return rc ? rc
	          : cli_fail(CLI_ENOTFOUND, "not_found",
	                     "app %s has no release #%ld", app, n);
}

int
cmd_rollback(struct cli *c, const struct cli_args *a)
{
	char path[512], rid[64], host[300];
	struct jv *body;
	struct cli_resp r;
	int rc;

	if ((rc = release_id(c, a->pos[0], a->pos[1], rid, sizeof(rid))) != 0)
		return rc;
	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/rollback", a->pos[0]) <
	    0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	body = jv_obj();
	jv_set_str(body, "release", rid);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(c, &r, "app %s serves release %s again at %s\n",
		         a->pos[0], a->pos[1],
		         cli_field(r.json, "url", host, sizeof(host)));
	cli_resp_release(&r);
	return rc;
}

int
cmd_unpublish(struct cli *c, const struct cli_args *a)
{
	char path[512], q[256];
	struct cli_resp r;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/publish", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	if (!cli_args_has(a, "yes")) {
		fprintf(stderr,
		        "warning: its addresses stop answering at once; "
		        "the releases are kept\n");
		snprintf(q, sizeof(q), "Unpublish app %s?", a->pos[0]);
		if (!cli_confirm(q))
			return cli_fail(CLI_EUSAGE, "not_confirmed",
			                "not unpublished (pass --yes to do it "
			                "without asking)");
	}
	rc = cli_call(c, "DELETE", path, NULL, &r);
	if (rc == 0 && !c->json && !c->quiet)
		printf("app %s unpublished (publish again, or roll back to a "
		       "release, to serve it)\n",
		       a->pos[0]);
	else if (rc == 0 && c->json)
		cli_print_raw(&r);
	cli_resp_release(&r);
	return rc;
}
