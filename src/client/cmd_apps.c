/*
 * The app commands: apps, app create|show|delete|visibility|link|unlink|
 * export,
 * and the trash of deleted apps: trash, trash restore|purge.  Deleting asks
 * first (the workspace is the only copy of the files unless pushed) unless
 * --yes; with no terminal to ask on, it refuses without --yes rather
 * than guess.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/calls.h"
#include "client/commands.h"

int
cmd_apps(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "ID", .field = "id"},
	    {.head = "NAME", .field = "name"},
	    {.head = "PRESET", .field = "runtime_preset"},
	    {.head = "SANDBOX", .field = "current_sandbox_id"},
	    {.head = "PREVIEW", .field = "preview_visibility_effective"},
	    {.head = "CREATED", .field = "created_at", .kind = CLI_COL_TIME},
	};
	struct cli_resp r;
	int rc = cli_get_list(c, "/v1/apps", "apps", cols, 6, 0, &r);

	(void)a;
	cli_resp_release(&r);
	return rc;
}

/*
 * app create --git: the sandbox made at once, which clones the
 * repository and detects its framework, and what was detected printed.
 */
static int
import_now(struct cli *c, const char *app)
{
	struct jv *body = jv_obj();
	char path[512];
	struct cli_resp r;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/sandbox", app) < 0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	cli_spin_start(c, "importing the repository");
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0 && !c->json && !c->quiet)
		printf("imported into sandbox %s\n",
		       jv_str(jv_get(r.json, "id")) ?: "?");
	cli_resp_release(&r);
	return rc == 0 ? cli_show_detection(c, app) : rc;
}

int
cmd_app_create(struct cli *c, const struct cli_args *a)
{
	const char *preset = cli_args_get(a, "preset");
	const char *git = cli_args_get(a, "git");
	const char *desc = cli_args_get(a, "description");
	struct jv *body = jv_obj();
	struct cli_resp r;
	int rc;

	if (preset && git) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage",
		                "app create: --preset or --git, not both");
	}
	if (!git &&
	    (cli_args_has(a, "branch") || cli_args_has(a, "credential"))) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage",
		                "app create: --branch and --credential go with "
		                "--git");
	}
	jv_set_str(body, "name", a->pos[0]);
	jv_set_str(body, "runtime_preset", preset);
	jv_set_str(body, "description", desc);
	jv_set_str(body, "preview_visibility", cli_args_get(a, "visibility"));
	if (git) {
		struct jv *g = jv_obj();
		jv_set_str(g, "repo_url", git);
		jv_set_str(g, "branch", cli_args_get(a, "branch"));
		jv_set_str(g, "credential_id", cli_args_get(a, "credential"));
		jv_set(body, "git", g);
	}
	rc = cli_call(c, "POST", "/v1/apps", body, &r);
	jv_free(body);
	if (rc == 0)
		cli_show_answer(c, &r, "created app");
	if (rc == 0 && git && !cli_args_has(a, "no-import"))
		rc = import_now(c, jv_str(jv_get(r.json, "id")) ?: a->pos[0]);
	cli_resp_release(&r);
	return rc;
}

int
cmd_app_show(struct cli *c, const struct cli_args *a)
{
	char path[512];

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return cli_get_show(c, path);
}

/* The app's name as the server's export names it: [a-z0-9-], or "app". */
static void
export_name(const char *name, char *out, size_t len)
{
	size_t n = 0;
	bool dash = false;

	for (const char *p = name ? name : ""; *p && n + 6 < len && n < 64;
	     p++) {
		unsigned char ch = (unsigned char)*p;
		if (!isalnum(ch) || ch >= 0x80) {
			dash = true;
			continue;
		}
		if (dash && n > 0)
			out[n++] = '-';
		out[n++] = (char)tolower(ch);
		dash = false;
	}
	snprintf(out + n, len - n, "%s.zip", n ? "" : "app");
}

struct export_out {
	FILE *f;
	int err;
	long long bytes;
};

static size_t
export_bytes(const char *p, size_t n, void *arg)
{
	struct export_out *o = arg;

	if (fwrite(p, 1, n, o->f) != n) {
		o->err = errno;
		return 0;
	}
	o->bytes += (long long)n;
	return n;
}

