/*
 * libFuzzer target: the app-relative paths of the files API
 * (ws/wsfs.c's wsfs_clean), which every client's path goes through
 * before anything is opened.  The first byte sets allow_root and the
 * size of the output; the rest is the path.  A path it accepts is
 * relative, has no "." or ".." component, no empty one and no NUL, fits
 * WSFS_MAX_PATH and WSFS_MAX_DEPTH, and cleans to itself; a refusal
 * says why.  Nothing may crash or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "ws/wsfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_clean(const char *p)
{
	size_t depth = 0, n = strlen(p);
	const char *s = p;

	if (n > WSFS_MAX_PATH || p[0] == '/')
		__builtin_trap();
	while (n > 0 && *s) {
		const char *slash = strchr(s, '/');
		size_t len = slash ? (size_t)(slash - s) : strlen(s);

		if (len == 0 || (len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.'))
			__builtin_trap();
		depth++;
		s += len + (slash != NULL);
		if (slash && *s == '\0')
			__builtin_trap(); /* a trailing slash */
	}
	if (depth > WSFS_MAX_DEPTH)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[WSFS_MAX_PATH + 1], again[WSFS_MAX_PATH + 1];
	size_t outlen;
	bool root;
	char *in;
	struct err e = {0};

	if (size == 0)
		return 0;
	root = data[0] & 1;
	outlen = data[0] & 2 ? sizeof(out) : 1 + data[0] % 64;
	/* an exact copy, so ASan sees a read past its end */
	in = malloc(size - 1 ? size - 1 : 1);
	memcpy(in, data + 1, size - 1);
	if (wsfs_clean(in, size - 1, out, outlen, root, &e) < 0) {
		if (e.msg[0] == '\0' || e.status < 400)
			__builtin_trap();
	} else {
		if (memchr(out, '\0', outlen) == NULL)
			__builtin_trap();
		check_clean(out);
		if (wsfs_clean(out, strlen(out), again, sizeof(again), root,
		               &e) < 0 ||
		    strcmp(out, again) != 0)
			__builtin_trap();
	}
	free(in);
	return 0;
}
