/*
 * conf.h - run.conf, the processes the supervisor runs (docs/supervisor.md).
 *
 * conf_parse() is a pure function over a buffer: no I/O, no globals, so it
 * can be unit-tested and fuzzed.  A parsed conf owns its strings; release
 * it with conf_free().
 */
#ifndef SUPERVISOR_CONF_H
#define SUPERVISOR_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

enum conf_kind {
	CONF_WEB,
	CONF_WORKER,
	CONF_BUILD,
	CONF_INSTALL,
};

struct conf_rec {
	enum conf_kind kind;
	char name[CONF_NAME_MAX + 1]; /* "web", the worker's, "build" */
	unsigned port;                /* web only */
	char *path;                   /* web only: health path */
	bool restart_after_task;      /* web and worker */
	unsigned timeout_s;           /* build and install */
	char key[CONF_KEY_LEN + 1];   /* install only: 64 lower-case hex */
	char *cmd;                    /* given to /bin/sh -c */
};

struct conf {
	struct conf_rec recs[CONF_MAX_RECORDS];
	size_t n;
};

/*
 * Parses len bytes of run.conf into *c.  Returns 0; or -1 with *c empty and
 * err set to "run.conf line N: what is wrong" (or "out of memory").
 */
int conf_parse(const char *buf, size_t len, struct conf *c, char *err,
               size_t errlen);

/* Releases the strings of every record and empties *c. */
void conf_free(struct conf *c);

/* Deep copy of a record; -1 when out of memory. */
int conf_rec_copy(struct conf_rec *dst, const struct conf_rec *src);

/* Releases the strings of one record. */
void conf_rec_free(struct conf_rec *r);

/* Whether two records describe the same process (every field equal). */
bool conf_rec_equal(const struct conf_rec *a, const struct conf_rec *b);

/* "web", "worker", "build", "install" */
const char *conf_kind_name(enum conf_kind kind);

#endif
