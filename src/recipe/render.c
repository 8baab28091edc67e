/*
 * The sandbox.yaml sandboxd writes for a detection: a comment header
 * that says so (RECIPE_MANIFEST_MARK, then why), then version, install,
 * web or workers, build.  Commands are the recipe's with the package
 * manager's words and the detection's names put in for the
 * placeholders ({install} {run} {exec} {script} {main} {pyfile}
 * {module} {pyreqs}), prefixed by "cd DIR && " for an app in a
 * sub-directory; detection took those names only when made of safe
 * characters.  Every value is written as a YAML double-quoted scalar
 * with escapes, so a ":" or "#" or quote in a command stays in it.
 */
#include <stdio.h>
#include <string.h>

#include "recipe/internal.h"

#define INSTALL_TIMEOUT_S 900
#define BUILD_TIMEOUT_S   120

struct words {
	const char *install, *run, *exec;
};

static void
words_of(const struct detection *d, const struct recipe *r, struct words *w)
{
	const struct recipe_pm *pm = d->pm[0] ? recipe_pm_find(d->pm) : NULL;
	bool py = strcmp(r->language, "python") == 0;

	w->install = pm ? pm->install : NULL;
	w->run = pm ? pm->run : py ? "python3" : "npm run";
	w->exec = pm ? pm->exec : py ? "python3 -m" : "npx --no --";
}

static int
expand(const char *t, const struct detection *d, const struct words *w,
       struct buf *out)
{
	const struct {
		const char *key, *val;
	} subst[] = {
	    {"{install}", w->install ? w->install : "true"},
	    {"{run}", w->run},
	    {"{exec}", w->exec},
	    {"{script}", d->script},
	    {"{main}", d->entry[0] ? d->entry : "index.js"},
	    {"{pyfile}", d->pyfile[0] ? d->pyfile : "main.py"},
	    {"{module}", d->pymodule[0] ? d->pymodule : "main"},
	    {"{pyreqs}", d->pyreqs[0] ? d->pyreqs : "."},
	};
	int rc = 0;

	/* "{run} {script}" with neither a dev nor a start script */
	if (strstr(t, "{script}") && d->script[0] == '\0')
		t = "node {main}";
	while (*t && rc == 0) {
		size_t i, n = sizeof(subst) / sizeof(subst[0]);

		for (i = 0; *t == '{' && i < n; i++)
			if (strncmp(t, subst[i].key, strlen(subst[i].key)) == 0)
				break;
		if (*t == '{' && i < n) {
			/* an install command names {pyreqs} itself */
			rc = i == 0 ? expand(subst[0].val, d, w, out)
			            : buf_append(out, subst[i].val,
			                         strlen(subst[i].val));
			t += strlen(subst[i].key);
		} else {
			rc = buf_append(out, t++, 1);
		}
	}
	return rc;
}

/* A YAML double-quoted scalar. */
static int
quoted(struct buf *out, const char *s)
{
	int rc = buf_append(out, "\"", 1);

	for (; *s && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			rc = buf_appendf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			rc = buf_appendf(out, "\\x%02x", c);
		else
			rc = buf_append(out, s, 1);
	}
	return rc | buf_append(out, "\"", 1);
}

/* A command in dir, as a quoted scalar, after "key: ". */
static int
command(struct buf *out, const char *key, const char *dir, const char *t,
        const struct detection *d, const struct words *w)
{
	struct buf cmd;
	int rc;

	buf_init(&cmd, 16384);
	rc = dir[0] ? buf_appendf(&cmd, "cd %s && ", dir) : 0;
	rc |= expand(t, d, w, &cmd);
	rc |= buf_appendf(out, "%s", key);
	rc |= quoted(out, rc == 0 ? cmd.data : "");
	rc |= buf_append(out, "\n", 1);
	buf_release(&cmd);
	return rc;
}

/* A comment's text: one line, printable. */
static int
comment(struct buf *out, const char *s)
{
	int rc = 0;

	for (; *s && rc == 0; s++)
		rc = buf_append(
		    out, (unsigned char)*s < 0x20 || *s == 0x7f ? "?" : s, 1);
	return rc;
}

static int
header(struct buf *out, const struct detection *d, const struct recipe *r)
{
	int rc = buf_appendf(out, "%s: ", RECIPE_MANIFEST_MARK);

	if (d->nreasons == 0)
		rc |= buf_appendf(out, "the %s recipe", r->display_name);
	else
		rc |= buf_appendf(out, "detected %s", r->display_name);
	if (d->dir[0]) {
		rc |= buf_appendf(out, " in ");
		rc |= comment(out, d->dir);
	}
	if (d->nreasons > 0) {
		rc |= buf_appendf(out, " (");
		rc |= comment(out, d->reasons[0]);
		rc |= buf_appendf(out, ")");
	}
	rc |= buf_appendf(out, ".\n# Edit it freely; sandboxd rewrites it only "
	                       "when asked to detect again and the file still "
	                       "starts with this line.\nversion: 1\n");
	return rc;
}

