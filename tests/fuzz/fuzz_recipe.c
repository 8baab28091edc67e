/*
 * libFuzzer target: detection's pure part (src/recipe/facts.c, match.c,
 * fill.c) and the manifest it renders (render.c), on what an imported
 * repository controls.  The input is four texts split at NUL bytes: a
 * package.json, a pyproject.toml, a requirements file, and the names of
 * the directory's files one a line.  Every recipe that matches is
 * filled and rendered: the detection's strings stay terminated within
 * their arrays, a manifest starts with the mark, has exactly its two
 * comment lines, and every other line is one of the keys sandboxd
 * writes (a name from the input cannot break out of its quoted scalar
 * into a line of its own).  Nothing may crash, leak or read out of
 * bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *
part(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *z;

	if (s >= end) {
		*len = 0;
		return "";
	}
	z = memchr(s, '\0', (size_t)(end - s));
	*len = (size_t)((z ? z : end) - s);
	*p = z ? z + 1 : end;
	return s;
}

static bool
terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void
check_detection(const struct detection *d)
{
	if (!terminated(d->recipe, sizeof(d->recipe)) ||
	    !terminated(d->pm, sizeof(d->pm)) ||
	    !terminated(d->script, sizeof(d->script)) ||
	    !terminated(d->entry, sizeof(d->entry)) ||
	    !terminated(d->pyfile, sizeof(d->pyfile)) ||
	    !terminated(d->pymodule, sizeof(d->pymodule)) ||
	    !terminated(d->pyreqs, sizeof(d->pyreqs)) ||
	    d->nreasons > RECIPE_MAX_NOTES || d->nwarnings > RECIPE_MAX_NOTES ||
	    d->ninputs > RECIPE_MAX_INPUTS || d->confidence < 0 ||
	    d->confidence > 100)
		__builtin_trap();
	for (int i = 0; i < d->nwarnings; i++)
		if (!terminated(d->warnings[i], RECIPE_NOTE_LEN))
			__builtin_trap();
}

static void
check_manifest(const char *text)
{
	static const char *const keys[] = {"version: 1",
	                                   "install:",
	                                   "web:",
	                                   "workers:",
	                                   "build:",
	                                   "  command: \"",
	                                   "  inputs:",
	                                   "    - \"",
	                                   "  timeout_seconds: ",
	                                   "  port: ",
	                                   "  health_path: \"",
	                                   "  restart_after_task: ",
	                                   "  - name: \"",
	                                   "    command: \"",
	                                   "    restart_after_task: "};
	int comments = 0;

	if (strncmp(text, RECIPE_MANIFEST_MARK, strlen(RECIPE_MANIFEST_MARK)))
		__builtin_trap();
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t i, n = sizeof(keys) / sizeof(keys[0]);

		if (nl == NULL)
			__builtin_trap(); /* every line ends */
		for (i = 0; i < n; i++)
			if (strncmp(l, keys[i], strlen(keys[i])) == 0)
				break;
		if (l[0] == '#')
			comments++;
		else if (i == n)
			__builtin_trap();
		l = nl + 1;
	}
	if (comments != 2)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *s;
	static char err[256];
	const struct recipe *best[RECIPE_MAX_CANDS];
	int conf[RECIPE_MAX_CANDS], n;
	static struct detection d;
	struct facts f;
	size_t len;

	if (recipe_load(err, sizeof(err)) < 0)
		__builtin_trap();
	facts_init(&f);
	s = part(&p, end, &len);
	if (len > 0)
		facts_package_json(&f, s, len);
	s = part(&p, end, &len);
	if (len > 0)
		facts_pyproject(&f, s, len);
	s = part(&p, end, &len);
	facts_requirements(&f, s, len);
	s = part(&p, end, &len);
	for (const char *q = s, *e = s + len; q < e;) {
		const char *nl = memchr(q, '\n', (size_t)(e - q));
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)((nl ? nl : e) - q),
		         q);
		facts_add(&f.files, name);
		q = nl ? nl + 1 : e;
	}
	n = match_dir(&f, best, conf, RECIPE_MAX_CANDS);
	for (int i = 0; i < n; i++) {
		struct buf out;

		memset(&d, 0, sizeof(d));
		if (conf[i] <= 0 || conf[i] > 100 || (i && conf[i] <= 0))
			__builtin_trap();
		match_fill(&d, best[i], conf[i], i % 2 ? "apps/web" : "", &f,
		           i % 3 ? &f : NULL, "");
		check_detection(&d);
		buf_init(&out, 1u << 16);
		if (recipe_manifest(&d, 3000, &out, err, sizeof(err)) < 0)
			__builtin_trap();
		check_manifest(out.data);
		buf_release(&out);
	}
	facts_release(&f);
	return 0;
}
