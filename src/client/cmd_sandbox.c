/*
 * The sandbox commands: create, show, start, stop, delete, logs,
 * files, cat, put, url.  Creating shows a spinner while the daemon
 * clones and starts the container (on a terminal).  `logs --follow`
 * asks for the tail again every second and prints what came after the
 * last lines it printed (the API has no log stream): lines are matched
 * by their content, so a rotated log starts over from its top.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/calls.h"
#include "client/commands.h"

#define CLI_LOG_MATCH_LINES 20 /* lines compared to find where to go on */
#define CLI_PREVIEW_WAIT_S  90 /* --wait, `new`: for the preview, at most */

int
cli_wait_preview(struct cli *c, const char *sb, char *url, size_t len)
{
	long long until = cli_now_ms() + CLI_PREVIEW_WAIT_S * 1000LL;
	char path[512], st[32] = "";
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/sandboxes/%s", sb) < 0)
		return CLI_EUSAGE;
	for (;;) {
		struct cli_resp r;
		const struct jv *pv;

		rc = cli_call(c, "GET", path, NULL, &r);
		if (rc != 0) {
			cli_resp_release(&r);
			return rc;
		}
		pv = jv_get(r.json, "preview");
		snprintf(url, len, "%s", jv_str(jv_get(pv, "url")) ?: "");
		snprintf(st, sizeof(st), "%s",
		         jv_str(jv_get(pv, "status")) ?: "");
		if (c->json &&
		    (strcmp(st, "starting") != 0 || cli_now_ms() > until))
			cli_print_raw(&r);
		cli_resp_release(&r);
		if (strcmp(st, "starting") != 0 || cli_now_ms() > until)
			break;
		cli_spin_start(c, "waiting for the preview");
		for (int i = 0; i < 5; i++) {
			cli_spin_tick(c);
			usleep(100000);
		}
	}
	cli_spin_stop(c);
	return strcmp(st, "ready") == 0 || strcmp(st, "frozen") == 0 ? 0 : -1;
}

static int wait_then_show(struct cli *c, struct cli_resp *r);

