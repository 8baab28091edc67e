/*
 * libFuzzer target: the supervisor's run.conf parser.  Any input is
 * either refused with a "run.conf line N: " or "run.conf: " message, or
 * gives records that satisfy every rule of docs/supervisor.md.  The
 * supervisor is its own binary, so its parser is included directly.
 */
#include <stdint.h>
#include <string.h>

#include "../../src/supervisor/conf.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_rec(const struct conf_rec *r)
{
	struct conf_rec copy;

	if (r->cmd == NULL || r->cmd[0] == '\0' || strchr(r->cmd, '\n'))
		__builtin_trap();
	if (r->kind == CONF_WEB &&
	    (r->port < 1 || r->port > 65535 || r->path == NULL ||
	     r->path[0] != '/' || strcmp(r->name, "web") != 0))
		__builtin_trap();
	if (r->kind == CONF_WORKER &&
	    (r->name[0] == '\0' || strcmp(r->name, "web") == 0 ||
	     strspn(r->name, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
	         strlen(r->name)))
		__builtin_trap();
	if (r->kind == CONF_BUILD &&
	    (r->timeout_s < 1 || r->timeout_s > CONF_BUILD_MAX_S))
		__builtin_trap();
	if (conf_rec_copy(&copy, r) == 0) {
		if (!conf_rec_equal(&copy, r))
			__builtin_trap();
		conf_rec_free(&copy);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct conf c;
	size_t i;

	if (conf_parse((const char *)data, size, &c, err, sizeof(err)) == -1) {
		if (c.n != 0 || strncmp(err, "run.conf", 8) != 0)
			__builtin_trap();
		return 0;
	}
	if (c.n > CONF_MAX_RECORDS)
		__builtin_trap();
	for (i = 0; i < c.n; i++)
		check_rec(&c.recs[i]);
	conf_free(&c);
	return 0;
}
