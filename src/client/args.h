/*
 * args: the client's option parser, driven by a table per command.
 * Options may come before, between or after the positional words:
 * `--name value`, `--name=value`, `-x value`, `-x`, and `--` ends the
 * options.  An option a command's table and the global table do not
 * know is a usage error, as is a value missing or given to a flag.
 * The parse borrows argv's strings; nothing is allocated.
 */
#ifndef CLIENT_ARGS_H
#define CLIENT_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_MAX_WORDS 16 /* positional words and option values each */

struct cli_opt {
	const char *name; /* long name, without "--" */
	char short_name;  /* 0: none */
	bool value;       /* takes a value */
	const char *help; /* for `help CMD`; "VALUE: text" when value */
};

struct cli_args {
	const char *pos[CLI_MAX_WORDS];
	int npos;
	struct {
		const struct cli_opt *opt;
		const char *value; /* NULL for a flag */
	} set[CLI_MAX_WORDS];
	int nset;
};

/*
 * Parses argv[0..argc) against opts (NULL-name terminated; may be NULL)
 * and globals.  0, or -1 with err set to a one-line reason.
 */
int cli_args_parse(const struct cli_opt *opts, const struct cli_opt *globals,
                   int argc, char **argv, struct cli_args *a, char *err,
                   size_t errlen);
/* The last value of option name, or NULL. */
const char *cli_args_get(const struct cli_args *a, const char *name);
/* Whether option name was given (flag or value). */
bool cli_args_has(const struct cli_args *a, const char *name);
/* Every value of name, in order, into out (at most max); the count. */
int cli_args_all(const struct cli_args *a, const char *name, const char **out,
                 int max);

#endif
