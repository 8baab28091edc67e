/*
 * libFuzzer target: a private preview's link as its visitor sends it to
 * the edge (edge/private.c): the request target (origin- or
 * absolute-form), its query's "code" and "next" parameters, and next=
 * percent-decoded into the path the visitor is sent on to.  The path
 * found lies inside the target; a parameter's value lies inside the
 * query; the landing path is "/" or a path on this host: it starts with
 * one "/" (never "//", which a browser reads as another host), holds
 * printable ASCII only, no space or backslash, and fits
 * PVAUTH_PATH_MAX.  Nothing may crash or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edge/internal.h"
#include "preview/pvauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_next(const char *v, size_t n)
{
	char out[PVAUTH_PATH_MAX + 1];
	size_t k;

	edge_next_path(v, n, out);
	k = strlen(out);
	if (k == 0 || k > PVAUTH_PATH_MAX || out[0] != '/' ||
	    (k > 1 && (out[1] == '/' || out[1] == '\\')))
		__builtin_trap();
	for (size_t i = 0; i < k; i++)
		if ((unsigned char)out[i] <= 0x20 ||
		    (unsigned char)out[i] >= 0x7f || out[i] == '\\')
			__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = malloc(size ? size : 1);
	const char *path, *v;
	size_t n = size, vlen;

	memcpy(url, data, size);
	path = url;
	edge_target_path(&path, &n);
	if (path < url || path + n != url + size)
		__builtin_trap();
	for (int i = 0; i < 2; i++) {
		if (!edge_query_param(path, n, i ? "next" : "code", &v, &vlen))
			continue;
		if (v < path || v + vlen > path + n)
			__builtin_trap();
		if (i)
			check_next(v, vlen);
	}
	check_next(url, size);
	free(url);
	return 0;
}
