/*
 * appenv.c - the app's environment, as the control plane sends it.
 *
 * The control plane reads the app's config entries marked expose_env
 * (sensitive ones opened from its vault) and sends them with `env` after
 * every boot and every change.  They live here, in the supervisor's
 * memory, and reach the web and worker processes through their envp:
 * never a file in the workspace, which belongs to the sandbox user and is
 * copied into backups.  The price: a supervisor that restarts has none
 * until the control plane sends them again, which it does after every
 * container start.
 *
 * A set is one copy of the request's body plus pointers into it, sorted
 * by name: two sets are equal when their sorted entries are, so the order
 * the control plane lists them in does not count as a change.  Bytes are
 * wiped before they are freed.
 *
 * Rejected: merging into the supervisor's own environ (the agent of a
 * task, the build and git steps inherit environ, and they must not see
 * the app's secrets); a file in .sandboxd (the workspace is the sandbox
 * user's and is backed up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appenv.h"

bool
appenv_reserved(const char *name, size_t len)
{
	static const char *const exact[] = {"PATH", "HOME", "LANG", "HOST",
	                                    "PORT"};
	static const char *const prefix[] = {"LD_", "SANDBOXD_"};
	size_t i, pl;

	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (len == strlen(exact[i]) && memcmp(name, exact[i], len) == 0)
			return true;
	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++) {
		pl = strlen(prefix[i]);
		if (len >= pl && memcmp(name, prefix[i], pl) == 0)
			return true;
	}
	return false;
}

static bool
appenv_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > APPENV_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Checks entry number k (1-based), a NUL-terminated string. */
static int
appenv_check(const char *s, size_t k, char *err, size_t errlen)
{
	const char *eq = strchr(s, '=');
	size_t len;

	if (eq == NULL || eq == s) {
		snprintf(err, errlen, "env: entry %zu is not NAME=value", k);
		return -1;
	}
	len = (size_t)(eq - s);
	if (!appenv_name_ok(s, len)) {
		snprintf(err, errlen,
		         "env: entry %zu: the name must match "
		         "[A-Za-z_][A-Za-z0-9_]{0,127}",
		         k);
		return -1;
	}
	/* The name is plain ASCII now: safe to echo. */
	if (appenv_reserved(s, len)) {
		snprintf(err, errlen, "env: entry %zu: %.*s is reserved", k,
		         (int)len, s);
		return -1;
	}
	return 0;
}

/* By name: '=' ends a name and sorts before every name character. */
static int
appenv_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	while (*x == *y && *x != '=') {
		x++;
		y++;
	}
	return (*x == '=' ? 0 : (unsigned char)*x) -
	       (*y == '=' ? 0 : (unsigned char)*y);
}

static int
appenv_fail(struct appenv *e, int rc)
{
	appenv_free(e);
	return rc;
}

int
appenv_parse(const char *body, size_t len, struct appenv *e, char *err,
             size_t errlen)
{
	size_t off = 0, i;
	const char *s;

	memset(e, 0, sizeof(*e));
	if (len > 0 && body[len - 1] != '\0') {
		snprintf(err, errlen,
		         "env: the last entry is not NUL-terminated");
		return -1;
	}
	e->buf = malloc(len > 0 ? len : 1);
	if (e->buf == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(e->buf, body, len);
	e->len = len;
	while (off < len) {
		if (e->n == APPENV_MAX) {
			snprintf(err, errlen, "env: more than %d entries",
			         APPENV_MAX);
			return appenv_fail(e, -1);
		}
		s = e->buf + off;
		if (appenv_check(s, e->n + 1, err, errlen) == -1)
			return appenv_fail(e, -1);
		e->list[e->n++] = e->buf + off;
		off += strlen(s) + 1;
	}
	qsort(e->list, e->n, sizeof(e->list[0]), appenv_cmp);
	for (i = 1; i < e->n; i++) {
		if (appenv_cmp(&e->list[i - 1], &e->list[i]) == 0) {
			snprintf(err, errlen, "env: %.*s is given twice",
			         (int)(strchr(e->list[i], '=') - e->list[i]),
			         e->list[i]);
			return appenv_fail(e, -1);
		}
	}
	return 0;
}

bool
appenv_equal(const struct appenv *a, const struct appenv *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->list[i], b->list[i]) != 0)
			return false;
	return true;
}

bool
appenv_has(const struct appenv *e, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t i, len;

	if (eq == NULL)
		return false;
	len = (size_t)(eq - kv) + 1; /* with the '=' */
	for (i = 0; i < e->n; i++)
		if (strncmp(e->list[i], kv, len) == 0)
			return true;
	return false;
}

void
appenv_free(struct appenv *e)
{
	if (e->buf != NULL) {
		explicit_bzero(e->buf, e->len);
		free(e->buf);
	}
	memset(e, 0, sizeof(*e));
}