static int
sb_path(char *out, size_t len, const char *fmt, const char *id)
{
	if (cli_pathf(out, len, fmt, id) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return 0;
}

static void
print_sandbox(struct cli *c, const struct jv *sb)
{
	const struct jv *pv = jv_get(sb, "preview");
	const char *st = jv_str(jv_get(sb, "status"));
	const char *ps = jv_str(jv_get(pv, "status"));
	bool frozen = jv_is_true(jv_get(sb, "frozen"));

	printf("sandbox %s%s%s  %s%s%s%s\n", cli_sgr(c, "1"),
	       jv_str(jv_get(sb, "id")), CLI_RESET(c),
	       cli_sgr(c, st && strcmp(st, "running") == 0 ? "32" : "33"),
	       st ? st : "-", frozen ? " (frozen)" : "", CLI_RESET(c));
	if (jv_str(jv_get(pv, "url")))
		printf("preview %s (%s)\n", jv_str(jv_get(pv, "url")),
		       ps ? ps : "-");
	if (jv_str(jv_get(sb, "error_message")))
		printf("error   %s\n", jv_str(jv_get(sb, "error_message")));
	fflush(stdout);
}

static int
show_sb(struct cli *c, struct cli_resp *r)
{
	if (c->json)
		cli_print_raw(r);
	else if (c->quiet)
		printf("%s\n", jv_str(jv_get(r->json, "id")));
	else
		print_sandbox(c, r->json);
	return CLI_OK;
}

/* The app was made from a repository (its "git"); not on --json, -q. */
static bool
imported(struct cli *c, const char *app)
{
	char path[512];
	struct cli_resp r;
	bool yes;

	if (c->json || c->quiet ||
	    cli_pathf(path, sizeof(path), "/v1/apps/%s", app) < 0)
		return false;
	yes = cli_call(c, "GET", path, NULL, &r) == 0 &&
	      jv_get(r.json, "git") != NULL;
	cli_resp_release(&r);
	return yes;
}

int
cmd_sb_create(struct cli *c, const struct cli_args *a)
{
	const char *ports[CLI_MAX_WORDS];
	int n = cli_args_all(a, "port", ports, CLI_MAX_WORDS);
	struct jv *body = jv_obj(), *arr = jv_arr();
	char path[512];
	struct cli_resp r;
	int rc;

	for (int i = 0; i < n; i++) {
		char *end;
		long p = strtol(ports[i], &end, 10);

		if (*end || p < 1 || p > 65535) {
			jv_free(arr);
			jv_free(body);
			return cli_fail(CLI_EUSAGE, "usage",
			                "--port: a number 1-65535, not %s",
			                ports[i]);
		}
		jv_push(arr, jv_new_int(p));
	}
	if (n > 0)
		jv_set(body, "ports", arr);
	else
		jv_free(arr);
	rc = sb_path(path, sizeof(path), "/v1/apps/%s/sandbox", a->pos[0]);
	if (rc == 0) {
		cli_spin_start(c, "creating the sandbox");
		rc = cli_call(c, "POST", path, body, &r);
		if (rc == 0 && cli_args_has(a, "wait"))
			rc = wait_then_show(c, &r);
		else if (rc == 0)
			show_sb(c, &r);
		if (rc == 0 && imported(c, a->pos[0]))
			cli_show_detection(c, a->pos[0]);
		cli_resp_release(&r);
	}
	jv_free(body);
	return rc;
}

/*
 * --wait: the preview polled until ready, then the sandbox shown as it
 * is then (--json: that answer; -q: the id once ready).  Exit 1 when the
 * preview did not become ready.
 */
static int
wait_then_show(struct cli *c, struct cli_resp *r)
{
	char id[64], url[1024], path[512];
	bool json = c->json;
	int rc;

	snprintf(id, sizeof(id), "%s", jv_str(jv_get(r->json, "id")) ?: "");
	c->json = false; /* one answer on stdout, the last */
	rc = cli_wait_preview(c, id, url, sizeof(url));
	c->json = json;
	if (rc > 0)
		return rc;
	cli_pathf(path, sizeof(path), "/v1/sandboxes/%s", id);
	cli_resp_release(r);
	if (cli_call(c, "GET", path, NULL, r) != 0)
		return CLI_EFAIL;
	show_sb(c, r);
	if (rc < 0)
		return cli_fail(CLI_EFAIL, "preview_not_ready",
		                "the preview of %s is not ready: %s", id,
		                jv_str(jv_get(jv_get(r->json, "preview"),
		                              "detail"))
		                    ?: jv_str(jv_get(jv_get(r->json, "preview"),
		                                     "status"))
		                    ?: "?");
	return CLI_OK;
}

/* GET, or POST to a verb, of a sandbox; shows the answer. */
static int
sb_simple(struct cli *c, const char *method, const char *fmt, const char *id,
          const char *label, bool wait)
{
	char path[512];
	struct cli_resp r;
	int rc = sb_path(path, sizeof(path), fmt, id);

	if (rc)
		return rc;
	if (label)
		cli_spin_start(c, label);
	rc = cli_call(c, method, path, NULL, &r);
	if (rc == 0 && wait)
		rc = wait_then_show(c, &r);
	else if (rc == 0)
		show_sb(c, &r);
	cli_resp_release(&r);
	return rc;
}

int
cmd_sb_show(struct cli *c, const struct cli_args *a)
{
	char path[512];
	int rc = sb_path(path, sizeof(path), "/v1/sandboxes/%s", a->pos[0]);

	if (rc)
		return rc;
	return cli_get_show(c, path);
}

int
cmd_sb_start(struct cli *c, const struct cli_args *a)
{
	return sb_simple(c, "POST", "/v1/sandboxes/%s/start", a->pos[0],
	                 "starting", cli_args_has(a, "wait"));
}

int
cmd_sb_stop(struct cli *c, const struct cli_args *a)
{
	return sb_simple(c, "POST", "/v1/sandboxes/%s/stop", a->pos[0],
	                 "stopping", false);
}

int
cmd_sb_delete(struct cli *c, const struct cli_args *a)
{
	char path[512], warn[1024];
	int rc = sb_path(path, sizeof(path), "/v1/sandboxes/%s", a->pos[0]);

	if (rc)
		return rc;
	snprintf(warn, sizeof(warn),
	         "this deletes sandbox %s with its workspace, the only copy "
	         "of the app's files unless you pushed them",
	         a->pos[0]);
	return cli_delete(c, a, path, "sandbox", warn);
}

int
cmd_sb_url(struct cli *c, const struct cli_args *a)
{
	char path[512];
	struct cli_resp r;
	const char *url;
	int rc = sb_path(path, sizeof(path), "/v1/sandboxes/%s", a->pos[0]);

	if (rc)
		return rc;
	rc = cli_call(c, "GET", path, NULL, &r);
	if (rc == 0) {
		url = jv_str(jv_get(jv_get(r.json, "preview"), "url"));
		if (c->json)
			cli_print_raw(&r);
		else if (url)
			printf("%s\n", url);
		else
			rc = cli_fail(CLI_EFAIL, "no_preview",
			              "the sandbox has no preview URL");
	}
	cli_resp_release(&r);
	return rc;
}

/* The lines of new that come after the lines of old already printed. */
static size_t
log_resume_at(const struct jv *old, const struct jv *new)
{
	size_t no = jv_len(old), nn = jv_len(new);

	if (no == 0)
		return 0;
	for (size_t i = nn; i > 0; i--) {
		size_t m = i < no ? i : no, k;

		if (m > CLI_LOG_MATCH_LINES)
			m = CLI_LOG_MATCH_LINES;
		for (k = 0; k < m; k++) {
			const char *x = jv_str(jv_at(new, i - 1 - k));
			const char *y = jv_str(jv_at(old, no - 1 - k));
			if (!x || !y || strcmp(x, y) != 0)
				break;
		}
		if (k == m)
			return i;
	}
	return 0;
}

int
cmd_sb_logs(struct cli *c, const struct cli_args *a)
{
	const char *proc = a->npos > 1 ? a->pos[1] : "web";
	const char *tail = cli_args_get(a, "tail");
	bool follow = cli_args_has(a, "follow");
	struct jv *prev = NULL;
	char path[1024];
	int rc;

	for (;;) {
		struct cli_resp r;
		const struct jv *lines;
		size_t from;

		if (cli_pathf(path, sizeof(path),
		              "/v1/sandboxes/%s/processes/%s/logs?tail=%s",
		              a->pos[0], proc,
		              tail ? tail : (prev ? "1000" : "200")) < 0)
			return cli_fail(CLI_EUSAGE, "usage", "too long");
		rc = cli_call(c, "GET", path, NULL, &r);
		if (rc != 0) {
			cli_resp_release(&r);
			break;
		}
		lines = jv_get(r.json, "lines");
		if (c->json && !follow) {
			cli_print_raw(&r);
		} else {
			from = log_resume_at(prev, lines);
			for (size_t i = from; i < jv_len(lines); i++) {
				const char *l = jv_str(jv_at(lines, i));
				if (c->json) {
					struct buf b;
					buf_init(&b, 0);
					jv_dump(jv_at(lines, i), &b);
					printf("%s\n", b.data ? b.data : "");
					buf_release(&b);
				} else {
					printf("%s\n", l ? l : "");
				}
			}
			fflush(stdout);
		}
		jv_free(prev);
		prev = jv_copy((struct jv *)lines);
		cli_resp_release(&r);
		if (!follow)
			break;
		sleep(1);
	}
	jv_free(prev);
	return rc;
}

int
cmd_sb_files(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "TYPE", .field = "type"},
	    {.head = "SIZE", .field = "size"},
	    {.head = "PATH", .field = "path"},
	};
	char path[2048];
	struct cli_resp r;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/sandboxes/%s/files?path=%s",
	              a->pos[0], a->npos > 1 ? a->pos[1] : "") < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the path is too long");
	if (cli_args_has(a, "recursive"))
		snprintf(path + strlen(path), sizeof(path) - strlen(path),
		         "&recursive=true");
	rc = cli_get_list(c, path, "entries", cols, 3, 2, &r);
	if (rc == 0 && !c->json && jv_is_true(jv_get(r.json, "truncated")))
		fprintf(stderr, "(the list was cut at 10,000 entries)\n");
	cli_resp_release(&r);
	return rc;
}

