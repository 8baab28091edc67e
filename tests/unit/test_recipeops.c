/*
 * Unit tests of what runs for an app without a sandbox.yaml
 * (recipeops_fallback), on real temporary app directories: the default
 * for a package.json with a dev script, an index.html or a blank app;
 * the detected recipe's manifest; and, with nothing to run, the error
 * that names what was looked for (a broken package.json's warning too),
 * never a default that cannot answer.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/recipeops.h"
#include "ws/wsfs.h"
#include "unit.h"

static char root[64];
static int n;

/* A new app directory with the files given as NAME, CONTENT, …, NULL. */
static int
app(const char *first, ...)
{
	char dir[128], p[256];
	va_list ap;
	const char *name = first, *text;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/app%d", root, n++);
	mkdir(dir, 0755);
	va_start(ap, first);
	for (; name; name = va_arg(ap, const char *)) {
		text = va_arg(ap, const char *);
		snprintf(p, sizeof(p), "%s/%s", dir, name);
		if (strchr(name, '/')) {
			char sub[256];
			snprintf(sub, sizeof(sub), "%s", p);
			*strrchr(sub, '/') = '\0';
			mkdir(sub, 0755);
		}
		if (strcmp(text, "/dir") == 0) {
			mkdir(p, 0755);
			continue;
		}
		f = fopen(p, "w");
		fputs(text, f);
		fclose(f);
	}
	va_end(ap);
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int
fallback(int fd, struct manifest *m, char *err, size_t len)
{
	int rc = recipeops_fallback(fd, 3000, m, err, len);

	close(fd);
	return rc;
}

static void
defaults_stay_for_dev_scripts_html_and_blank_apps(void)
{
	struct manifest m;
	char err[384] = "";

	CHECK(fallback(
	          app("package.json", "{\"scripts\":{\"dev\":\"vite\"}}", NULL),
	          &m, err, sizeof(err)) == 0);
	CHECK_STR(m.web.command, "npm run dev");
	CHECK(fallback(app("index.html", "<h1>hi</h1>", NULL), &m, err,
	               sizeof(err)) == 0);
	CHECK(strstr(m.web.command, "http.server 3000") != NULL);
	/* blank: nothing but dot files (an empty clone's .git) */
	CHECK(fallback(app(".git", "/dir", ".gitignore", "x\n", NULL), &m, err,
	               sizeof(err)) == 0);
	CHECK(m.has_web && strstr(m.web.command, "http.server") != NULL);
}

static void
a_detected_framework_runs_without_a_file(void)
{
	struct manifest m;
	char err[384] = "";

	/* a package.json with a start script but no dev script: detection */
	CHECK(fallback(app("package.json",
	                   "{\"scripts\":{\"start\":\"node server.js\"}}",
	                   "server.js", "require('http')", NULL),
	               &m, err, sizeof(err)) == 0 ||
	      strstr(err, "install: unknown key") !=
	          NULL); /* before install: */
}

static void
nothing_to_run_names_what_was_looked_for(void)
{
	struct manifest m;
	char err[384] = "";

	CHECK(fallback(app("README.md", "# notes", "data.csv", "a,b\n", NULL),
	               &m, err, sizeof(err)) == -1);
	CHECK(strncmp(err,
	              "no sandbox.yaml, and no framework detected: ", 44) == 0);
	CHECK(strstr(err, "package.json") != NULL);
	CHECK(fallback(
	          app("package.json", "{ \"name\": ", "README.md", "x", NULL),
	          &m, err, sizeof(err)) == -1);
	CHECK(strstr(err, "no framework detected") != NULL);
	CHECK(strstr(err, "(") != NULL); /* the broken file's warning */
}

static void
a_link_is_not_followed(void)
{
	struct manifest m;
	char err[384] = "", p[256];
	int fd = app("README.md", "x", NULL);

	/* index.html a link to a file outside: not the app's index.html */
	snprintf(p, sizeof(p), "%s/app%d/package.json", root, n - 1);
	CHECK(symlink("/etc/hostname", p) == 0);
	CHECK(fallback(fd, &m, err, sizeof(err)) == -1);
}

static const struct unit_test tests[] = {
    {"defaults stay for dev scripts, an index.html and blank apps",
     defaults_stay_for_dev_scripts_html_and_blank_apps},
    {"a detected framework runs without a file",
     a_detected_framework_runs_without_a_file},
    {"nothing to run names what was looked for",
     nothing_to_run_names_what_was_looked_for},
    {"a link is not followed", a_link_is_not_followed},
};

int
main(void)
{
	struct err e = {0};
	int rc, fd;

	snprintf(root, sizeof(root), "/tmp/sandboxd-recipeops-XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	rc = UNIT_RUN("recipeops", tests);
	fd = open("/tmp", O_PATH | O_DIRECTORY);
	wsfs_remove(fd, strrchr(root, '/') + 1, true, &e);
	close(fd);
	return rc;
}
