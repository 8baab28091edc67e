/*
 * JSON values ("jv"): the only door to the JSON library (jansson, whose
 * names take the json_ prefix).  A struct jv is reference-counted by the
 * library; jv_free() drops the caller's reference.  Getters return
 * borrowed pointers valid while the parent lives.  Setters that take a
 * struct jv * steal that reference.
 */
#ifndef LIB_JV_H
#define LIB_JV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

struct jv;

enum jv_type {
	JV_NULL,
	JV_BOOL,
	JV_INT,
	JV_REAL,
	JV_STRING,
	JV_ARRAY,
	JV_OBJECT,
};

/*
 * Parses exactly one JSON value (trailing bytes other than whitespace are
 * an error).  Nesting deeper than max_depth is refused before the library
 * sees the text.  On error returns NULL and writes a message to err.
 */
struct jv *jv_parse(const char *text, size_t len, int max_depth, char *err,
                    size_t errlen);
void jv_free(struct jv *v);

enum jv_type jv_type(const struct jv *v);
const char *jv_type_name(enum jv_type t);
struct jv *jv_get(const struct jv *obj, const char *key);
const char *jv_str(const struct jv *v); /* NULL unless a string */
size_t jv_str_len(const struct jv *v);
int64_t jv_int(const struct jv *v); /* 0 unless an integer */
/* An integer or real as a double; 0 for anything else. */
double jv_num(const struct jv *v);
bool jv_is_true(const struct jv *v);
size_t jv_len(const struct jv *arr);
struct jv *jv_at(const struct jv *arr, size_t i);
/* Walks an object: start with *it = NULL; false at the end. */
bool jv_each(const struct jv *obj, void **it, const char **key,
             struct jv **val);

struct jv *jv_obj(void);
struct jv *jv_arr(void);
/* A string; bytes of s that are not UTF-8 show as the text "\xNN". */
struct jv *jv_new_str(const char *s);
struct jv *jv_new_int(int64_t i);
struct jv *jv_new_null(void);
/* A string from len bytes; bytes that are not UTF-8 become U+FFFD. */
struct jv *jv_new_str_lossy(const char *s, size_t len);
/* A new reference to v (values are immutable once built). */
struct jv *jv_copy(struct jv *v);
/* Setters ignore a NULL string or value (the key is then left out);
 * jv_set_str escapes as jv_new_str does, so a string is never lost. */
void jv_set(struct jv *obj, const char *key, struct jv *steal);
void jv_set_str(struct jv *obj, const char *key, const char *s);
void jv_set_int(struct jv *obj, const char *key, int64_t i);
/* A real (not NaN or infinite: those leave the key out). */
void jv_set_real(struct jv *obj, const char *key, double d);
void jv_set_bool(struct jv *obj, const char *key, bool b);
void jv_push(struct jv *arr, struct jv *steal);

/* Compact text (no spaces, keys in insertion order) appended to out. */
int jv_dump(const struct jv *v, struct buf *out);

#endif
