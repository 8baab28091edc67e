/*
 * The recipes (src/recipe/): the compiled-in table loads and is sound,
 * every recipe renders a sandbox.yaml the manifest parser takes (its
 * install section too), and
 * detection picks the right framework, package manager and directory on
 * small app trees (tests/unit/fixtures/recipe/<name>/), says what it
 * looked for when nothing matched, and turns a broken package.json, a
 * FIFO or a symbolic link into a warning without hanging.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recipe/internal.h"
#include "sandbox/manifest.h"
#include "unit.h"

#define FIXTURES "tests/unit/fixtures/recipe/"

static int
detect_dir(const char *path, struct detection *d)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = recipe_detect(fd, d);
	close(fd);
	return rc;
}

static struct detection *
fixture(const char *name)
{
	static struct detection d;
	char path[256];

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	memset(&d, 0, sizeof(d));
	if (detect_dir(path, &d) < 0)
		fprintf(stderr, "  cannot detect %s\n", path);
	return &d;
}

static bool
has_warning(const struct detection *d, const char *needle)
{
	for (int i = 0; i < d->nwarnings; i++)
		if (strstr(d->warnings[i], needle) != NULL)
			return true;
	fprintf(stderr, "  no warning with \"%s\" in:\n", needle);
	for (int i = 0; i < d->nwarnings; i++)
		fprintf(stderr, "    %s\n", d->warnings[i]);
	return false;
}

static bool
has_reason(const struct detection *d, const char *needle)
{
	for (int i = 0; i < d->nreasons; i++)
		if (strstr(d->reasons[i], needle) != NULL)
			return true;
	return false;
}

static bool
has_input(const struct detection *d, const char *path)
{
	for (int i = 0; i < d->ninputs; i++)
		if (strcmp(d->inputs[i], path) == 0)
			return true;
	return false;
}

/* The manifest of d, "" when it does not render. */
static const char *
manifest_of(const struct detection *d)
{
	static struct buf out;
	char err[128];

	buf_release(&out);
	buf_init(&out, 1u << 16);
	if (recipe_manifest(d, 3000, &out, err, sizeof(err)) < 0) {
		fprintf(stderr, "  manifest: %s\n", err);
		return "";
	}
	return out.data;
}

static int
parse(const char *text, struct manifest *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	return manifest_parse(text, strlen(text), m, err, errlen);
}

static void
table_loads(void)
{
	char err[256] = "";

	CHECK(recipe_load(err, sizeof(err)) == 0);
	if (err[0])
		fprintf(stderr, "  %s\n", err);
	CHECK(recipe_count() >= 40);
	for (size_t i = 0; i < recipe_count(); i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(recipe_id(recipe_at(i)),
			             recipe_id(recipe_at(j))) != 0);
	/* the reference's frameworks, and ours */
	static const char *const ids[] = {
	    "angular",    "astro",        "bun-elysia",   "chainlit",
	    "dash",       "fasthtml",     "flask",        "gradio",
	    "nicegui",    "sanic",        "streamlit",    "python-asgi",
	    "jupyter",    "django",       "docusaurus",   "eleventy",
	    "gatsby",     "hono",         "nestjs",       "nextjs",
	    "nuxt",       "qwik",         "react-router", "react-vite",
	    "remix-vite", "slidev",       "solidstart",   "static",
	    "storybook",  "strapi",       "sveltekit",    "tanstack-start",
	    "vite-vue",   "node-express", "fastapi",      "vite-svelte",
	    "vite",       "worker",       "node",         "python"};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (recipe_find(ids[i]) == NULL) {
			fprintf(stderr, "  no recipe %s\n", ids[i]);
			unit_failed = 1;
		}
	CHECK_STR(recipe_display_name(recipe_find("nextjs")), "Next.js");
	CHECK(recipe_find("no-such") == NULL);
}

/* docs/recipes.md lists every recipe. */
static void
docs_list_every_recipe(void)
{
	FILE *fp = fopen("docs/recipes.md", "r");
	static char text[1 << 17];
	size_t n;

	CHECK(fp != NULL);
	if (fp == NULL)
		return;
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	for (size_t i = 0; i < recipe_count(); i++) {
		char row[64];

		snprintf(row, sizeof(row), "\n| `%s` |",
		         recipe_id(recipe_at(i)));
		if (strstr(text, row) == NULL) {
			fprintf(stderr, "  docs/recipes.md: no row for %s\n",
			        recipe_id(recipe_at(i)));
			unit_failed = 1;
		}
	}
}

