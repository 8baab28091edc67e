/*
 * libFuzzer target: the .env file (config/envfile.c), as `sandboxd
 * serve` and the install scripts' .env reach it.  The input is the
 * file, written to a new directory under /tmp.  It loads or is refused
 * with a message; what loads has at most ENV_MAX_ENTRIES entries, each
 * key and value inside the file's text without a newline, a key without
 * '=' or surrounding white space, and the last of a key is what a
 * lookup finds.  Nothing may crash, leak or read out of bounds.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/internal.h"
#include "lib/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz-envfile.XXXXXX", path[64];

static void
cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static bool
inside(const struct envfile *f, const char *s)
{
	return s >= f->text.data && s + strlen(s) <= f->text.data + f->text.len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct envfile f;
	char err[256];
	int fd;

	if (path[0] == '\0') {
		if (mkdtemp(dir) == NULL)
			__builtin_trap();
		snprintf(path, sizeof(path), "%s/.env", dir);
		atexit(cleanup);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		__builtin_trap();
	close(fd);
	memset(&f, 0, sizeof(f));
	buf_init(&f.text, CONFIG_ENV_FILE_BYTES);
	err[0] = '\0';
	if (envfile_load(&f, path, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			__builtin_trap();
	} else {
		if (f.n > ENV_MAX_ENTRIES)
			__builtin_trap();
		for (size_t i = 0; i < f.n; i++) {
			const char *k = f.key[i], *v = f.val[i];

			if (!inside(&f, k) || !inside(&f, v) ||
			    strchr(k, '\n') || strchr(v, '\n') ||
			    strchr(k, '=') ||
			    (k[0] &&
			     (isspace((unsigned char)k[0]) ||
			      isspace((unsigned char)k[strlen(k) - 1]))))
				__builtin_trap();
			/* the last line of a key wins (unless the environment
			 * has it) */
			if (getenv(k) == NULL) {
				const char *got = envfile_lookup(&f, k);
				for (size_t j = i + 1; j < f.n; j++)
					if (strcmp(f.key[j], k) == 0)
						v = f.val[j];
				if (got != v)
					__builtin_trap();
			}
		}
	}
	buf_release(&f.text);
	return 0;
}
