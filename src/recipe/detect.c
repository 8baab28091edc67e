/*
 * Detection over an app's tree: reads a directory's names and its
 * package.json, requirements and pyproject.toml through ws/wsfs (openat2
 * beneath the app, no link followed, only regular files opened,
 * O_NONBLOCK, at most RECIPE_READ_MAX bytes, within WSFS_READ_MS), turns
 * them into struct facts, and leaves the deciding to match.c.  It never
 * runs anything of the app.
 *
 * The root first.  A root that is a workspace (npm/yarn "workspaces",
 * pnpm-workspace.yaml), or whose best match is only a generic recipe or
 * none, is a monorepo candidate: its workspace patterns and the usual
 * places (apps/ and packages/ children, frontend, web, client, backend,
 * server), at most RECIPE_MAX_DIRS directories RECIPE_MAX_DEPTH deep, are read
 * too, and the best app is chosen (apps/web, frontend, web first; then
 * confidence; then priority) with a warning naming every app found.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recipe/internal.h"
#include "ws/wsfs.h"

#define LIST_MAX  4096 /* names of one directory looked at */
#define REQ_FILES 4    /* requirements*.txt read in one directory */

static const char *const interesting[] = {
    "package.json", "requirements.txt",   "pyproject.toml",
    "manage.py",    "index.html",         "main.py",
    "app.py",       "pnpm-workspace.yaml"};

/* Paths below a directory detection checks (config files in a dot
 * directory, Python entry points). */
static const char *const probes[] = {"app/main.py", "src/main.py"};

static bool
is_interesting(const char *name)
{
	for (size_t i = 0; i < sizeof(interesting) / sizeof(interesting[0]);
	     i++)
		if (strcmp(name, interesting[i]) == 0)
			return true;
	return strstr(name, "lock") != NULL ||
	       strncmp(name, "requirements", 12) == 0;
}

/* A directory's names are unique: appended without facts_add's
 * lookup, which would make a large directory quadratic. */
static void
list_add(struct buf *list, const char *name)
{
	if (strchr(name, '\n') != NULL)
		return;
	if (list->len == 0)
		buf_append(list, "\n", 1);
	buf_appendf(list, "%s\n", name);
}