static void
bad_tables_refused(void)
{
	static const char *const bad[][2] = {
	    {"[]", "must be an object"},
	    {"{\"package_managers\":[{\"id\":\"npm\",\"language\":\"node\","
	     "\"install\":\"i\",\"run\":\"r\",\"exec\":\"e\"}],"
	     "\"recipes\":[{\"id\":\"a\",\"display_name\":\"A\","
	     "\"language\":\"node\",\"priority\":1,\"port\":3000,"
	     "\"health_path\":\"/\",\"detect\":{\"deps\":[\"x\"]},"
	     "\"commands\":{\"dev\":\"{nope} dev\"}}]}",
	     "a: commands.dev: names an unknown placeholder"},
	    {"{\"package_managers\":[{\"id\":\"npm\",\"language\":\"node\","
	     "\"install\":\"i\",\"run\":\"r\",\"exec\":\"e\"}],"
	     "\"recipes\":[{\"id\":\"a\",\"display_name\":\"A\","
	     "\"language\":\"cobol\",\"priority\":1,\"port\":3000,"
	     "\"health_path\":\"/\",\"detect\":{\"deps\":[\"x\"]},"
	     "\"commands\":{\"dev\":\"d\"}}]}",
	     "a: language"},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(recipe_load_text(bad[i][0], strlen(bad[i][0]), err,
		                       sizeof(err)) < 0);
		if (strstr(err, bad[i][1]) == NULL) {
			fprintf(stderr, "  \"%s\" lacks \"%s\"\n", err,
			        bad[i][1]);
			unit_failed = 1;
		}
	}
	/* a refused table leaves the loaded one in place */
	CHECK(recipe_find("nextjs") != NULL);
}

/* Every recipe, at the root and in a sub-directory, renders a manifest
 * that starts with the mark and parses. */
static void
every_recipe_renders(void)
{
	for (size_t i = 0; i < recipe_count(); i++) {
		const struct recipe *r = recipe_at(i);
		for (int sub = 0; sub < 2; sub++) {
			struct detection d = {0};
			struct manifest m;
			const char *text;
			char err[256];

			snprintf(d.recipe, sizeof(d.recipe), "%s", r->id);
			snprintf(d.dir, sizeof(d.dir), "%s",
			         sub ? "apps/web" : "");
			snprintf(d.pm, sizeof(d.pm), "%s",
			         strcmp(r->language, "node") == 0     ? "pnpm"
			         : strcmp(r->language, "python") == 0 ? "pip"
			                                              : "");
			snprintf(d.inputs[0], sizeof(d.inputs[0]),
			         "a \"b\".txt");
			d.ninputs = 1;
			snprintf(d.script, sizeof(d.script), "dev");
			text = manifest_of(&d);
			CHECK(strncmp(text, RECIPE_MANIFEST_MARK,
			              strlen(RECIPE_MANIFEST_MARK)) == 0);
			CHECK(strstr(text, "\nversion: 1\n") != NULL);
			CHECK(strchr(text, '{') == NULL); /* all replaced */
			CHECK(strchr(text, '\t') == NULL);
			if (parse(text, &m, err, sizeof(err)) < 0) {
				fprintf(stderr, "  %s: %s\n%s\n", r->id, err,
				        text);
				unit_failed = 1;
				continue;
			}
			CHECK(m.has_web == (r->dev != NULL));
			CHECK(m.nworkers == r->nworkers);
			if (r->dev != NULL && sub)
				CHECK(strncmp(m.web.command, "cd apps/web && ",
				              15) == 0);
			if (r->dev != NULL)
				CHECK(m.web.port == 3000);
			CHECK(m.has_install == (d.pm[0] != '\0'));
			if (m.has_install) {
				CHECK(m.install_timeout_s == 900);
				CHECK(m.ninstall_inputs == 1);
				CHECK_STR(m.install_inputs[0], "a \"b\".txt");
			}
		}
	}
}

