/*
 * What one directory of an app says, from texts only (pure: detect.c
 * reads the files, the tests and the fuzz target hand texts in).
 * package.json is parsed as JSON (a text that is not is a warning and
 * says nothing); requirements files are read a line at a time for the
 * package name each starts with; pyproject.toml is not parsed as TOML
 * (no TOML library here, and we need one thing of it): the strings of a
 * [project] "dependencies = [...]" array and of [project.optional-
 * dependencies] and [dependency-groups], and the keys of a
 * [tool.poetry.*dependencies] table, are the names it declares.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "recipe/internal.h"

#define FACTS_LIST_MAX (256u << 10)
#define FACTS_DEPTH    16

void
facts_init(struct facts *f)
{
	memset(f, 0, sizeof(*f));
	buf_init(&f->files, FACTS_LIST_MAX);
	buf_init(&f->dirs, FACTS_LIST_MAX);
	buf_init(&f->depnames, FACTS_LIST_MAX);
	buf_init(&f->pynames, FACTS_LIST_MAX);
}

void
facts_release(struct facts *f)
{
	buf_release(&f->files);
	buf_release(&f->dirs);
	buf_release(&f->depnames);
	buf_release(&f->pynames);
	jv_free(f->pkg);
	f->pkg = NULL;
}

bool
facts_has(const struct buf *list, const char *name)
{
	char key[RECIPE_NOTE_LEN];

	if (list->data == NULL || name[0] == '\0' ||
	    strlen(name) > sizeof(key) - 3)
		return false;
	snprintf(key, sizeof(key), "\n%s\n", name);
	return strstr(list->data, key) != NULL;
}

void
facts_add(struct buf *list, const char *name)
{
	if (name[0] == '\0' || strchr(name, '\n') != NULL ||
	    facts_has(list, name))
		return;
	if (list->len == 0)
		buf_append(list, "\n", 1);
	buf_appendf(list, "%s\n", name);
}

void
facts_warn(struct facts *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nwarn == RECIPE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(f->warn[f->nwarn++], RECIPE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

static void
add_keys(struct facts *f, const struct jv *o)
{
	void *it = NULL;
	const char *k;
	struct jv *v;

	if (o == NULL || jv_type(o) != JV_OBJECT)
		return;
	while (jv_each(o, &it, &k, &v))
		if (strlen(k) < RECIPE_NOTE_LEN - 2)
			facts_add(&f->depnames, k);
}

void
facts_package_json(struct facts *f, const char *text, size_t len)
{
	char err[120];

	f->pkg_present = true;
	f->pkg = jv_parse(text, len, FACTS_DEPTH, err, sizeof(err));
	if (f->pkg != NULL && jv_type(f->pkg) != JV_OBJECT) {
		jv_free(f->pkg);
		f->pkg = NULL;
		snprintf(err, sizeof(err), "not an object");
	}
	if (f->pkg == NULL) {
		f->pkg_bad = true;
		facts_warn(f,
		           "package.json is not valid JSON (%s): nothing was "
		           "read from it",
		           err);
		return;
	}
	add_keys(f, jv_get(f->pkg, "dependencies"));
	add_keys(f, jv_get(f->pkg, "devDependencies"));
}

void
facts_pyname(const char *in, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < outlen; i++) {
		char c = (char)tolower((unsigned char)in[i]);

		if (c == '_' || c == '.')
			c = '-';
		if (!(isalnum((unsigned char)c) || c == '-'))
			break;
		out[n++] = c;
	}
	if (outlen)
		out[n] = '\0';
}

static void
add_pyname(struct facts *f, const char *s, size_t len)
{
	char name[RECIPE_NOTE_LEN];

	while (len && isspace((unsigned char)*s))
		s++, len--;
	facts_pyname(s, len, name, sizeof(name));
	facts_add(&f->pynames, name);
}

void
facts_requirements(struct facts *f, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) /* a BOM */
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		/* "-r other.txt", "-e .", "--index-url": not names */
		while (p < e && isspace((unsigned char)*p))
			p++;
		if (p < e && *p != '-' && *p != '#')
			add_pyname(f, p, (size_t)(e - p));
		p = nl ? nl + 1 : end;
	}
}