static int
install(struct buf *out, const struct detection *d, const struct words *w)
{
	int rc;

	if (w->install == NULL)
		return 0;
	rc = buf_appendf(out, "install:\n");
	rc |= command(out, "  command: ", d->install_dir, "{install}", d, w);
	if (d->ninputs > 0)
		rc |= buf_appendf(out, "  inputs:\n");
	for (int i = 0; i < d->ninputs; i++) {
		rc |= buf_appendf(out, "    - ");
		rc |= quoted(out, d->inputs[i]);
		rc |= buf_append(out, "\n", 1);
	}
	return rc |
	       buf_appendf(out, "  timeout_seconds: %d\n", INSTALL_TIMEOUT_S);
}

static int
procs(struct buf *out, const struct detection *d, const struct recipe *r,
      const struct words *w, int port)
{
	int rc = 0;

	if (r->dev != NULL) {
		rc |= buf_appendf(out, "web:\n");
		rc |= command(out, "  command: ", d->dir, r->dev, d, w);
		rc |= buf_appendf(out, "  port: %d\n  health_path: ",
		                  port > 0 ? port : r->port);
		rc |= quoted(out, r->health_path);
		rc |= buf_appendf(out, "\n  restart_after_task: %s\n",
		                  r->restart_after_task ? "true" : "false");
	}
	if (r->nworkers > 0)
		rc |= buf_appendf(out, "workers:\n");
	for (int i = 0; i < r->nworkers; i++) {
		rc |= buf_appendf(out, "  - name: ");
		rc |= quoted(out, r->workers[i].name);
		rc |= command(out, "\n    command: ", d->dir,
		              r->workers[i].command, d, w);
		rc |= buf_appendf(out, "    restart_after_task: %s\n",
		                  r->restart_after_task ? "true" : "false");
	}
	if (r->build != NULL) {
		rc |= buf_appendf(out, "build:\n");
		rc |= command(out, "  command: ", d->dir, r->build, d, w);
		rc |= buf_appendf(out, "  timeout_seconds: %d\n",
		                  BUILD_TIMEOUT_S);
	}
	return rc;
}

int
recipe_manifest(const struct detection *d, int port, struct buf *out, char *err,
                size_t errlen)
{
	const struct recipe *r = d->recipe[0] ? recipe_find(d->recipe) : NULL;
	struct words w;

	if (r == NULL) {
		snprintf(err, errlen, "%s",
		         d->recipe[0] ? "no such recipe"
		                      : "no framework was detected");
		return -1;
	}
	words_of(d, r, &w);
	if (header(out, d, r) < 0 || install(out, d, &w) < 0 ||
	    procs(out, d, r, &w, port) < 0) {
		snprintf(err, errlen, "the manifest is too large");
		return -1;
	}
	return 0;
}

/* A command in dir, rendered into out (len bytes); -1 when too long. */
static int
render_into(char *out, size_t len, const char *dir, const char *t,
            const struct detection *d, const struct words *w)
{
	struct buf cmd;
	int rc;

	buf_init(&cmd, len);
	rc = dir[0] ? buf_appendf(&cmd, "cd %s && ", dir) : 0;
	rc |= expand(t, d, w, &cmd);
	if (rc == 0 && cmd.len < len)
		snprintf(out, len, "%s", cmd.data ? cmd.data : "");
	else
		rc = -1;
	buf_release(&cmd);
	return rc;
}

int
recipe_publish(const struct detection *d, struct recipe_publish *out)
{
	const struct recipe *r = d->recipe[0] ? recipe_find(d->recipe) : NULL;
	struct words w;

	memset(out, 0, sizeof(*out));
	if (r == NULL)
		return -1;
	if (!r->has_publish)
		return 1;
	words_of(d, r, &w);
	if (r->pub_build && render_into(out->build, sizeof(out->build), d->dir,
	                                r->pub_build, d, &w) < 0)
		return -1;
	if (r->pub_command && render_into(out->command, sizeof(out->command),
	                                  d->dir, r->pub_command, d, &w) < 0)
		return -1;
	if (r->pub_output && d->dir[0] && strcmp(r->pub_output, ".") != 0)
		snprintf(out->output, sizeof(out->output), "%s/%s", d->dir,
		         r->pub_output);
	else if (r->pub_output)
		snprintf(out->output, sizeof(out->output), "%s",
		         d->dir[0] ? d->dir : r->pub_output);
	out->spa = r->pub_spa;
	out->port = r->pub_port;
	snprintf(out->health_path, sizeof(out->health_path), "%s",
	         r->health_path);
	return 0;
}