static void
list_entry(struct facts *f, int fd, const struct dirent *de)
{
	unsigned char type = de->d_type;
	struct stat st;

	if (de->d_name[0] == '.' &&
	    (de->d_name[1] == '\0' || strcmp(de->d_name, "..") == 0))
		return;
	if (type == DT_UNKNOWN &&
	    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		type = S_ISREG(st.st_mode)   ? DT_REG
		       : S_ISDIR(st.st_mode) ? DT_DIR
		       : S_ISLNK(st.st_mode) ? DT_LNK
		                             : DT_FIFO;
	if (type == DT_REG)
		list_add(&f->files, de->d_name);
	else if (type == DT_DIR)
		list_add(&f->dirs, de->d_name);
	else if (is_interesting(de->d_name))
		facts_warn(f, "%s is %s: not read", de->d_name,
		           type == DT_LNK ? "a symbolic link"
		                          : "not a regular file");
}

static int
list_dir(struct facts *f, int fd)
{
	int dfd = dup(fd);
	DIR *dir;
	struct dirent *de;
	int n = 0;

	if (dfd < 0)
		return -1;
	fcntl(dfd, F_SETFD, FD_CLOEXEC);
	dir = fdopendir(dfd);
	if (dir == NULL) {
		close(dfd);
		return -1;
	}
	rewinddir(dir);
	while ((de = readdir(dir)) != NULL && n++ < LIST_MAX)
		list_entry(f, fd, de);
	if (n > LIST_MAX)
		facts_warn(f,
		           "more than %d names in the directory: only the "
		           "first were looked at",
		           LIST_MAX);
	closedir(dir);
	return 0;
}

static bool
read_file(struct facts *f, int fd, const char *name, struct buf *b)
{
	struct err e;

	if (wsfs_read(fd, name, RECIPE_READ_MAX, b, &e) == 0)
		return true;
	facts_warn(f, "%s could not be read: %s", name, e.msg);
	return false;
}

/* The next name of a "\n"-framed list from *pos, "" when too long;
 * false at the end. */
static bool
list_next(const char **pos, char *out, size_t outlen)
{
	const char *p = *pos;
	size_t n;

	if (p == NULL || *p == '\0' || (*p == '\n' && p[1] == '\0'))
		return false;
	if (*p == '\n')
		p++;
	n = strcspn(p, "\n");
	if (n < outlen)
		snprintf(out, outlen, "%.*s", (int)n, p);
	else
		out[0] = '\0';
	*pos = p + n;
	return true;
}

static void
read_requirements(struct facts *f, int fd)
{
	const char *pos = f->files.data;
	char name[128];
	int n = 0;

	if (facts_has(&f->files, "requirements.txt"))
		snprintf(f->reqfile, sizeof(f->reqfile), "requirements.txt");
	while (n < REQ_FILES && list_next(&pos, name, sizeof(name))) {
		size_t len = strlen(name);
		struct buf b;

		if (strncmp(name, "requirements", 12) != 0 || len < 16 ||
		    strcmp(name + len - 4, ".txt") != 0)
			continue;
		if (f->reqfile[0] == '\0')
			snprintf(f->reqfile, sizeof(f->reqfile), "%s", name);
		if (read_file(f, fd, name, &b))
			facts_requirements(f, b.data, b.len);
		buf_release(&b);
		n++;
	}
}

static void
probe_paths(struct facts *f, int fd)
{
	const struct recipe_table *t = recipe_table();
	struct stat st;

	for (size_t i = 0; t != NULL && i < t->n; i++)
		for (int j = 0; j < t->r[i].config_files.n; j++) {
			const char *p = t->r[i].config_files.v[j];
			int pfd;

			if (strchr(p, '/') == NULL || facts_has(&f->files, p))
				continue;
			pfd = wsfs_openat(fd, p, O_PATH | O_NOFOLLOW, 0);
			if (pfd >= 0 && fstat(pfd, &st) == 0 &&
			    S_ISREG(st.st_mode))
				facts_add(&f->files, p);
			if (pfd >= 0)
				close(pfd);
		}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		int pfd = wsfs_openat(fd, probes[i], O_PATH | O_NOFOLLOW, 0);

		if (pfd >= 0 && fstat(pfd, &st) == 0 && S_ISREG(st.st_mode))
			facts_add(&f->files, probes[i]);
		if (pfd >= 0)
			close(pfd);
	}
}

/* What the directory dir (beneath appfd, "" for the root) says; -1 when
 * it cannot be opened as a directory. */
static int
gather(int appfd, const char *dir, struct facts *f)
{
	int fd = wsfs_openat(appfd, dir, O_RDONLY | O_DIRECTORY, 0);
	struct buf b;

	facts_init(f);
	if (fd < 0 || list_dir(f, fd) < 0) {
		if (fd >= 0)
			close(fd);
		facts_release(f);
		return -1;
	}
	if (facts_has(&f->files, "package.json")) {
		if (read_file(f, fd, "package.json", &b))
			facts_package_json(f, b.data, b.len);
		else
			f->pkg_present = f->pkg_bad = true;
		buf_release(&b);
	}
	read_requirements(f, fd);
	if (facts_has(&f->files, "pyproject.toml")) {
		if (read_file(f, fd, "pyproject.toml", &b))
			facts_pyproject(f, b.data, b.len);
		buf_release(&b);
	}
	probe_paths(f, fd);
	close(fd);
	return 0;
}

/* The sub-directories a monorepo's apps may be in. */
struct subdirs {
	char dir[RECIPE_MAX_DIRS][RECIPE_DIR_LEN + 1];
	int n;
	bool cut;
};

static bool
safe_dir(const char *s)
{
	if (s[0] == '\0' || s[0] == '.' || s[0] == '-' || strlen(s) > 100)
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && strchr("._-/", *s) == NULL)
			return false;
	return true;
}