/* The quoted strings of text[0..len) as names ("fastapi>=0.1" too). */
static void
add_quoted(struct facts *f, const char *p, const char *end)
{
	while (p < end) {
		const char *q = p;

		while (q < end && *q != '"' && *q != '\'')
			q++;
		if (q >= end)
			return;
		p = q + 1;
		q = memchr(p, *q, (size_t)(end - p));
		if (q == NULL)
			return;
		add_pyname(f, p, (size_t)(q - p));
		p = q + 1;
	}
}

/* The "]" that closes an array, outside quoted strings; NULL when the
 * line has none. */
static const char *
array_end(const char *p, const char *end)
{
	char quote = 0;

	for (; p < end; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '"' || *p == '\'') {
			quote = *p;
		} else if (*p == ']') {
			return p;
		} else if (*p == '#') {
			return NULL;
		}
	}
	return NULL;
}

enum py_section { PY_OTHER, PY_PROJECT, PY_LISTS, PY_KEYS };

static enum py_section
py_section(const char *line, size_t len)
{
	char name[96];
	size_t n = 0;

	for (size_t i = 1; i < len && line[i] != ']' && n + 1 < sizeof(name);
	     i++)
		if (!isspace((unsigned char)line[i]))
			name[n++] = line[i];
	name[n] = '\0';
	if (strcmp(name, "project") == 0)
		return PY_PROJECT;
	if (strcmp(name, "project.optional-dependencies") == 0 ||
	    strcmp(name, "dependency-groups") == 0)
		return PY_LISTS;
	if (strncmp(name, "tool.poetry", 11) == 0 && n > 12 &&
	    strcmp(name + n - 12, "dependencies") == 0)
		return PY_KEYS;
	return PY_OTHER;
}

struct py_walk {
	enum py_section sec;
	bool in_array; /* inside a "dependencies = [" that spans lines */
};

static void
py_line(struct facts *f, struct py_walk *w, const char *p, const char *e)
{
	const char *eq, *close;

	if (w->in_array) {
		close = array_end(p, e);
		add_quoted(f, p, close ? close : e);
		w->in_array = close == NULL;
		return;
	}
	if (*p == '[') {
		w->sec = py_section(p, (size_t)(e - p));
		return;
	}
	eq = memchr(p, '=', (size_t)(e - p));
	if (eq == NULL || w->sec == PY_OTHER)
		return;
	if (w->sec == PY_KEYS) {
		if (strncmp(p, "python", 6) != 0 ||
		    isalnum((unsigned char)p[6]))
			add_pyname(f, p, (size_t)(eq - p));
		return;
	}
	if (w->sec == PY_PROJECT && strncmp(p, "dependencies", 12) != 0)
		return;
	p = memchr(eq, '[', (size_t)(e - eq));
	if (p == NULL)
		return;
	close = array_end(p + 1, e);
	w->in_array = close == NULL;
	add_quoted(f, p, close ? close : e);
}

void
facts_pyproject(struct facts *f, const char *text, size_t len)
{
	struct py_walk w = {PY_OTHER, false};
	const char *p = text, *end = text + len;

	f->has_pyproject = true;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *s = p;

		while (s < e && isspace((unsigned char)*s))
			s++;
		if (s < e && *s != '#')
			py_line(f, &w, s, e);
		p = nl ? nl + 1 : end;
	}
}

bool
facts_workspace_root(const struct facts *f)
{
	return facts_has(&f->files, "pnpm-workspace.yaml") ||
	       (f->pkg != NULL && jv_get(f->pkg, "workspaces") != NULL);
}

int
facts_dep_major(const struct facts *f, const char *dep)
{
	const char *s = NULL;
	long v = 0;
	bool digits = false;

	if (f->pkg == NULL)
		return -1;
	s = jv_str(jv_get(jv_get(f->pkg, "dependencies"), dep));
	if (s == NULL)
		s = jv_str(jv_get(jv_get(f->pkg, "devDependencies"), dep));
	if (s == NULL)
		return -1;
	while (*s && !isdigit((unsigned char)*s)) {
		/* "latest", "workspace:*", a URL: no version to read */
		if (isalpha((unsigned char)*s) || *s == '*')
			return -1;
		s++;
	}
	for (; isdigit((unsigned char)*s) && v < 100000; s++, digits = true)
		v = v * 10 + (*s - '0');
	return digits ? (int)v : -1;
}
