/*
 * libFuzzer target: the API's router (api/routes.c) on a client's
 * method and path.  The first byte picks the method, the rest is the
 * path.  A route found matches the method (or is GET for HEAD); its
 * {id} segments, unless the id was reported malformed, are canonical
 * ids; a path no route knows lists no method to allow; the Allow list
 * stays within its buffer.  Nothing may crash or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/routes.h"
#include "lib/ulid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {
	    "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "BREW"};
	static struct req r;
	char allow[128], canon[ULID_LEN + 1];
	const struct route *rt;
	bool known, bad = false;
	char *path;

	if (size == 0 || size > 4096)
		return 0;
	path = malloc(size);
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	memset(&r, 0, sizeof(r));
	r.method = methods[data[0] % 8];
	r.path = path;
	rt = api_route_find(&r, &known, &bad, allow, sizeof(allow));
	if (memchr(allow, '\0', sizeof(allow)) == NULL ||
	    memchr(r.name, '\0', sizeof(r.name)) == NULL)
		__builtin_trap();
	if (rt != NULL) {
		if (!known)
			__builtin_trap();
		if (strcmp(rt->method, r.method) != 0 &&
		    !(strcmp(r.method, "HEAD") == 0 &&
		      strcmp(rt->method, "GET") == 0))
			__builtin_trap();
		for (int i = 0; i < 2 && !bad; i++)
			if (r.ids[i][0] && (!ulid_parse(r.ids[i], canon) ||
			                    strcmp(canon, r.ids[i])))
				__builtin_trap();
	} else if (!known && allow[0] != '\0') {
		__builtin_trap();
	}
	free(path);
	return 0;
}