static void
sub_add(struct subdirs *s, const char *dir)
{
	int depth = 1;

	for (const char *p = dir; *p; p++)
		depth += *p == '/';
	if (!safe_dir(dir) || strstr(dir, "..") || depth > RECIPE_MAX_DEPTH ||
	    strstr(dir, "node_modules"))
		return;
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->dir[i], dir) == 0)
			return;
	if (s->n == RECIPE_MAX_DIRS) {
		s->cut = true;
		return;
	}
	snprintf(s->dir[s->n++], RECIPE_DIR_LEN + 1, "%s", dir);
}

/* A pattern "x", or "x/" and a star (a workspace's, or ours). */
static void
sub_pattern(struct subdirs *s, int appfd, const char *pat)
{
	char base[RECIPE_DIR_LEN + 1], name[RECIPE_DIR_LEN + 1];
	struct facts f;
	size_t len = strlen(pat);

	while (len && pat[len - 1] == '/')
		len--;
	if (len < 2 || strcmp(pat + len - 2, "/*") != 0) {
		snprintf(base, sizeof(base), "%.*s", (int)len, pat);
		if (strchr(base, '*') == NULL)
			sub_add(s, base);
		return;
	}
	snprintf(base, sizeof(base), "%.*s", (int)(len - 2), pat);
	if (strchr(base, '*') != NULL || !safe_dir(base) ||
	    gather(appfd, base, &f) < 0)
		return;
	for (const char *pos = f.dirs.data;
	     list_next(&pos, name, sizeof(name));) {
		char one[RECIPE_DIR_LEN + 1];

		if (name[0] == '\0')
			continue;
		snprintf(one, sizeof(one), "%s/%s", base, name);
		sub_add(s, one);
	}
	facts_release(&f);
}

static void
pnpm_patterns(struct subdirs *s, int appfd)
{
	struct buf b;
	struct err e;
	int fd = wsfs_openat(appfd, "", O_RDONLY | O_DIRECTORY, 0);

	if (fd < 0)
		return;
	if (wsfs_read(fd, "pnpm-workspace.yaml", RECIPE_READ_MAX, &b, &e) == 0)
		for (char *p = b.data, *nl; p && *p; p = nl ? nl + 1 : NULL) {
			char pat[RECIPE_DIR_LEN + 1];
			size_t n;

			nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			p += strspn(p, " \t");
			if (p[0] != '-')
				continue;
			p += 1 + strspn(p + 1, " \t\"'");
			n = strcspn(p, "\"' \t#\r");
			snprintf(pat, sizeof(pat), "%.*s", (int)n, p);
			sub_pattern(s, appfd, pat);
		}
	buf_release(&b);
	close(fd);
}

static void
find_subdirs(struct subdirs *s, int appfd, const struct facts *root)
{
	static const char *const usual[] = {"apps/*", "packages/*", "frontend",
	                                    "web",    "client",     "backend",
	                                    "server"};
	struct jv *ws = root->pkg ? jv_get(root->pkg, "workspaces") : NULL;

	if (ws != NULL && jv_type(ws) == JV_OBJECT)
		ws = jv_get(ws, "packages");
	for (size_t i = 0; ws != NULL && jv_type(ws) == JV_ARRAY &&
	                   i < jv_len(ws) && i < RECIPE_MAX_DIRS;
	     i++)
		if (jv_str(jv_at(ws, i)) != NULL)
			sub_pattern(s, appfd, jv_str(jv_at(ws, i)));
	if (facts_has(&root->files, "pnpm-workspace.yaml"))
		pnpm_patterns(s, appfd);
	char top[RECIPE_DIR_LEN + 1];

	for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++) {

		snprintf(top, sizeof(top), "%.*s", (int)strcspn(usual[i], "/"),
		         usual[i]);
		if (facts_has(&root->dirs, top))
			sub_pattern(s, appfd, usual[i]);
	}
	/* None of those: each directory of the root (site/, api/, …). */
	for (const char *pos = root->dirs.data;
	     s->n == 0 && pos && list_next(&pos, top, sizeof(top));)
		if (top[0] != '\0')
			sub_add(s, top);
}

