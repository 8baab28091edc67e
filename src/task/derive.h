/*
 * derive: a task's events from the files the supervisor writes in its
 * task directory (docs/supervisor.md, "Tasks"): `steps`, one record per
 * pipeline step, and `agent.out`, the agent CLI's stream (parsed by
 * src/agent/), plus `files`, `build.log` and `agent.log` when a record
 * points at them.
 *
 * A pure function of those files' contents: no locks, no store, no
 * globals.  The caller owns a struct derive, hands it the task
 * directory's fd, and calls derive_step whenever the files may have
 * grown; every event the files allow so far reaches the sink, in order,
 * however the reads were cut.  Deriving again from derive_reset yields
 * the same events.
 *
 * The bytes are the sandbox's to forge: files are opened beneath the
 * directory fd without following links, non-blocking, regular files
 * only, read with caps, and only ever parsed.
 *
 * Thread-safety: one thread per struct derive.
 */
#ifndef TASK_DERIVE_H
#define TASK_DERIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "lib/buf.h"
#include "lib/jv.h"

#define DERIVE_STEPS_MAX      (64u << 10) /* the steps file is a few lines */
#define DERIVE_OUT_CHUNK      (64u << 10)
#define DERIVE_OUT_TURN_MAX   (4u << 20)  /* agent output read per step */
#define DERIVE_OUT_MAX        (64u << 20) /* agent output read in all */
#define DERIVE_STEPS_FILE_MAX (1u << 20)  /* bytes of steps read in all */
#define DERIVE_FILES_READ_MAX (256u << 10)
#define DERIVE_FILES_MAX      1000 /* files_changed entries kept */
#define DERIVE_BUILD_TAIL     2000 /* bytes of build output kept */

/*
 * Where events go.  emit gets each event's data (it owns it); stopped,
 * asked after each steps record, ends the step early when true (the
 * caller lost events and will derive again).  stopped may be NULL.
 */
struct derive_sink {
	agent_emit_fn *emit;
	bool (*stopped)(void *ctx);
	void *ctx;
};

/* What the supervisor's files said so far; read-only outside derive.c. */
struct derive {
	int dirfd, stepsfd, outfd;
	bool opened;
	struct buf steps;            /* unprocessed bytes of `steps` */
	size_t steps_read, out_read; /* bytes read of steps, agent.out */
	struct buf line;             /* the agent output line being assembled */
	bool line_skip;              /* discarding an overlong line */
	bool in_agent;               /* between phase agent_running and agent */
	struct agent_parser *parser;
	struct agent_outcome oc;
	bool agent_done;
	int agent_code;
	char how[16];
	int64_t started_ms, ended_ms;
	char ckpt[72], ckpt_err[256];
	struct jv *files;
	int64_t nfiles;
	bool built;
	char build_status[16];
	char *build_msg;
	bool health_seen;
	char health[16], health_detail[256];
	bool ended, interrupted, corrupt;
};

/* Makes d empty, with nothing open (d's old contents are ignored). */
void derive_init(struct derive *d);
/* Closes and frees everything, then derive_init. */
void derive_reset(struct derive *d);
/* Closes and frees everything; d is not to be used again. */
void derive_release(struct derive *d);

/* Takes dirfd (the task directory) and starts a parser for kind. */
void derive_open(struct derive *d, int dirfd, enum agent_kind kind);
/*
 * Derives every event the files allow now.  Stops at the `end` record,
 * or for good when `steps` is malformed (d->corrupt).  Opened only.
 */
void derive_step(struct derive *d, const struct derive_sink *s);
/*
 * The task ends without the agent's record (a failure of ours, a
 * stopped sandbox): the agent's output is read to its end and the
 * parser finished as if the agent exited with 0.
 */
void derive_abandon_agent(struct derive *d, const struct derive_sink *s);
/* The last non-empty line of a file of the task directory ("" none). */
void derive_last_line(const struct derive *d, const char *name, char *out,
                      size_t len);

#endif