int
cmd_sb_cat(struct cli *c, const struct cli_args *a)
{
	char path[2048];
	struct cli_resp r;
	int rc;

	if (cli_pathf(path, sizeof(path),
	              "/v1/sandboxes/%s/files/content?path=%s", a->pos[0],
	              a->pos[1]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the path is too long");
	rc = cli_call(c, "GET", path, NULL, &r);
	if (rc == 0 && r.body.len)
		fwrite(r.body.data, 1, r.body.len, stdout);
	cli_resp_release(&r);
	return rc;
}

int
cmd_sb_put(struct cli *c, const struct cli_args *a)
{
	char path[2048];
	struct cli_resp r;
	struct buf in;
	char chunk[65536];
	ssize_t n;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/sandboxes/%s/files?path=%s",
	              a->pos[0], a->pos[1]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the path is too long");
	if (isatty(STDIN_FILENO))
		return cli_fail(CLI_EUSAGE, "usage",
		                "put reads the file from stdin: sandboxd "
		                "sandbox put SB PATH < FILE");
	buf_init(&in, CLI_MAX_UPLOAD_BYTES);
	while ((n = read(STDIN_FILENO, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || buf_append(&in, chunk, (size_t)n) < 0) {
			buf_release(&in);
			return cli_fail(CLI_ETOOLARGE, "payload_too_large",
			                "stdin: unreadable or over %u MiB",
			                CLI_MAX_UPLOAD_BYTES >> 20);
		}
	}
	rc = cli_call_raw(c, "PUT", path, in.data ? in.data : "", in.len, &r);
	buf_release(&in);
	if (rc == 0)
		cli_done(c, &r, "wrote %s (%s bytes)\n", a->pos[1],
		         cli_field(r.json, "size", chunk, 64));
	cli_resp_release(&r);
	return rc;
}
