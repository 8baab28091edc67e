/*
 * The task commands (run, list, show, cancel, revert, follow) and
 * `new`, the quickstart in one command: app, sandbox, task, its events
 * live, then the preview URL once the preview answers.  With --json
 * every API answer (and every event's data) is printed as one line, in
 * the order they came; with -q the ids alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/calls.h"
#include "client/commands.h"
#include "client/follow.h"
#include "lib/utf8.h"

#define CLI_NAME_BYTES  40         /* an app name made from the prompt */
#define CLI_IMAGES_MAX  4          /* --image given at most (the server's) */
#define CLI_IMAGE_BYTES (5u << 20) /* one image (the server's limit) */

/* Standard base64 of n bytes into a new string (NULL: no memory). */
static char *
base64(const unsigned char *p, size_t n)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; out && i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 |
		             (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		*o++ = abc[v >> 18 & 63];
		*o++ = abc[v >> 12 & 63];
		*o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? abc[v & 63] : '=';
	}
	if (out)
		*o = '\0';
	return out;
}

/* {"name","data"} of the image file at path; -1 (error printed). */
static int
image_add(struct jv *arr, const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(CLI_IMAGE_BYTES + 1);
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = 0;
	char *b64 = NULL;
	int rc = -1;

	if (f == NULL || buf == NULL) {
		cli_fail(CLI_EUSAGE, "usage", "--image %s: %s", path,
		         f ? "out of memory" : strerror(errno));
		goto out;
	}
	n = fread(buf, 1, CLI_IMAGE_BYTES + 1, f);
	if (ferror(f) || n > CLI_IMAGE_BYTES) {
		cli_fail(n > CLI_IMAGE_BYTES ? CLI_ETOOLARGE : CLI_EUSAGE,
		         "usage", "--image %s: %s", path,
		         n > CLI_IMAGE_BYTES ? "larger than 5 MiB"
		                             : "cannot read it");
		goto out;
	}
	if ((b64 = base64(buf, n)) != NULL) {
		struct jv *o = jv_obj();
		jv_set_str(o, "name", name);
		jv_set_str(o, "data", b64);
		jv_push(arr, o);
		rc = 0;
	}
out:
	if (f)
		fclose(f);
	free(buf);
	free(b64);
	return rc;
}

/* --image FILE (repeated) as the body's images; -1 (error printed). */
static int
images_add(struct jv *b, const struct cli_args *a, int *rc)
{
	const char *files[CLI_IMAGES_MAX + 1];
	int n = cli_args_all(a, "image", files, CLI_IMAGES_MAX + 1);
	struct jv *arr;

	if (n <= 0)
		return 0;
	if (n > CLI_IMAGES_MAX) {
		*rc = cli_fail(CLI_EUSAGE, "usage", "at most %d --image",
		               CLI_IMAGES_MAX);
		return -1;
	}
	arr = jv_arr();
	jv_set(b, "images", arr);
	for (int i = 0; i < n; i++)
		if (image_add(arr, files[i]) < 0) {
			*rc = CLI_EUSAGE;
			return -1;
		}
	return 0;
}

static int
task_path(char *out, size_t len, const char *fmt, const char *sb,
          const char *task)
{
	if (cli_pathf(out, len, fmt, sb, task) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return 0;
}

/* The task body from the options; NULL (error printed) on a bad one. */
static struct jv *
task_body(const char *prompt, const struct cli_args *a, int *rc)
{
	struct jv *b = jv_obj();
	const char *to = cli_args_get(a, "timeout");

	jv_set_str(b, "prompt", prompt);
	jv_set_str(b, "agent", cli_args_get(a, "agent"));
	jv_set_str(b, "model", cli_args_get(a, "model"));
	if (to) {
		char *end;
		long s = strtol(to, &end, 10);
		if (*end || s < 0) {
			jv_free(b);
			*rc = cli_fail(CLI_EUSAGE, "usage",
			               "--timeout: seconds, not %s", to);
			return NULL;
		}
		jv_set_int(b, "timeout_s", s);
	}
	if (cli_args_has(a, "continue"))
		jv_set_bool(b, "continue", true);
	if (cli_args_has(a, "no-continue"))
		jv_set_bool(b, "continue", false);
	if (images_add(b, a, rc) < 0) {
		jv_free(b);
		return NULL;
	}
	return b;
}

/*
 * POST body to path; the answer's id into id.  --json prints the answer,
 * -q the id when quiet_ok; the human line is the caller's.
 */
static int
post_for_id(struct cli *c, const char *path, const struct jv *body, char *id,
            size_t len, bool quiet_ok)
{
	struct cli_resp r;
	int rc = cli_call(c, "POST", path, body, &r);

	if (rc == 0) {
		snprintf(id, len, "%s", jv_str(jv_get(r.json, "id")) ?: "");
		if (c->json)
			cli_print_raw(&r);
		else if (c->quiet && quiet_ok)
			printf("%s\n", id);
	}
	cli_resp_release(&r);
	return rc;
}

/* POST the task; its id into id.  The answer is shown per mode. */
static int
submit(struct cli *c, const char *sb, struct jv *body, char *id, size_t len,
       bool quiet_ok)
{
	char path[512];
	int rc =
	    task_path(path, sizeof(path), "/v1/sandboxes/%s/tasks", sb, NULL);

	if (rc)
		return rc;
	return post_for_id(c, path, body, id, len, quiet_ok);
}

int
cmd_task_run(struct cli *c, const struct cli_args *a)
{
	char id[64];
	int rc = 0;
	struct jv *body = task_body(a->pos[1], a, &rc);

	if (body == NULL)
		return rc;
	rc = submit(c, a->pos[0], body, id, sizeof(id), true);
	jv_free(body);
	if (rc != 0)
		return rc;
	if (cli_args_has(a, "follow")) {
		/* The id first: what to follow again, cancel or show. */
		if (!c->json && !c->quiet)
			printf("task %s\n", id);
		fflush(stdout);
		return cli_follow(c, a->pos[0], id, -1, NULL);
	}
	if (!c->json && !c->quiet)
		printf("task %s running; follow it with: sandboxd task follow "
		       "%s %s\n",
		       id, a->pos[0], id);
	return CLI_OK;
}

int
cmd_task_follow(struct cli *c, const struct cli_args *a)
{
	const char *since = cli_args_get(a, "since");
	long n = -1;

	if (since) {
		char *end;
		n = strtol(since, &end, 10);
		if (*end || n < 0)
			return cli_fail(CLI_EUSAGE, "usage",
			                "--since: an event id, not %s", since);
	}
	return cli_follow(c, a->pos[0], a->pos[1], n, NULL);
}

int
cmd_task_list(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "ID", .field = "id"},
	    {.head = "STATUS", .field = "status"},
	    {.head = "AGENT", .field = "agent"},
	    {.head = "CREATED", .field = "created_at", .kind = CLI_COL_TIME},
	    {.head = "PROMPT", .field = "prompt", .kind = CLI_COL_LINE},
	};
	char path[512];
	struct cli_resp r;
	int rc = task_path(path, sizeof(path), "/v1/sandboxes/%s/tasks",
	                   a->pos[0], NULL);

	if (rc)
		return rc;
	rc = cli_get_list(c, path, "tasks", cols, 5, 0, &r);
	cli_resp_release(&r);
	return rc;
}