static void
manifest_text(void)
{
	struct detection *d = fixture("nextjs");
	const char *text = manifest_of(d);
	char err[64];
	struct detection none = {0};
	struct buf out;

	CHECK_STR(text,
	          "# Written by sandboxd: detected Next.js (package.json "
	          "depends on \"next\").\n"
	          "# Edit it freely; sandboxd rewrites it only when asked to "
	          "detect again and the file still starts with this line.\n"
	          "version: 1\n"
	          "install:\n"
	          "  command: \"npm install --no-audit --no-fund\"\n"
	          "  inputs:\n"
	          "    - \"package.json\"\n"
	          "    - \"package-lock.json\"\n"
	          "  timeout_seconds: 900\n"
	          "web:\n"
	          "  command: \"npx --no -- next dev -H 0.0.0.0 -p $PORT\"\n"
	          "  port: 3000\n"
	          "  health_path: \"/\"\n"
	          "  restart_after_task: false\n");
	buf_init(&out, 1024);
	CHECK(recipe_manifest(&none, 3000, &out, err, sizeof(err)) < 0);
	CHECK_STR(err, "no framework was detected");
	buf_release(&out);
}

struct expect {
	const char *fixture, *recipe, *pm, *dir;
	int min_conf;
};

static void
framework_families(void)
{
	static const struct expect want[] = {
	    {"nextjs", "nextjs", "npm", "", 90},
	    {"react-vite", "react-vite", "npm", "", 80},
	    {"vite-vue", "vite-vue", "pnpm", "", 80},
	    {"nuxt", "nuxt", "yarn", "", 90},
	    {"sveltekit", "sveltekit", "bun", "", 90},
	    {"vite-svelte", "vite-svelte", "npm", "", 80},
	    {"express", "node-express", "npm", "", 80},
	    {"node-generic", "node", "npm", "", 1},
	    {"worker", "worker", "npm", "", 1},
	    {"pm-field", "react-vite", "pnpm", "", 80},
	    {"django", "django", "pip", "", 90},
	    {"flask", "flask", "pip", "", 80},
	    {"fastapi-uv", "fastapi", "uv", "", 80},
	    {"streamlit-poetry", "streamlit", "poetry", "", 90},
	    {"gradio", "gradio", "pip", "", 80},
	    {"jupyter", "jupyter", "pip", "", 80},
	    {"astro", "astro", "npm", "", 90},
	    {"angular", "angular", "npm", "", 90},
	    {"static", "static", "", "", 1},
	    {"python-generic", "python", "", "", 1},
	    {"monorepo-ws", "nextjs", "npm", "apps/web", 90},
	    {"monorepo-pnpm", "react-vite", "pnpm", "frontend", 80},
	    {"two-apps", "nextjs", "npm", "apps/a", 90},
	    {"frontend-backend", "vite-vue", "npm", "frontend", 80},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct detection *d = fixture(want[i].fixture);
		static struct manifest m;
		char err[256];

		/* what is written parses, with the inputs detection found */
		if (parse(manifest_of(d), &m, err, sizeof(err)) < 0) {
			fprintf(stderr, "  %s: %s\n", want[i].fixture, err);
			unit_failed = 1;
		}
		CHECK(m.has_install == (d->pm[0] != '\0'));
		CHECK(!m.has_install || m.ninstall_inputs == d->ninputs);
		for (int k = 0; m.has_install && k < d->ninputs; k++)
			CHECK_STR(m.install_inputs[k], d->inputs[k]);

		if (strcmp(d->recipe, want[i].recipe) != 0 ||
		    strcmp(d->pm, want[i].pm) != 0 ||
		    strcmp(d->dir, want[i].dir) != 0 ||
		    d->confidence < want[i].min_conf || d->nreasons == 0 ||
		    d->ncands == 0 || strcmp(d->cands[0].recipe, d->recipe)) {
			fprintf(stderr,
			        "  %s: got %s/%s in \"%s\" (%d), want %s/%s in "
			        "\"%s\"\n",
			        want[i].fixture, d->recipe, d->pm, d->dir,
			        d->confidence, want[i].recipe, want[i].pm,
			        want[i].dir);
			unit_failed = 1;
		}
	}
}

