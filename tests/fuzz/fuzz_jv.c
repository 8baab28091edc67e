/*
 * libFuzzer target: JSON request bodies.  Every API body goes through
 * jv_parse() with the API depth limit, then is walked and re-encoded; none
 * of it may crash, leak or read out of bounds, whatever the bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "lib/jv.h"
#include "lib/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
walk(const struct jv *v, int depth)
{
	const char *key;
	struct jv *val;
	void *it = NULL;

	if (depth > API_MAX_JSON_DEPTH + 1)
		__builtin_trap();
	if (jv_type(v) == JV_ARRAY)
		for (size_t i = 0; i < jv_len(v); i++)
			walk(jv_at(v, i), depth + 1);
	else if (jv_type(v) == JV_OBJECT)
		while (jv_each(v, &it, &key, &val))
			walk(val, depth + 1);
	else if (jv_type(v) == JV_STRING)
		(void)jv_str_len(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[160];
	struct buf out;
	struct jv *v;

	v = jv_parse((const char *)data, size, API_MAX_JSON_DEPTH, err,
	             sizeof(err));
	if (v == NULL)
		return 0;
	walk(v, 1);
	buf_init(&out, 4u << 20);
	jv_dump(v, &out);
	buf_release(&out);
	jv_free(v);
	return 0;
}
