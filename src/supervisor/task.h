/*
 * task.h - the formats of an agent task's files (docs/supervisor.md,
 * "Tasks"): task ids, the argv and env files the control plane writes,
 * the text of steps records, the steps file read back, the checkpoint's
 * output, the changed-files list and the cgroup's OOM-kill count.
 *
 * Pure functions over buffers: no I/O, no globals, so each can be
 * unit-tested and fuzzed.  Parsers hand out pointers into the caller's
 * buffer.
 */
#ifndef SUPERVISOR_TASK_H
#define SUPERVISOR_TASK_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

#define TASK_ID_LEN  26
#define TASK_SHA_MAX 64 /* hex digits of a SHA-256 commit id */

/* A ULID as the control plane makes them: exactly TASK_ID_LEN characters
 * of Crockford base32, upper case, the first one 0-7. */
bool task_id_ok(const char *s, size_t len);

/* A timeout in seconds, 1-TASK_TIMEOUT_MAX_S, decimal without sign or
 * leading zero.  Returns it, or 0 when s is not one. */
unsigned task_timeout_parse(const char *s, size_t len);

/*
 * The argv file, len bytes of buf: arguments each terminated by a NUL,
 * 1 to TASK_ARGV_MAX of them, the first not empty.  Fills argv[] (room
 * for TASK_ARGV_MAX + 1) with pointers into buf and a final NULL.
 * Returns the count, or -1 with err set.  The size limit is the reader's.
 */
int task_argv_parse(char *buf, size_t len, char **argv, char *err,
                    size_t errlen);

/*
 * The env file: 0 to TASK_ENV_MAX entries "NAME=value", each terminated by
 * a NUL, NAME matching [A-Za-z_][A-Za-z0-9_]*.  Fills env[] (room for
 * TASK_ENV_MAX + 1) like task_argv_parse().  Returns the count or -1.
 */
int task_env_parse(char *buf, size_t len, char **env, char *err, size_t errlen);

/* Whether an entry of the supervisor's own environment is kept from the
 * agent: a name starting with SANDBOXD_INIT_ or ending, in any case, in
 * _KEY, _TOKEN, _SECRET, _PASSWORD, _CREDENTIALS or _APIKEY; or no
 * '=' at all. */
bool task_env_withheld(const char *kv);

/* Whether two "NAME=value" entries (or an entry and a "NAME=") have the
 * same name. */
bool task_env_same(const char *a, const char *b);

/*
 * n bytes of s as a text field of a steps record, into dst (room for
 * TASK_TEXT_MAX + 1): control characters (C0, DEL, C1) become spaces,
 * invalid UTF-8 becomes U+FFFD, and it is cut to at most TASK_TEXT_MAX
 * bytes between characters.  Returns the length; dst is NUL-terminated.
 */
size_t task_text(char *dst, const char *s, size_t n);

/* What a steps file says about its task. */
struct task_steps {
	bool start;                 /* a start record */
	bool end;                   /* an end record */
	char sha[TASK_SHA_MAX + 1]; /* the checkpoint's, or "" */
};

/* Reads the records of a steps file (a last line without its '\n'
 * counts too). */
void task_steps_scan(const char *buf, size_t len, struct task_steps *st);

/* Whether s (len bytes) is a commit id: 40 or 64 lower-case hex digits. */
bool task_sha_ok(const char *s, size_t len);

/* The checkpoint's stdout: a commit id and a newline.  Copies it to sha
 * (room for TASK_SHA_MAX + 1) and returns true, or false. */
bool task_sha_parse(const char *buf, size_t len, char *sha);

/* The last line of buf with anything but spaces in it: sets *line and
 * returns its length (without '\n' or '\r'); 0 when there is none. */
size_t task_last_line(const char *buf, size_t len, const char **line);

/* The "oom_kill N" line of cgroup v2 memory.events or cgroup v1
 * memory.oom_control: N, or -1 when there is none. */
long long task_oom_parse(const char *buf, size_t len);

/*
 * git's NUL-separated path list turned into the files list, one path per
 * line, as the bytes stream in.  A path containing a newline, or longer
 * than TASK_NAME_MAX, is skipped; an unterminated last path is dropped.
 */
typedef void task_names_fn(void *ctx, const char *line, size_t len);

struct task_names {
	char name[TASK_NAME_MAX + 1]; /* the path so far, room for '\n' */
	size_t len;
	bool skip; /* the path so far is not listed */
};

void task_names_init(struct task_names *s);

/* Feeds n bytes; calls emit with each complete path and its '\n'. */
void task_names_feed(struct task_names *s, const char *buf, size_t n,
                     task_names_fn *emit, void *ctx);

#endif