static void
reasons_inputs_placeholders(void)
{
	struct detection *d = fixture("nextjs");

	CHECK(has_reason(d, "package.json depends on \"next\""));
	CHECK(has_reason(d, "next.config.mjs exists"));
	CHECK(has_input(d, "package.json") &&
	      has_input(d, "package-lock.json"));
	CHECK(d->confidence >= 80);

	d = fixture("express");
	CHECK_STR(d->script, "start");
	CHECK(strstr(manifest_of(d), "\"npm run start\"") != NULL);
	CHECK(strstr(manifest_of(d), "restart_after_task: true") != NULL);

	d = fixture("flask");
	CHECK_STR(d->pyfile, "app.py");
	CHECK_STR(d->pymodule, "app");
	CHECK(has_reason(d, "requirements.txt names \"flask\""));
	CHECK(has_input(d, "requirements.txt"));
	CHECK(strstr(manifest_of(d),
	             "sandboxd-pip-install -r requirements.txt") != NULL);
	CHECK(strstr(manifest_of(d),
	             "python3 -m flask --app app --debug run --host "
	             "0.0.0.0 --port $PORT") != NULL);

	d = fixture("fastapi-uv");
	CHECK_STR(d->pyreqs, ".");
	CHECK(has_input(d, "pyproject.toml") && has_input(d, "uv.lock"));
	CHECK(has_warning(d, "not enforced"));
	CHECK(strstr(manifest_of(d), "uvicorn main:app --host 0.0.0.0") !=
	      NULL);

	d = fixture("node-generic");
	CHECK(has_warning(d, "no lockfile"));
	CHECK(d->confidence < 50);

	d = fixture("sveltekit");
	CHECK(has_warning(d, "bun is not in the image"));

	d = fixture("worker");
	CHECK(strstr(manifest_of(d), "workers:\n  - name: \"worker\"") != NULL);
	CHECK(strstr(manifest_of(d), "\nweb:") == NULL);

	d = fixture("static");
	CHECK(strstr(manifest_of(d), "install:") == NULL);

	d = fixture("node20");
	CHECK(has_warning(d, "engines.node asks for \">=20.19\""));
	CHECK(has_warning(d, "vite 7 needs Node 20"));
}

static void
monorepos(void)
{
	struct detection *d = fixture("monorepo-ws");

	/* the workspace installs at the root, the app runs in apps/web */
	CHECK_STR(d->install_dir, "");
	CHECK(has_input(d, "package.json") &&
	      has_input(d, "package-lock.json") &&
	      has_input(d, "apps/web/package.json"));
	CHECK(has_warning(d, "found 2 apps: "));
	CHECK(has_warning(d, "apps/web (Next.js)"));
	CHECK(has_warning(d, "apps/api (Express)"));
	CHECK(has_warning(d, "; chose apps/web"));
	CHECK(has_reason(d, "apps/web/package.json depends on \"next\""));
	CHECK(d->ncands >= 3); /* apps/web, apps/api, the root's scripts */
	CHECK(strstr(manifest_of(d), "command: \"npm install --no-audit "
	                             "--no-fund\"") != NULL);
	CHECK(strstr(manifest_of(d),
	             "command: \"cd apps/web && npx --no -- next "
	             "dev") != NULL);

	d = fixture("monorepo-pnpm");
	CHECK_STR(d->install_dir, "");
	CHECK(has_input(d, "pnpm-lock.yaml"));
	CHECK(strstr(manifest_of(d), "\"npx --yes pnpm@9 install\"") != NULL);

	/* two apps, no workspace: each installs in its own directory */
	d = fixture("two-apps");
	CHECK_STR(d->install_dir, "apps/a");
	CHECK(has_warning(d,
	                  "found 2 apps: apps/a (Next.js), apps/b (Express); "
	                  "chose apps/a"));
	CHECK(has_input(d, "apps/a/package-lock.json"));
	CHECK(strstr(manifest_of(d), "command: \"cd apps/a && npm install") !=
	      NULL);

	d = fixture("frontend-backend");
	CHECK(has_warning(d, "backend (FastAPI)"));

	/* apps in directories of other names: each directory is looked at */
	d = fixture("plain-dirs");
	CHECK_STR(d->recipe, "fastapi");
	CHECK_STR(d->dir, "api");
}