/* Streams the export at path into o->f; 0, or the exit status. */
static int
export_fetch(struct cli *c, const char *path, struct export_out *o)
{
	static const atomic_bool never = false;
	char why[256];
	bool broke;
	int rc = cli_stream(c, path, NULL, export_bytes, o, &never, &broke, why,
	                    sizeof(why));

	if (rc < 0)
		return cli_fail(CLI_EUNREACHABLE, "unreachable", "%s", why);
	if (rc > 0)
		return rc;
	if (o->err)
		return cli_fail(CLI_EFAIL, "write_failed", "cannot write: %s",
		                strerror(o->err));
	if (broke || fflush(o->f) != 0)
		return cli_fail(CLI_EFAIL, "export_broken",
		                "the export ended unfinished (%s): the server "
		                "could not read a file, see its log",
		                broke ? why : strerror(errno));
	return 0;
}

int
cmd_app_export(struct cli *c, const struct cli_args *a)
{
	const char *to = cli_args_get(a, "output");
	char path[512], app[512], file[256], part[300];
	struct export_out o = {0};
	struct cli_resp r;
	int rc;

	if (cli_pathf(app, sizeof(app), "/v1/apps/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	snprintf(path, sizeof(path), "%s/export%s", app,
	         cli_args_has(a, "git") ? "?git=true" : "");
	if (to && strcmp(to, "-") == 0) {
		o.f = stdout;
		return export_fetch(c, path, &o);
	}
	if (to == NULL) {
		if ((rc = cli_call(c, "GET", app, NULL, &r)) != 0) {
			cli_resp_release(&r);
			return rc;
		}
		export_name(jv_str(jv_get(r.json, "name")), file, sizeof(file));
		cli_resp_release(&r);
		to = file;
	}
	snprintf(part, sizeof(part), "%s.part", to);
	if ((o.f = fopen(part, "wbx")) == NULL)
		return cli_fail(CLI_EFAIL, "write_failed",
		                "cannot create %s: %s", part, strerror(errno));
	rc = export_fetch(c, path, &o);
	if (fclose(o.f) != 0 && rc == 0)
		rc = cli_fail(CLI_EFAIL, "write_failed", "cannot write %s",
		              part);
	if (rc == 0 && rename(part, to) < 0)
		rc = cli_fail(CLI_EFAIL, "write_failed",
		              "cannot rename to %s: %s", to, strerror(errno));
	if (rc != 0) {
		unlink(part);
		return rc;
	}
	if (c->quiet)
		printf("%s\n", to);
	else
		printf("exported app %s to %s (%lld bytes)\n", a->pos[0], to,
		       o.bytes);
	return 0;
}

int
cmd_app_delete(struct cli *c, const struct cli_args *a)
{
	char path[512], warn[1536], q[640];
	struct cli_resp r;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	snprintf(warn, sizeof(warn),
	         "this deletes app %s and its sandbox; the workspace goes "
	         "to the trash, restorable until the retention ends "
	         "(sandboxd trash), unless the daemon keeps no trash: then "
	         "it is gone at once, and it is the only copy of the app's "
	         "files unless you pushed them (sandboxd git push %s)",
	         a->pos[0], a->pos[0]);
	if (!cli_args_has(a, "yes")) {
		fprintf(stderr, "warning: %s\n", warn);
		snprintf(q, sizeof(q), "Delete app %s?", a->pos[0]);
		if (!cli_confirm(q))
			return cli_fail(CLI_EUSAGE, "not_confirmed",
			                "not deleted (pass --yes to delete "
			                "without asking)");
	}
	rc = cli_call(c, "DELETE", path, NULL, &r);
	if (rc == 0 && c->json)
		printf("{\"deleted\":\"%s\",\"trash_id\":%s%s%s}\n", a->pos[0],
		       r.trash_id[0] ? "\"" : "",
		       r.trash_id[0] ? r.trash_id : "null",
		       r.trash_id[0] ? "\"" : "");
	else if (rc == 0 && c->quiet && r.trash_id[0])
		printf("%s\n", r.trash_id);
	else if (rc == 0 && !c->quiet && r.trash_id[0])
		printf("deleted app %s; it is in the trash as %s\n"
		       "undo with: sandboxd trash restore %s\n",
		       a->pos[0], r.trash_id, r.trash_id);
	else if (rc == 0 && !c->quiet)
		printf("deleted app %s (no trash: gone for good)\n", a->pos[0]);
	cli_resp_release(&r);
	return rc;
}

int
cmd_trash(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "ID", .field = "id"},
	    {.head = "NAME", .field = "name"},
	    {.head = "APP", .field = "app_id"},
	    {.head = "BYTES", .field = "bytes"},
	    {.head = "DELETED", .field = "deleted_at", .kind = CLI_COL_TIME},
	    {.head = "PURGED AT", .field = "purge_at", .kind = CLI_COL_TIME},
	};
	struct cli_resp r;
	int rc = cli_get_list(c, "/v1/trash", "trash", cols, 6, 0, &r);

	(void)a;
	cli_resp_release(&r);
	return rc;
}

