/*
 * The client's option parser (args.h).  Options are looked up in the
 * command's table first, then in the global one, so a command may give
 * a global name its own meaning.  Short options do not bundle (-qy is
 * refused): the client has few of them and a clear error beats a guess.
 */
#include "client/args.h"

#include <stdio.h>
#include <string.h>

static const struct cli_opt *
find_in(const struct cli_opt *t, const char *name, size_t len, char short_name)
{
	for (; t && t->name; t++) {
		if (short_name && t->short_name == short_name)
			return t;
		if (!short_name && strlen(t->name) == len &&
		    strncmp(t->name, name, len) == 0)
			return t;
	}
	return NULL;
}

static int
add_set(struct cli_args *a, const struct cli_opt *o, const char *value,
        char *err, size_t errlen)
{
	if (a->nset >= CLI_MAX_WORDS) {
		snprintf(err, errlen, "too many options");
		return -1;
	}
	a->set[a->nset].opt = o;
	a->set[a->nset].value = value;
	a->nset++;
	return 0;
}

/* One option word at argv[*i]; *i moves past its value when it takes one. */
static int
parse_opt(const struct cli_opt *opts, const struct cli_opt *globals, int argc,
          char **argv, int *i, struct cli_args *a, char *err, size_t errlen)
{
	const char *w = argv[*i], *name, *eq, *value = NULL;
	const struct cli_opt *o;
	size_t len;
	char sh = 0;

	if (w[1] == '-') {
		name = w + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		if (eq)
			value = eq + 1;
	} else {
		if (w[2] != '\0') {
			snprintf(err, errlen, "unknown option %s", w);
			return -1;
		}
		name = w + 1;
		len = 1;
		sh = w[1];
	}
	o = find_in(opts, name, len, sh);
	if (o == NULL)
		o = find_in(globals, name, len, sh);
	if (o == NULL) {
		snprintf(err, errlen, "unknown option %.*s",
		         (int)(name - w + len), w);
		return -1;
	}
	if (!o->value && value) {
		snprintf(err, errlen, "--%s takes no value", o->name);
		return -1;
	}
	if (o->value && value == NULL) {
		if (*i + 1 >= argc) {
			snprintf(err, errlen, "--%s needs a value", o->name);
			return -1;
		}
		value = argv[++*i];
	}
	return add_set(a, o, value, err, errlen);
}

int
cli_args_parse(const struct cli_opt *opts, const struct cli_opt *globals,
               int argc, char **argv, struct cli_args *a, char *err,
               size_t errlen)
{
	bool only_words = false;

	memset(a, 0, sizeof(*a));
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];

		if (!only_words && strcmp(w, "--") == 0) {
			only_words = true;
			continue;
		}
		if (!only_words && w[0] == '-' && w[1] != '\0') {
			if (parse_opt(opts, globals, argc, argv, &i, a, err,
			              errlen) < 0)
				return -1;
			continue;
		}
		if (a->npos >= CLI_MAX_WORDS) {
			snprintf(err, errlen, "too many arguments");
			return -1;
		}
		a->pos[a->npos++] = w;
	}
	return 0;
}

const char *
cli_args_get(const struct cli_args *a, const char *name)
{
	const char *v = NULL;

	for (int i = 0; i < a->nset; i++)
		if (strcmp(a->set[i].opt->name, name) == 0)
			v = a->set[i].value;
	return v;
}

bool
cli_args_has(const struct cli_args *a, const char *name)
{
	for (int i = 0; i < a->nset; i++)
		if (strcmp(a->set[i].opt->name, name) == 0)
			return true;
	return false;
}

int
cli_args_all(const struct cli_args *a, const char *name, const char **out,
             int max)
{
	int n = 0;

	for (int i = 0; i < a->nset && n < max; i++)
		if (strcmp(a->set[i].opt->name, name) == 0)
			out[n++] = a->set[i].value;
	return n;
}