static void
nothing_matched(void)
{
	struct detection *d = fixture("none");

	CHECK_STR(d->recipe, "");
	CHECK_STR(d->looked_for,
	          "no package.json, requirements.txt, pyproject.toml, "
	          "manage.py, index.html or main.py/app.py in the app's root "
	          "or its sub-directories");
	CHECK(d->ncands == 0);

	d = fixture("broken");
	CHECK_STR(d->recipe, "");
	CHECK(has_warning(d, "package.json is not valid JSON"));
	CHECK(strstr(d->looked_for, "package.json is not valid JSON") != NULL);

	d = fixture("node-noscript");
	CHECK_STR(d->recipe, "");
	CHECK(strstr(d->looked_for, "names no known framework") != NULL);
}

/* A FIFO and a symbolic link named package.json: warnings, no hang. */
static void
hostile_files(void)
{
	char dir[] = "/tmp/test-recipe.XXXXXX", path[128];
	struct detection d;
	int fd;

	if (mkdtemp(dir) == NULL) {
		unit_failed = 1;
		return;
	}
	snprintf(path, sizeof(path), "%s/package.json", dir);
	CHECK(mkfifo(path, 0600) == 0);
	snprintf(path, sizeof(path), "%s/requirements.txt", dir);
	CHECK(symlink("/etc/passwd", path) == 0);
	snprintf(path, sizeof(path), "%s/index.html", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "<p>hi</p>\n", 10) == 10);
	close(fd);
	CHECK(detect_dir(dir, &d) == 0);
	CHECK_STR(d.recipe, "static");
	CHECK(has_warning(&d, "package.json is not a regular file: not read"));
	CHECK(has_warning(&d, "requirements.txt is a symbolic link: not read"));
	snprintf(path, sizeof(path), "%s/package.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/requirements.txt", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/index.html", dir);
	unlink(path);
	rmdir(dir);
}

/* The best of one directory's package.json. */
static const char *
best_of(const char *pkg, const char *second)
{
	static char id[RECIPE_ID_LEN + 1];
	const struct recipe *best[RECIPE_MAX_CANDS];
	int conf[RECIPE_MAX_CANDS], n;
	struct facts f;

	facts_init(&f);
	facts_add(&f.files, "package.json");
	facts_package_json(&f, pkg, strlen(pkg));
	n = match_dir(&f, best, conf, RECIPE_MAX_CANDS);
	snprintf(id, sizeof(id), "%s", n > 0 ? best[0]->id : "");
	for (int i = 0; second && i < n; i++)
		if (strcmp(best[i]->id, second) == 0) {
			fprintf(stderr, "  %s matched too\n", second);
			unit_failed = 1;
		}
	facts_release(&f);
	return id;
}

static void
exclusions(void)
{
	CHECK_STR(best_of("{\"dependencies\":{\"next\":\"15\",\"react\":\"19\","
	                  "\"vite\":\"5\"}}",
	                  "react-vite"),
	          "nextjs");
	CHECK_STR(best_of("{\"dependencies\":{\"nuxt\":\"3\",\"vue\":\"3\","
	                  "\"vite\":\"5\"}}",
	                  "vite-vue"),
	          "nuxt");
	CHECK_STR(best_of("{\"devDependencies\":{\"@sveltejs/kit\":\"2\","
	                  "\"svelte\":\"4\",\"vite\":\"5\"}}",
	                  "vite-svelte"),
	          "sveltekit");
	CHECK_STR(best_of("{\"dependencies\":{\"react\":\"18\",\"vite\":\"5\","
	                  "\"storybook\":\"8\"}}",
	                  NULL),
	          "react-vite");
	CHECK_STR(
	    best_of("{\"dependencies\":{\"hono\":\"4\",\"express\":\"4\"}}",
	            NULL),
	    "hono");
	CHECK_STR(best_of("{\"dependencies\":{\"left-pad\":\"1\"},"
	                  "\"scripts\":{\"start\":\"node x\"}}",
	                  NULL),
	          "node");
	CHECK_STR(best_of("[1,2]", NULL), "");
}