int
cmd_trash_restore(struct cli *c, const struct cli_args *a)
{
	const char *name = cli_args_get(a, "name");
	const struct jv *app, *sb;
	struct jv *body = jv_obj();
	struct cli_resp r;
	char path[512], tmp[64];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/trash/%s/restore", a->pos[0]) <
	    0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	jv_set_str(body, "name", name);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0) {
		app = jv_get(r.json, "app");
		sb = jv_get(r.json, "sandbox");
		cli_done(
		    c, &r, "restored app %s (%s)%s%s\n",
		    cli_field(app, "id", tmp, sizeof(tmp)),
		    jv_str(jv_get(app, "name")) ? jv_str(jv_get(app, "name"))
		                                : "",
		    jv_type(sb) == JV_OBJECT ? ", sandbox " : "",
		    jv_type(sb) == JV_OBJECT ? jv_str(jv_get(sb, "id")) : "");
		if (!c->json && jv_get(r.json, "start_error"))
			fprintf(stderr,
			        "warning: the sandbox did not start: %s\n",
			        jv_str(jv_get(jv_get(r.json, "start_error"),
			                      "message")));
	}
	cli_resp_release(&r);
	return rc;
}

int
cmd_trash_purge(struct cli *c, const struct cli_args *a)
{
	char path[512];

	if (cli_pathf(path, sizeof(path), "/v1/trash/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	return cli_delete(c, a, path, "trash entry",
	                  "this removes the app, its workspace and its task "
	                  "history for good");
}

/* app visibility APP public|private|default: PATCH preview_visibility. */
int
cmd_app_visibility(struct cli *c, const struct cli_args *a)
{
	const char *v = a->pos[1];
	struct jv *body;
	struct cli_resp r;
	char path[512];
	int rc;

	if (strcmp(v, "public") && strcmp(v, "private") && strcmp(v, "default"))
		return cli_fail(CLI_EUSAGE, "usage",
		                "app visibility: public, private or default");
	if (cli_pathf(path, sizeof(path), "/v1/apps/%s", a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	body = jv_obj();
	if (strcmp(v, "default") == 0)
		jv_set(body, "preview_visibility", jv_new_null());
	else
		jv_set_str(body, "preview_visibility", v);
	rc = cli_call(c, "PATCH", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(c, &r,
		         "app %s: preview %s%s (links and cookies given "
		         "before are revoked)",
		         a->pos[0],
		         jv_str(jv_get(r.json, "preview_visibility_effective")),
		         strcmp(v, "default") == 0 ? " (the server's default)"
		                                   : "");
	cli_resp_release(&r);
	return rc;
}

/* app link APP [--ttl S] [--path P]: a one-time preview link, its URL. */
int
cmd_app_link(struct cli *c, const struct cli_args *a)
{
	const char *ttl = cli_args_get(a, "ttl"), *p = cli_args_get(a, "path");
	struct jv *body = jv_obj();
	struct cli_resp r;
	char path[512], *end = NULL;
	long long n = 0;
	int rc;

	if (ttl && ((n = strtoll(ttl, &end, 10)) <= 0 || *end != '\0')) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage",
		                "app link: --ttl takes seconds");
	}
	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/preview-link",
	              a->pos[0]) < 0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	if (ttl)
		jv_set_int(body, "ttl_seconds", n);
	jv_set_str(body, "path", p);
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0 && c->json)
		cli_print_raw(&r);
	else if (rc == 0 && c->quiet)
		printf("%s\n", jv_str(jv_get(r.json, "url")));
	else if (rc == 0)
		printf("%s\n(opens once, in one browser, until %s; the preview "
		       "is %s)\n",
		       jv_str(jv_get(r.json, "url")),
		       jv_str(jv_get(r.json, "expires_at")),
		       jv_str(jv_get(r.json, "visibility")));
	cli_resp_release(&r);
	return rc;
}

/* app unlink APP: every link and preview cookie of the app ends. */
int
cmd_app_unlink(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r;
	char path[512];
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s/preview-links",
	              a->pos[0]) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	rc = cli_call(c, "DELETE", path, NULL, &r);
	if (rc == 0)
		cli_done(c, &r, "app %s: every preview link and cookie revoked",
		         a->pos[0]);
	cli_resp_release(&r);
	return rc;
}