/* One directory's best match. */
struct app {
	char dir[RECIPE_DIR_LEN + 1];
	const struct recipe *r;
	int conf;
};

static int
preferred(const char *dir)
{
	static const char *const first[] = {"apps/web", "frontend", "web"};

	for (int i = 0; i < 3; i++)
		if (strcmp(dir, first[i]) == 0)
			return 3 - i;
	return 0;
}

static bool
app_above(const struct app *a, const struct app *b)
{
	if (a->r->fallback != b->r->fallback)
		return !a->r->fallback;
	if (preferred(a->dir) != preferred(b->dir))
		return preferred(a->dir) > preferred(b->dir);
	if (a->conf != b->conf)
		return a->conf > b->conf;
	return a->r->priority > b->r->priority;
}

/* The apps of the sub-directories, best first; the count. */
static int
scan_apps(int appfd, const struct subdirs *s, struct app *apps)
{
	int n = 0;

	for (int i = 0; i < s->n; i++) {
		struct facts f;
		const struct recipe *best[1];
		int conf[1], j;

		if (gather(appfd, s->dir[i], &f) < 0)
			continue;
		if (match_dir(&f, best, conf, 1) == 1) {
			struct app a = {.r = best[0], .conf = conf[0]};

			snprintf(a.dir, sizeof(a.dir), "%s", s->dir[i]);
			for (j = n; j > 0 && app_above(&a, &apps[j - 1]); j--)
				apps[j] = apps[j - 1];
			apps[j] = a;
			n++;
		}
		facts_release(&f);
	}
	return n;
}

static void
say_looked_for(struct detection *d, const struct facts *root)
{
	const char *where = "in the app's root or its sub-directories";

	if (root->pkg != NULL)
		snprintf(d->looked_for, sizeof(d->looked_for),
		         "package.json names no known framework and has no "
		         "dev, start or worker script, and there is no "
		         "requirements.txt, pyproject.toml, manage.py, "
		         "index.html or main.py/app.py %s",
		         where);
	else if (root->pkg_bad)
		snprintf(d->looked_for, sizeof(d->looked_for),
		         "package.json is not valid JSON, and there is no "
		         "requirements.txt, pyproject.toml, manage.py, "
		         "index.html or main.py/app.py %s",
		         where);
	else
		snprintf(d->looked_for, sizeof(d->looked_for),
		         "no package.json, requirements.txt, pyproject.toml, "
		         "manage.py, index.html or main.py/app.py %s",
		         where);
}

/* Fills d for app a; a sub-directory of a workspace installs at the
 * root. */
static int
fill_app(int appfd, struct detection *d, const struct app *a,
         const struct facts *root)
{
	bool ws =
	    facts_workspace_root(root) && strcmp(a->r->language, "node") == 0;
	struct facts f;

	if (a->dir[0] == '\0') {
		match_fill(d, a->r, a->conf, "", root, NULL, "");
		return 0;
	}
	if (gather(appfd, a->dir, &f) < 0)
		return -1;
	match_fill(d, a->r, a->conf, a->dir, &f, ws ? root : NULL, "");
	for (int i = 0; i < root->nwarn; i++)
		detection_warn(d, "%s", root->warn[i]);
	facts_release(&f);
	return 0;
}

static void
warn_apps(struct detection *d, const struct app *apps, int n)
{
	char list[RECIPE_NOTE_LEN] = "";
	size_t len = 0;
	int real = 0;

	for (int i = 0; i < n; i++) {
		if (apps[i].r->fallback || apps[i].dir[0] == '\0')
			continue;
		real++;
		if (len < sizeof(list) - 120)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
			                        "%s%.40s (%.30s)",
			                        len ? ", " : "", apps[i].dir,
			                        apps[i].r->display_name);
	}
	if (real > 1)
		detection_warn(d, "found %d apps: %s; chose %s", real, list,
		               d->dir[0] ? d->dir : "the root");
}