/* Facts made of a recipe's own signals: its dependencies (all of deps,
 * the first of any_deps and requirements), its files, its first config
 * file and script. */
static void
facts_of(const struct recipe *r, struct facts *f)
{
	struct buf pkg;

	facts_init(f);
	buf_init(&pkg, 1u << 16);
	buf_appendf(&pkg, "{\"dependencies\":{\"_\":\"1\"");
	for (int i = 0; i < r->deps.n; i++)
		buf_appendf(&pkg, ",\"%s\":\"1.0.0\"", r->deps.v[i]);
	if (r->any_deps.n)
		buf_appendf(&pkg, ",\"%s\":\"1.0.0\"", r->any_deps.v[0]);
	buf_appendf(&pkg, "},\"scripts\":{\"%s\":\"x\"}}",
	            r->scripts.n ? r->scripts.v[0] : "dev");
	facts_add(&f->files, "package.json");
	facts_package_json(f, pkg.data, pkg.len);
	if (r->requirements.n)
		facts_requirements(f, r->requirements.v[0],
		                   strlen(r->requirements.v[0]));
	for (int i = 0; i < r->files.n; i++)
		facts_add(&f->files, r->files.v[i]);
	if (r->config_files.n)
		facts_add(&f->files, r->config_files.v[0][0] == '*'
		                         ? "notebook.ipynb"
		                         : r->config_files.v[0]);
	buf_release(&pkg);
}

/* Every recipe is what detection picks from its own signals, with the
 * confidence they deserve. */
static void
own_signals(void)
{
	for (size_t i = 0; i < recipe_count(); i++) {
		const struct recipe *r = recipe_at(i), *best[RECIPE_MAX_CANDS];
		int conf[RECIPE_MAX_CANDS], n, c;
		struct facts f;

		facts_of(r, &f);
		c = match_recipe(r, &f, NULL, NULL);
		n = match_dir(&f, best, conf, RECIPE_MAX_CANDS);
		if (c < (r->fallback ? 1 : 80) || n == 0 ||
		    (!r->fallback && best[0] != r)) {
			fprintf(stderr, "  %s: confidence %d, best %s\n", r->id,
			        c, n ? best[0]->id : "none");
			unit_failed = 1;
		}
		facts_release(&f);
	}
}

/* A config file alone: medium when package.json cannot say, nothing
 * when package.json says otherwise. */
static void
config_file_alone(void)
{
	static const char *const pkgs[] = {"{\"scripts\":{}}", "{ broken"};
	const struct recipe *best[RECIPE_MAX_CANDS];
	int conf[RECIPE_MAX_CANDS], n;

	for (int i = 0; i < 2; i++) {
		struct facts f;

		facts_init(&f);
		facts_add(&f.files, "package.json");
		facts_add(&f.files, "next.config.mjs");
		facts_package_json(&f, pkgs[i], strlen(pkgs[i]));
		n = match_dir(&f, best, conf, RECIPE_MAX_CANDS);
		if (i == 0) {
			CHECK(n == 0);
		} else {
			CHECK(n == 1 && strcmp(best[0]->id, "nextjs") == 0 &&
			      conf[0] >= 50 && conf[0] < 80);
		}
		facts_release(&f);
	}
}

static void
python_names(void)
{
	static const char py[] =
	    "[build-system]\nrequires = [\"hatchling\"]\n"
	    "[project]\nname = \"x\"\n"
	    "dependencies = [\"Flask_Login>=0.6\", 'uvicorn[standard] ; "
	    "python_version>\"3\"']\n"
	    "[project.optional-dependencies]\ndev = [\n  \"pytest\",\n]\n"
	    "[tool.poetry.group.dev.dependencies]\nRuff = \"*\"\n"
	    "python = \"^3.11\"\n";
	static const char req[] =
	    "\xef\xbb\xbf"
	    "uvloop\r\n# c\n-r base.txt\n  Django == 4.2\n"
	    "-e .\ngunicorn[gevent]>=21 # prod\n";
	char name[64];
	struct facts f;

	facts_init(&f);
	facts_pyproject(&f, py, strlen(py));
	facts_requirements(&f, req, strlen(req));
	CHECK(facts_has(&f.pynames, "flask-login"));
	CHECK(facts_has(&f.pynames, "uvicorn"));
	CHECK(facts_has(&f.pynames, "pytest"));
	CHECK(facts_has(&f.pynames, "ruff"));
	CHECK(facts_has(&f.pynames, "django"));
	CHECK(facts_has(&f.pynames, "gunicorn"));
	CHECK(facts_has(&f.pynames, "uvloop"));
	CHECK(!facts_has(&f.pynames, "hatchling")); /* build-system */
	CHECK(!facts_has(&f.pynames, "x"));         /* the project's name */
	CHECK(!facts_has(&f.pynames, "python"));
	CHECK(!facts_has(&f.pynames, "base-txt"));
	facts_release(&f);
	facts_pyname("Zope.Interface>=5", 17, name, sizeof(name));
	CHECK_STR(name, "zope-interface");
}

