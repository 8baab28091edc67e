/*
 * client: what every command of the command-line client shares: where
 * the API is and the token (flags, then SANDBOXD_API / SANDBOXD_TOKEN,
 * then the config file `sandboxd login` writes), the HTTP calls (over
 * net/http), how output looks (tables and colour on a terminal, the
 * API's JSON unchanged with --json, ids alone with -q) and how errors
 * end a command: one line `error: <message> (<code>)` on stderr and an
 * exit status from the table below (docs/cli.md).  Single-threaded.
 */
#ifndef CLIENT_CLIENT_H
#define CLIENT_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "client/args.h"
#include "lib/buf.h"
#include "lib/jv.h"

/* Exit statuses (docs/cli.md, "Exit codes"). */
enum {
	CLI_OK = 0,
	CLI_EFAIL = 1,        /* any other error (400, 500, 502 …) */
	CLI_EUSAGE = 2,       /* bad command line */
	CLI_EUNREACHABLE = 3, /* no answer from the API */
	CLI_EAUTH = 4,        /* 401, 403 */
	CLI_ENOTFOUND = 5,    /* 404 */
	CLI_ECONFLICT = 6,    /* 409 */
	CLI_ETOOLARGE = 7,    /* 413 */
	CLI_EUNAVAILABLE = 8, /* 503, 507: try again later */
	CLI_TASK_FAILED = 10,
	CLI_TASK_CANCELLED = 11,
	CLI_TASK_TIMEOUT = 12,
	CLI_ESTREAM = 13,      /* the event stream could not be resumed */
	CLI_INTERRUPTED = 130, /* Ctrl-C while following: the task runs on */
};

#define CLI_DEFAULT_API        "http://127.0.0.1:9090"
#define CLI_MAX_RESPONSE_BYTES (64u << 20)
#define CLI_MAX_UPLOAD_BYTES   (64u << 20) /* `put` reads at most this */
#define CLI_MAX_SECRET_BYTES   4096        /* a key or token typed in */
#define CLI_CONNECT_TIMEOUT_MS 5000
#define CLI_CONFIG_BYTES       (16u << 10)
#define CLI_STREAM_SILENCE_S   45 /* no byte on an event stream: resume */

struct cli {
	char api[1024];
	char token[CLI_MAX_SECRET_BYTES + 1];
	bool token_set;
	bool json;  /* --json */
	bool quiet; /* -q */
	bool fancy; /* stdout a terminal, NO_COLOR unset: colour, spinners */
	bool err_tty;
	size_t width; /* the terminal's columns; 0 when not a terminal */
	/* The spinner (drawn on stderr while a call runs, when fancy). */
	const char *spin_label;
	long long spin_start_ms, spin_last_ms;
	unsigned spin_frame;
	bool spin_drawn;
};

struct cli_resp {
	long status;
	struct buf body;
	struct jv *json; /* the body parsed, when it is JSON */
	char etag[128];
	char trash_id[32]; /* Sandboxd-Trash-Id of a delete, or "" */
};

/* The options every command takes (--api, --token, --json, -q, …). */
extern const struct cli_opt cli_global_opts[];

/* Fills c from the flags in a, the environment and the config file. */
int cli_setup(struct cli *c, const struct cli_args *a);

/*
 * One call.  body: JSON text (NULL for none) or, with raw, bytes of
 * len.  0 when the answer is 2xx; otherwise the error is printed (one
 * line) and the exit status returned.  r is always to be released.
 */
int cli_call(struct cli *c, const char *method, const char *path,
             const struct jv *body, struct cli_resp *r);
int cli_call_raw(struct cli *c, const char *method, const char *path,
                 const void *body, size_t len, struct cli_resp *r);
void cli_resp_release(struct cli_resp *r);
/* The exit status for an HTTP status (>= 400). */
int cli_status_exit(long status);

/* "error: <msg> (<code>)" on stderr; returns rc. */
int cli_fail(int rc, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An escape sequence when fancy ("" otherwise): "1" bold, "31" red … */
const char *cli_sgr(const struct cli *c, const char *sgr);
#define CLI_RESET(c) cli_sgr(c, "0")

/* Prints the body unchanged (--json). */
void cli_print_raw(const struct cli_resp *r);
/* An object as "key  value" lines (nested values as compact JSON). */
void cli_print_object(struct cli *c, const struct jv *o);
/* A table from a buf (render), to stdout. */
struct table;
void cli_print_table(struct cli *c, const struct table *t);
/* A field of o as text ("-" when absent), into tmp when not a string. */
const char *cli_field(const struct jv *o, const char *key, char *tmp,
                      size_t len);

/* The spinner: start with a label, stop before printing anything. */
void cli_spin_start(struct cli *c, const char *label);
void cli_spin_stop(struct cli *c);
void cli_spin_tick(struct cli *c);

/*
 * A secret (a key, a token): from stdin when it is not a terminal
 * (everything up to EOF, surrounding white space trimmed), else a prompt
 * on the terminal with echo off.  Never from argv.  0, or -1 (empty,
 * too long, unreadable).  The caller wipes out with explicit_bzero.
 */
int cli_read_secret(const char *prompt, char *out, size_t len);
/* A line typed at the terminal (echo on), or stdin's first line. */
int cli_read_line(const char *prompt, char *out, size_t len);
/* Asks "… [y/N]" on the terminal; false when stdin is not a terminal. */
bool cli_confirm(const char *question);

/* The config file's path ($XDG_CONFIG_HOME/sandboxd/config …). */
int cli_config_path(char *out, size_t len);
/* Writes api and token to the config file (0600, its directory 0700). */
int cli_config_save(const char *api, const char *token, char *err,
                    size_t errlen);

long long cli_now_ms(void);
/* "2026-11-29T07:00:00Z" as "2026-11-29 07:00" (into tmp). */
const char *cli_short_time(const char *rfc3339, char *tmp, size_t len);

/*
 * A path with each %s argument URL-escaped ("/v1/apps/%s"); only %s is
 * understood.  -1 when it does not fit.
 */
int cli_pathf(char *out, size_t len, const char *fmt, ...);

/*
 * A streamed GET (an event stream).  Each body chunk of a 2xx answer
 * goes to fn (return n to go on, 0 to stop).  extra: one more header
 * ("Last-Event-ID: 4") or NULL.  Stops when *stop turns true.
 * Returns 0 when the transfer ended (*broke: it failed mid-way, why
 * says how), -1 when nothing answered (why says why), or, for an
 * answer >= 400, its exit status with the error printed.
 */
int cli_stream(struct cli *c, const char *path, const char *extra,
               size_t (*fn)(const char *p, size_t n, void *arg), void *arg,
               const atomic_bool *stop, bool *broke, char *why, size_t whylen);

#endif
