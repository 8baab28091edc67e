/*
 * JSON through jansson.  jansson has no run-time depth limit (only its
 * compile-time 2048), so jv_parse() scans the text first and refuses
 * deeper nesting than the caller allows; the scan knows strings and
 * escapes, so brackets inside strings do not count.  Output keeps
 * insertion order and is compact, which the quickstart's sed relies on
 * (no space after ':').  Text that is not valid UTF-8 is refused by
 * jansson on input, so every string we hold is valid UTF-8.  A string
 * we make from bytes that are not (a file name, an error message that
 * quotes one) keeps its valid characters and shows each other byte as
 * the four characters \xNN (jv_new_str, jv_set_str): the key is never
 * dropped, and the bytes stay visible.  Rejected: U+FFFD for each, as
 * jv_new_str_lossy does for an agent's text, which hides which bytes
 * they were and makes two names look the same.
 */
#include "lib/jv.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "lib/utf8.h"

#define J(v) ((json_t *)(v))
#define W(v) ((struct jv *)(v))

static bool
jv_depth_ok(const char *s, size_t len, int max_depth)
{
	int depth = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return false;
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	return true;
}

struct jv *
jv_parse(const char *text, size_t len, int max_depth, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *v;

	if (!jv_depth_ok(text, len, max_depth)) {
		snprintf(err, errlen, "JSON nested deeper than %d levels",
		         max_depth);
		return NULL;
	}
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
	               &jerr);
	if (v == NULL)
		snprintf(err, errlen, "invalid JSON: %s (at byte %d)",
		         jerr.text, jerr.position);
	return W(v);
}

void
jv_free(struct jv *v)
{
	json_decref(J(v));
}

/* A missing value (jv_get of an absent key, NULL) is null. */
enum jv_type
jv_type(const struct jv *v)
{
	if (v == NULL)
		return JV_NULL;
	switch (json_typeof(J(v))) {
	case JSON_OBJECT:
		return JV_OBJECT;
	case JSON_ARRAY:
		return JV_ARRAY;
	case JSON_STRING:
		return JV_STRING;
	case JSON_INTEGER:
		return JV_INT;
	case JSON_REAL:
		return JV_REAL;
	case JSON_TRUE:
	case JSON_FALSE:
		return JV_BOOL;
	case JSON_NULL:
	default:
		return JV_NULL;
	}
}

const char *
jv_type_name(enum jv_type t)
{
	static const char *const names[] = {
	    [JV_NULL] = "null",     [JV_BOOL] = "boolean",
	    [JV_INT] = "integer",   [JV_REAL] = "number",
	    [JV_STRING] = "string", [JV_ARRAY] = "array",
	    [JV_OBJECT] = "object",
	};
	return names[t];
}

struct jv *
jv_get(const struct jv *obj, const char *key)
{
	return W(json_object_get(J(obj), key));
}

const char *
jv_str(const struct jv *v)
{
	return json_string_value(J(v));
}

size_t
jv_str_len(const struct jv *v)
{
	return json_string_length(J(v));
}

int64_t
jv_int(const struct jv *v)
{
	return (int64_t)json_integer_value(J(v));
}

double
jv_num(const struct jv *v)
{
	return json_number_value(J(v));
}

bool
jv_is_true(const struct jv *v)
{
	return json_is_true(J(v));
}

size_t
jv_len(const struct jv *arr)
{
	return json_array_size(J(arr));
}

struct jv *
jv_at(const struct jv *arr, size_t i)
{
	return W(json_array_get(J(arr), i));
}

bool
jv_each(const struct jv *obj, void **it, const char **key, struct jv **val)
{
	*it =
	    *it ? json_object_iter_next(J(obj), *it) : json_object_iter(J(obj));
	if (*it == NULL)
		return false;
	*key = json_object_iter_key(*it);
	*val = W(json_object_iter_value(*it));
	return true;
}

struct jv *
jv_obj(void)
{
	return W(json_object());
}

struct jv *
jv_arr(void)
{
	return W(json_array());
}

/* s with each byte that is not part of a well-formed character as
 * "\xNN"; NULL only when s is NULL or memory runs out. */
static json_t *
str_escaped(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = s ? strlen(s) : 0;
	struct buf b;
	json_t *v;

	if (s == NULL)
		return NULL;
	buf_init(&b, len * 4 + 1);
	for (size_t i = 0; i < len;) {
		size_t n = utf8_char_len(s + i, len - i);
		if (n == 0) {
			unsigned char c = (unsigned char)s[i];
			char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
			buf_append(&b, esc, sizeof(esc));
			i++;
		} else {
			buf_append(&b, s + i, n);
			i += n;
		}
	}
	v = json_stringn(b.data ? b.data : "", b.len);
	buf_release(&b);
	return v;
}

/* jansson's string, or the escaped one when s is not UTF-8. */
static json_t *
str_new(const char *s)
{
	json_t *v = json_string(s);

	return v ? v : str_escaped(s);
}

struct jv *
jv_new_str(const char *s)
{
	return W(str_new(s));
}

struct jv *
jv_new_null(void)
{
	return W(json_null());
}

struct jv *
jv_copy(struct jv *v)
{
	return W(json_incref(J(v)));
}

struct jv *
jv_new_str_lossy(const char *s, size_t len)
{
	struct buf b;
	struct jv *v;

	buf_init(&b, len * 3 + 1);
	for (size_t i = 0; i < len;) {
		size_t n = utf8_char_len(s + i, len - i);
		if (n == 0 || s[i] == '\0') {
			buf_append(&b, "\xef\xbf\xbd", 3);
			i++;
		} else {
			buf_append(&b, s + i, n);
			i += n;
		}
	}
	v = W(json_stringn(b.data ? b.data : "", b.len));
	buf_release(&b);
	return v;
}

struct jv *
jv_new_int(int64_t i)
{
	return W(json_integer((json_int_t)i));
}

void
jv_set(struct jv *obj, const char *key, struct jv *steal)
{
	if (steal)
		json_object_set_new(J(obj), key, J(steal));
}

void
jv_set_str(struct jv *obj, const char *key, const char *s)
{
	json_t *v = s ? str_new(s) : NULL;

	if (v)
		json_object_set_new(J(obj), key, v);
}

void
jv_set_int(struct jv *obj, const char *key, int64_t i)
{
	json_object_set_new(J(obj), key, json_integer((json_int_t)i));
}

void
jv_set_real(struct jv *obj, const char *key, double d)
{
	json_t *r = json_real(d);

	if (r)
		json_object_set_new(J(obj), key, r);
}

void
jv_set_bool(struct jv *obj, const char *key, bool b)
{
	json_object_set_new(J(obj), key, json_boolean(b));
}

void
jv_push(struct jv *arr, struct jv *steal)
{
	if (steal)
		json_array_append_new(J(arr), J(steal));
}

static int
jv_dump_cb(const char *chunk, size_t size, void *data)
{
	return buf_append(data, chunk, size);
}

int
jv_dump(const struct jv *v, struct buf *out)
{
	return json_dump_callback(J(v), jv_dump_cb, out,
	                          JSON_COMPACT | JSON_PRESERVE_ORDER |
	                              JSON_ENCODE_ANY);
}