static void
detect_as_chosen(void)
{
	struct detection d;
	int fd =
	    open(FIXTURES "react-vite", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(recipe_detect_as(fd, "vite", &d) == 0);
	CHECK_STR(d.recipe, "vite");
	CHECK(d.confidence >= 80);
	CHECK(has_reason(&d, "chosen by hand"));
	CHECK(recipe_detect_as(fd, "django", &d) == 0);
	CHECK_STR(d.recipe, "django");
	CHECK(d.confidence == 0);
	CHECK(has_warning(&d, "none of Django's signals were found"));
	CHECK(recipe_detect_as(fd, "no-such", &d) < 0);
	close(fd);
	fd = open(FIXTURES "two-apps", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(recipe_detect_as(fd, "node-express", &d) == 0);
	CHECK_STR(d.dir, "apps/b");
	close(fd);
}

static void
publish_objects(void)
{
	static const char bad_table[] =
	    "{\"package_managers\": [{\"id\": \"npm\", \"language\": "
	    "\"node\", \"install\": \"npm i\", \"run\": \"npm run\", "
	    "\"exec\": \"npx\"}], \"recipes\": [{\"id\": \"x\", "
	    "\"display_name\": \"X\", \"language\": \"node\", "
	    "\"priority\": 1, \"port\": 3000, \"health_path\": \"/\", "
	    "\"detect\": {\"files\": [\"x\"]}, \"commands\": "
	    "{\"dev\": \"x\"}, \"publish\": {\"output\": \"../x\"}}]}";
	struct recipe_publish p;
	struct detection *d = fixture("react-vite");
	char err[256];
	int fd;

	CHECK(recipe_publish(d, &p) == 0);
	CHECK_STR(p.build, "npx --no -- vite build");
	CHECK_STR(p.output, "dist");
	CHECK(p.spa && p.command[0] == '\0' && p.port == 0);
	d = fixture("express");
	CHECK(recipe_publish(d, &p) == 0);
	CHECK(p.output[0] == '\0' && p.port == 3000);
	CHECK(strncmp(p.command, "node ", 5) == 0);
	d = fixture("fastapi-uv");
	CHECK(recipe_publish(d, &p) == 0);
	CHECK(strstr(p.command, "uvicorn") &&
	      strstr(p.command, "--port 3000") &&
	      !strstr(p.command, "--reload"));
	d = fixture("static");
	CHECK(recipe_publish(d, &p) == 0);
	CHECK_STR(p.output, ".");
	d = fixture("worker");
	CHECK(recipe_publish(d, &p) == 0);
	CHECK(p.port == 0 && p.command[0] && !p.output[0]);
	/* An app in a sub-directory: the commands cd there. */
	d = fixture("monorepo-ws");
	CHECK(recipe_publish(d, &p) == 0);
	CHECK(strncmp(p.build, "cd apps/web && ", 15) == 0);
	CHECK(strncmp(p.command, "cd apps/web && ", 15) == 0);
	/* A recipe that says nothing about publishing. */
	d = fixture("jupyter");
	CHECK(recipe_publish(d, &p) == 1);
	fd = open(FIXTURES "react-vite", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(recipe_detect_as(fd, "static", d) == 0);
	close(fd);
	CHECK(recipe_publish(d, &p) == 0);
	CHECK_STR(p.output, ".");
	/* The table's JSON shows it, placeholders unrendered. */
	{
		struct jv *l = recipe_list_json(), *a = jv_get(l, "recipes");
		int seen = 0;

		for (size_t i = 0; a && i < jv_len(a); i++) {
			struct jv *o = jv_at(a, i), *pub = jv_get(o, "publish");
			const char *id = jv_str(jv_get(o, "id"));

			if (strcmp(id, "react-vite") == 0)
				seen += strcmp(jv_str(jv_get(pub, "output")),
				               "dist") == 0 &&
				        jv_is_true(jv_get(pub, "spa"));
			if (strcmp(id, "jupyter") == 0)
				seen += jv_type(pub) == JV_NULL;
		}
		CHECK(seen == 2);
		jv_free(l);
	}
	/* A bad publish object is refused when the table loads. */
	CHECK(recipe_load_text(bad_table, strlen(bad_table), err, sizeof(err)) <
	      0);
	CHECK(strstr(err, "publish.output") != NULL);
	CHECK(recipe_load_text(recipe_json, strlen(recipe_json), err,
	                       sizeof(err)) == 0);
}

static void
json_shapes(void)
{
	struct jv *l = recipe_list_json(), *a = jv_get(l, "recipes"), *o;
	struct buf out;

	CHECK(jv_len(a) == recipe_count());
	for (size_t i = 0; i < jv_len(a); i++) {
		o = jv_at(a, i);
		CHECK(jv_str(jv_get(o, "id")) != NULL);
		CHECK(jv_type(jv_get(jv_get(o, "detect"), "deps")) == JV_ARRAY);
		CHECK(jv_type(jv_get(jv_get(o, "detect"), "config_files")) ==
		      JV_ARRAY);
		CHECK(jv_str(jv_get(o, "suggested_manifest")) != NULL);
		CHECK(jv_type(jv_get(o, "package_managers")) == JV_ARRAY);
	}
	jv_free(l);

	buf_init(&out, 1u << 16);
	o = detection_json(fixture("two-apps"));
	jv_dump(o, &out);
	CHECK(strstr(out.data, "\"recipe\":\"nextjs\",\"display_name\":"
	                       "\"Next.js\",\"dir\":\"apps/a\","
	                       "\"package_manager\":\"npm\",\"confidence\":95,"
	                       "\"confidence_label\":\"high\"") != NULL);
	CHECK(strstr(out.data, "\"candidates\":[{\"recipe\":\"nextjs\"") !=
	      NULL);
	CHECK(strstr(out.data, "looked_for") == NULL);
	jv_free(o);
	buf_reset(&out);
	o = detection_json(fixture("none"));
	jv_dump(o, &out);
	CHECK(strstr(out.data, "\"recipe\":null") != NULL);
	CHECK(strstr(out.data, "\"confidence_label\":\"low\"") != NULL);
	CHECK(strstr(out.data, "\"looked_for\":\"no package.json") != NULL);
	jv_free(o);
	buf_release(&out);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"the table loads, ids are unique", table_loads},
	    {"a bad table is refused, naming the recipe", bad_tables_refused},
	    {"docs/recipes.md lists every recipe", docs_list_every_recipe},
	    {"every recipe renders a manifest that parses",
	     every_recipe_renders},
	    {"the manifest of a Next.js app", manifest_text},
	    {"each framework family, package manager and directory",
	     framework_families},
	    {"reasons, inputs, placeholders and warnings",
	     reasons_inputs_placeholders},
	    {"monorepos: workspaces, pnpm, two apps", monorepos},
	    {"nothing matched says what was looked for", nothing_matched},
	    {"a FIFO and a link are warnings, not hangs", hostile_files},
	    {"exclusions: the specific framework wins", exclusions},
	    {"every recipe is picked from its own signals", own_signals},
	    {"a config file alone counts without a readable package.json",
	     config_file_alone},
	    {"Python package names from requirements and pyproject",
	     python_names},
	    {"a recipe chosen by hand", detect_as_chosen},
	    {"the recipes' and a detection's JSON", json_shapes},
	    {"publish objects render like the manifest's commands",
	     publish_objects},
	};

	return UNIT_RUN("recipe", tests);
}
