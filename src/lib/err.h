/*
 * struct err: what went wrong, in the terms an API client gets.  Lower
 * layers fill it; exactly one place (api/server.c) turns it into the
 * JSON error envelope.  status 0 means no error.
 *
 * err_codes[] (err.c) is every code the daemon answers with, its usual
 * status and what it means.  A code is given to err_set() and api_fail()
 * as a string literal; scripts/lint (check_errcodes) fails when one of
 * them is not in the table, when a table code is used nowhere, and when
 * the table and docs/api.md disagree.  A new code is a row there and a
 * line in docs/api.md.
 */
#ifndef LIB_ERR_H
#define LIB_ERR_H

#include <stddef.h>

struct err {
	int status;    /* HTTP status */
	char code[32]; /* envelope code, e.g. "conflict" */
	char msg[384];
};

struct err_code {
	const char *code;
	int status; /* the usual one: a few codes answer with several */
	const char *meaning;
};

extern const struct err_code err_codes[];
extern const size_t err_ncodes;

/* Sets e (when e is not NULL) and returns -1, so "return err_set(...)" works.
 */
int err_set(struct err *e, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define ERR_BAD(e, ...)      err_set(e, 400, "invalid_request", __VA_ARGS__)
#define ERR_NOTFOUND(e, ...) err_set(e, 404, "not_found", __VA_ARGS__)
#define ERR_CONFLICT(e, ...) err_set(e, 409, "conflict", __VA_ARGS__)
#define ERR_INTERNAL(e, ...) err_set(e, 500, "internal", __VA_ARGS__)
#define ERR_DOCKER(e, ...)   err_set(e, 503, "docker_unavailable", __VA_ARGS__)

#endif