int
cmd_task_show(struct cli *c, const struct cli_args *a)
{
	char path[512];
	int rc = task_path(path, sizeof(path), "/v1/sandboxes/%s/tasks/%s",
	                   a->pos[0], a->pos[1]);

	if (rc)
		return rc;
	return cli_get_show(c, path);
}

static int
task_verb(struct cli *c, const struct cli_args *a, const char *fmt,
          const char *label)
{
	char path[512], tmp[64];
	struct cli_resp r;
	int rc = task_path(path, sizeof(path), fmt, a->pos[0], a->pos[1]);

	if (rc)
		return rc;
	cli_spin_start(c, label);
	rc = cli_call(c, "POST", path, NULL, &r);
	if (rc == 0) {
		if (c->json)
			cli_print_raw(&r);
		else if (c->quiet)
			printf("%s\n", a->pos[1]);
		else
			printf("task %s: %s\n", a->pos[1],
			       cli_field(r.json, "status", tmp, sizeof(tmp)));
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_task_cancel(struct cli *c, const struct cli_args *a)
{
	return task_verb(c, a, "/v1/sandboxes/%s/tasks/%s/cancel",
	                 "cancelling");
}

int
cmd_task_revert(struct cli *c, const struct cli_args *a)
{
	return task_verb(c, a, "/v1/sandboxes/%s/tasks/%s/revert",
	                 "reverting the files");
}

/* --- new ------------------------------------------------------------------ */

int
cmd_new(struct cli *c, const struct cli_args *a)
{
	const char *name = cli_args_get(a, "name");
	char gen[64], app[64] = "", sb[64] = "", task[64] = "", path[512],
	              url[1024];
	struct jv *body = jv_obj(), *tb;
	int rc, trc;

	if (name == NULL) {
		/* "Add a todo list …" -> "add-a-todo-list" */
		utf8_slug(a->pos[0], CLI_NAME_BYTES, gen, sizeof(gen));
		name = gen;
	}
	jv_set_str(body, "name", name);
	jv_set_str(body, "runtime_preset",
	           cli_args_get(a, "preset") ?: "react-vite");
	rc = post_for_id(c, "/v1/apps", body, app, sizeof(app), true);
	jv_free(body);
	if (rc != 0)
		return rc;
	if (!c->json && !c->quiet)
		printf("app %s%s%s (%s)\n", cli_sgr(c, "1"), name, CLI_RESET(c),
		       app);

	cli_pathf(path, sizeof(path), "/v1/apps/%s/sandbox", app);
	cli_spin_start(c, "creating the sandbox");
	rc = post_for_id(c, path, NULL, sb, sizeof(sb), true);
	if (rc != 0)
		return rc;
	if (!c->json && !c->quiet)
		printf("sandbox %s running\n", sb);

	tb = task_body(a->pos[0], a, &rc);
	if (tb == NULL)
		return rc;
	rc = submit(c, sb, tb, task, sizeof(task), true);
	jv_free(tb);
	if (rc != 0)
		return rc;
	if (!c->json && !c->quiet)
		printf("task %s\n", task);
	fflush(stdout);
	/* With -q the events are not printed (follow.c); the exit status
	 * is still the task's. */
	trc = cli_follow(c, sb, task, -1, NULL);
	if (c->quiet)
		return trc;
	if (trc == CLI_INTERRUPTED || trc == CLI_ESTREAM ||
	    trc == CLI_EUNREACHABLE)
		return trc;
	if (cli_wait_preview(c, sb, url, sizeof(url)) == 0) {
		if (!c->json)
			printf("%spreview: %s%s\n", cli_sgr(c, "1"), url,
			       CLI_RESET(c));
	} else if (!c->json) {
		printf("preview (not ready yet): %s\n", url);
	}
	return trc;
}
