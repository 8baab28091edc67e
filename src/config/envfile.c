/*
 * The .env file (internal.h): KEY=VALUE lines read into one buffer and
 * cut in place; '#' starts a comment line, an optional "export " prefix
 * and one pair of matching quotes around the value are accepted.  A
 * lookup asks the process environment first, then the file's last line
 * of that key.  Apart from config.c so that the hooks (hooks.c) and the
 * table's loop both read values without calling each other.
 */
#include "config/internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/limits.h"

char *
envfile_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
envfile_parse_line(struct envfile *f, char *line, int lineno, char *err,
                   size_t errlen)
{
	char *eq, *key, *val;
	size_t vlen;

	line = envfile_trim(line);
	if (*line == '\0' || *line == '#')
		return 0;
	if (strncmp(line, "export ", 7) == 0)
		line = envfile_trim(line + 7);
	eq = strchr(line, '=');
	if (eq == NULL) {
		snprintf(err, errlen, "line %d: expected KEY=VALUE", lineno);
		return -1;
	}
	*eq = '\0';
	key = envfile_trim(line);
	val = envfile_trim(eq + 1);
	vlen = strlen(val);
	if (vlen >= 2 && (val[0] == '"' || val[0] == '\'') &&
	    val[vlen - 1] == val[0]) {
		val[vlen - 1] = '\0';
		val++;
	}
	if (f->n == ENV_MAX_ENTRIES) {
		snprintf(err, errlen, "more than %d entries", ENV_MAX_ENTRIES);
		return -1;
	}
	f->key[f->n] = key;
	f->val[f->n] = val;
	f->n++;
	return 0;
}

int
envfile_load(struct envfile *f, const char *path, char *err, size_t errlen)
{
	char chunk[4096], *line, *next;
	int fd, lineno = 1;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (buf_append(&f->text, chunk, (size_t)n) < 0) {
			close(fd);
			snprintf(err, errlen, "%s: larger than %u bytes", path,
			         CONFIG_ENV_FILE_BYTES);
			return -1;
		}
	}
	close(fd);
	if (f->text.data == NULL)
		return 0;
	for (line = f->text.data; line; line = next, lineno++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (envfile_parse_line(f, line, lineno, err, errlen) < 0)
			return -1;
	}
	return 0;
}

const char *
envfile_lookup(const struct envfile *f, const char *name)
{
	const char *v = getenv(name);

	if (v)
		return v;
	for (size_t i = f->n; i > 0; i--)
		if (strcmp(f->key[i - 1], name) == 0)
			return f->val[i - 1];
	return NULL;
}