static void
add_cand(struct detection *d, const char *dir, const struct recipe *r, int conf)
{
	struct detect_candidate *c;

	if (d->ncands == RECIPE_MAX_CANDS)
		return;
	c = &d->cands[d->ncands++];
	snprintf(c->recipe, sizeof(c->recipe), "%s", r->id);
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	c->confidence = conf;
}

/* The root, then (a workspace, or nothing specific at the root) its
 * sub-directories: apps, best first, the root's match among them. */
static int
detect_monorepo(int appfd, struct detection *d, const struct facts *root,
                const struct recipe *rbest, int rconf)
{
	static __thread struct app apps[RECIPE_MAX_DIRS + 1];
	struct subdirs s = {.n = 0};
	int n, j;

	find_subdirs(&s, appfd, root);
	n = scan_apps(appfd, &s, apps);
	if (rbest != NULL) {
		struct app a = {.dir = "", .r = rbest, .conf = rconf};

		for (j = n; j > 0 && app_above(&a, &apps[j - 1]); j--)
			apps[j] = apps[j - 1];
		apps[j] = a;
		n++;
	}
	if (s.cut)
		detection_warn(d,
		               "more than %d sub-directories: only the "
		               "first %d were looked at",
		               RECIPE_MAX_DIRS, RECIPE_MAX_DIRS);
	if (n == 0) {
		for (int i = 0; i < root->nwarn; i++)
			detection_warn(d, "%s", root->warn[i]);
		say_looked_for(d, root);
		return 0;
	}
	if (fill_app(appfd, d, &apps[0], root) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		add_cand(d, apps[i].dir, apps[i].r, apps[i].conf);
	warn_apps(d, apps, n);
	return 0;
}

int
recipe_detect(int appfd, struct detection *d)
{
	const struct recipe *best[RECIPE_MAX_CANDS];
	int conf[RECIPE_MAX_CANDS], n, rc = 0;
	struct facts root;

	memset(d, 0, sizeof(*d));
	if (recipe_table() == NULL || gather(appfd, "", &root) < 0)
		return -1;
	n = match_dir(&root, best, conf, RECIPE_MAX_CANDS);
	if (n > 0 && !best[0]->fallback && !facts_workspace_root(&root)) {
		match_fill(d, best[0], conf[0], "", &root, NULL, "");
		for (int i = 0; i < n; i++)
			add_cand(d, "", best[i], conf[i]);
	} else {
		rc = detect_monorepo(appfd, d, &root, n > 0 ? best[0] : NULL,
		                     n > 0 ? conf[0] : 0);
	}
	facts_release(&root);
	return rc;
}

int
recipe_detect_as(int appfd, const char *id, struct detection *d)
{
	const struct recipe *r = recipe_find(id);
	struct app a = {.dir = "", .r = r};
	struct subdirs s = {.n = 0};
	struct facts root, f;
	int rc;

	memset(d, 0, sizeof(*d));
	if (r == NULL || gather(appfd, "", &root) < 0)
		return -1;
	a.conf = match_recipe(r, &root, NULL, NULL);
	if (a.conf == 0 || facts_workspace_root(&root))
		find_subdirs(&s, appfd, &root);
	for (int i = 0; i < s.n; i++) {
		int c;

		if (gather(appfd, s.dir[i], &f) < 0)
			continue;
		c = match_recipe(r, &f, NULL, NULL);
		if (c > a.conf) {
			a.conf = c;
			snprintf(a.dir, sizeof(a.dir), "%s", s.dir[i]);
		}
		facts_release(&f);
	}
	rc = fill_app(appfd, d, &a, &root);
	detection_reason(d, "%s was chosen by hand", r->display_name);
	if (a.conf == 0)
		detection_warn(d,
		               "none of %s's signals were found: its commands "
		               "may not fit this app",
		               r->display_name);
	add_cand(d, a.dir, r, a.conf);
	facts_release(&root);
	return rc;
}
