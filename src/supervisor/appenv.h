/*
 * appenv.h - the app's environment: the variables the control plane sends
 * with `env` for the web and worker processes (docs/supervisor.md,
 * "The app's environment").  Held in memory only, never written to disk.
 *
 * appenv_parse() is a pure function over a buffer, so it can be
 * unit-tested and fuzzed.  A parsed set owns its bytes; appenv_free()
 * wipes them before freeing.
 */
#ifndef SUPERVISOR_APPENV_H
#define SUPERVISOR_APPENV_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

struct appenv {
	char *buf; /* the entries "NAME=value", each NUL-terminated */
	size_t len;
	size_t n;
	char *list[APPENV_MAX]; /* into buf, sorted by name */
};

/*
 * Parses len bytes of entries "NAME=value", each followed by a NUL, into
 * *e (a copy: body may be wiped afterwards).  Names match
 * [A-Za-z_][A-Za-z0-9_]{0,127}, are unique and not reserved
 * (appenv_reserved); values are any bytes but NUL.  Returns 0; or -1 with
 * *e empty and err set ("env: entry 3: …", "out of memory").
 */
int appenv_parse(const char *body, size_t len, struct appenv *e, char *err,
                 size_t errlen);

/* Whether the name (len bytes) is one the supervisor sets or that would
 * change how programs run: PATH, HOME, LANG, HOST, PORT, LD_*, SANDBOXD_*. */
bool appenv_reserved(const char *name, size_t len);

/* Whether a and b hold the same entries. */
bool appenv_equal(const struct appenv *a, const struct appenv *b);

/* Whether kv ("NAME=…") names a variable of the set. */
bool appenv_has(const struct appenv *e, const char *kv);

/* Wipes and frees the entries; *e is the empty set afterwards. */
void appenv_free(struct appenv *e);

#endif
