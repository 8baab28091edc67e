/*
 * Tasks (see task.h): submitting, following, finishing.
 *
 * One follower thread owns every live task's state.  Other threads only
 * add a task (submit, recovery) or ask for something under ts->mu (a
 * failure to record, a cancel, forgetting it) and wake the follower.
 *
 * A task's events are derived, in order, from two files the supervisor
 * writes in <workspace>/.sandboxd/tasks/<id>/: `steps` (one record per
 * pipeline step) and `agent.out` (the agent CLI's stream, parsed by
 * src/agent/).  Agent events sit between the `phase agent_running` and
 * `agent` records, and the `agent` record is written only after the
 * agent exited, so the sequence does not depend on when we read.  That
 * is what makes a restart (or a failed write) safe: derive again from
 * the start and skip the events the log already has.
 *
 * Everything read from the workspace is the sandbox's to forge: files
 * are opened beneath the workspace without following links, read with
 * caps, and only ever parsed.
 */
#include "core/task.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "core/agentcmd.h"
#include "core/credentials.h"
#include "core/preview.h"
#include "core/runtime.h"
#include "core/sbnet.h"
#include "core/task_internal.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "vault/vault.h"

#define STEPS_MAX      (64u << 10) /* the steps file is a few lines */
#define OUT_CHUNK      (64u << 10)
#define OUT_TURN_MAX   (4u << 20) /* agent output read per task per turn */
#define FILES_READ_MAX (256u << 10)
#define TICK_MS        1000

/* What the supervisor's files said so far (reset to derive again). */
struct derive {
	int dirfd, stepsfd, outfd;
	bool opened;
	struct buf steps; /* unprocessed bytes of `steps` */
	struct buf line;  /* the agent output line being assembled */
	bool line_skip;   /* discarding an overlong line */
	bool in_agent;    /* between phase agent_running and agent */
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

struct live {
	struct live *next;
	struct task row; /* prompt/result owned */
	enum agent_kind kind;
	char ws[4200];
	struct evlog log;
	struct derive d;
	int wd; /* inotify watch, -1 */
	int64_t deadline_mono;
	int64_t last_tick;
	/* Set by other threads under ts->mu. */
	bool started;   /* the supervisor accepted it (or has its files) */
	bool cancelled; /* a cancel was asked for */
	bool forget;    /* the sandbox is being deleted */
	char fail_reason[32];
	char fail_msg[384];
	/* The follower's own. */
	bool finished;
	bool cancel_seen; /* cancelled, as last read under ts->mu */
	bool sb_oom;      /* Docker saw an OOM kill in the sandbox */
	char end_reason[32], end_msg[384]; /* fail_* when it ended */
	char provider_err[384];            /* the proxy's, under ts->mu */
	char end_provider[384];
	struct jv *done_result; /* the log's done event after a restart */
};

/* ---- reading the supervisor's files ---------------------------------- */

static void
derive_reset(struct derive *d)
{
	if (d->opened) {
		if (d->stepsfd >= 0)
			close(d->stepsfd);
		if (d->outfd >= 0)
			close(d->outfd);
		close(d->dirfd);
	}
	buf_release(&d->steps);
	buf_release(&d->line);
	agent_parser_free(d->parser);
	agent_outcome_release(&d->oc);
	jv_free(d->files);
	free(d->build_msg);
	memset(d, 0, sizeof(*d));
	d->dirfd = d->stepsfd = d->outfd = -1;
	buf_init(&d->steps, STEPS_MAX);
	buf_init(&d->line, AGENT_LINE_MAX + 1);
}

/* Opens a regular file of the task directory; -1 when not (yet) there. */
static int
open_reg(int dirfd, const char *name)
{
	int fd = wsfs_openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads a whole small file of the task directory (capped). */
static int
read_small(int dirfd, const char *name, size_t max, struct buf *out)
{
	int fd = open_reg(dirfd, name);
	char chunk[4096];
	ssize_t n;

	buf_init(out, max + 1);
	if (fd < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (out->len + (size_t)n > max ||
		    buf_append(out, chunk, (size_t)n) < 0)
			break;
	close(fd);
	return 0;
}

/* The last `max` bytes of a file, as valid UTF-8 text (NULL if none). */
static char *
read_tail(int dirfd, const char *name, size_t max)
{
	int fd = open_reg(dirfd, name);
	struct stat st;
	char *raw, *text = NULL;
	ssize_t n;
	off_t from;

	if (fd < 0)
		return NULL;
	raw = malloc(max);
	if (raw && fstat(fd, &st) == 0) {
		from = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
		n = pread(fd, raw, max, from);
		if (n > 0) {
			struct jv *s = jv_new_str_lossy(raw, (size_t)n);
			const char *v = jv_str(s);
			if (v && asprintf(&text, "%s%s",
			                  from > 0 ? "...(truncated)...\n" : "",
			                  v) < 0)
				text = NULL;
			jv_free(s);
		}
	}
	free(raw);
	close(fd);
	return text;
}

/* The last non-empty line of a file (for spawn failures). */
static void
last_line(int dirfd, const char *name, char *out, size_t len)
{
	char *t = read_tail(dirfd, name, 1024), *p, *end;

	out[0] = '\0';
	if (t == NULL)
		return;
	end = t + strlen(t);
	while (end > t && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	p = strrchr(t, '\n');
	snprintf(out, len, "%s", p ? p + 1 : t);
	free(t);
}

/* ---- events ---------------------------------------------------------- */

struct emit_ctx {
	struct tasks *ts;
	struct live *lv;
};

static void
emit(void *ctx, const char *type, struct jv *data)
{
	struct emit_ctx *x = ctx;

	if (x->lv->log.failed || x->lv->log.n >= TASK_EVENTS_MAX) {
		jv_free(data);
		return;
	}
	evlog_append(x->ts, x->lv->row.id, &x->lv->log, type, data);
}

static void
emit_status(struct emit_ctx *x, const char *phase)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "phase", phase);
	emit(x, "status", o);
}

/* Feeds complete lines of agent output to the parser. */
static void
agent_feed(struct emit_ctx *x, struct derive *d, const char *p, size_t n,
           bool eof)
{
	for (;;) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (!d->line_skip && buf_append(&d->line, p, take) < 0) {
			d->line_skip = true; /* overlong: dropped whole */
			buf_reset(&d->line);
		}
		if (nl == NULL)
			break;
		if (!d->line_skip && d->line.len)
			agent_parse_line(d->parser, d->line.data, d->line.len,
			                 emit, x);
		buf_reset(&d->line);
		d->line_skip = false;
		n -= take + 1;
		p = nl + 1;
	}
	if (eof) {
		if (!d->line_skip && d->line.len)
			agent_parse_line(d->parser, d->line.data, d->line.len,
			                 emit, x);
		buf_reset(&d->line);
		d->line_skip = false;
	}
}

/* Reads what the agent wrote since last time (all of it when eof). */
static void
agent_read(struct emit_ctx *x, struct derive *d, bool eof)
{
	char *chunk;
	size_t turn = 0;
	ssize_t n;

	if (d->outfd < 0)
		d->outfd = open_reg(d->dirfd, "agent.out");
	if (d->outfd >= 0 && (chunk = malloc(OUT_CHUNK)) != NULL) {
		while ((eof || turn < OUT_TURN_MAX) &&
		       (n = read(d->outfd, chunk, OUT_CHUNK)) > 0) {
			agent_feed(x, d, chunk, (size_t)n, false);
			turn += (size_t)n;
		}
		free(chunk);
	}
	if (eof)
		agent_feed(x, d, "", 0, true);
}

/* Splits a steps record into at most max TAB-separated fields. */
static int
fields(char *line, char **f, int max)
{
	int n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == '\t') {
			*p = '\0';
			f[n++] = p + 1;
		}
	for (int i = n; i < max; i++)
		f[i] = "";
	return n;
}

static void
read_files(struct derive *d)
{
	struct buf b;
	char *p, *nl;

	jv_free(d->files);
	d->files = jv_arr();
	d->nfiles = 0;
	if (read_small(d->dirfd, "files", FILES_READ_MAX, &b) < 0) {
		buf_release(&b);
		return;
	}
	for (p = b.data; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p == '\0')
			continue;
		if (d->nfiles++ < TASK_FILES_MAX)
			jv_push(d->files, jv_new_str_lossy(p, strlen(p)));
	}
	buf_release(&b);
}

static void
on_build(struct emit_ctx *x, struct derive *d, char **f)
{
	struct jv *o = jv_obj();
	bool ok = strcmp(f[1], "passed") == 0;

	d->built = true;
	snprintf(d->build_status, sizeof(d->build_status), "%s",
	         ok ? "passed" : "failed");
	free(d->build_msg);
	d->build_msg = NULL;
	if (!ok) {
		char *tail = read_tail(d->dirfd, "build.log", TASK_BUILD_TAIL);
		if (strcmp(f[1], "timeout") == 0) {
			if (asprintf(&d->build_msg,
			             "the build did not finish in time\n%s",
			             tail ? tail : "") < 0)
				d->build_msg = NULL;
			free(tail);
		} else {
			d->build_msg = tail;
		}
		if (d->build_msg == NULL)
			d->build_msg = strdup("the build failed (no output)");
	}
	jv_set_bool(o, "build_ok", ok);
	jv_set_str(o, "build_status", d->build_status);
	jv_set_str(o, "build_error_message", d->build_msg);
	emit(x, "build", o);
}

/* One steps record. */
static void
on_record(struct emit_ctx *x, struct derive *d, char *line)
{
	char *f[5];

	fields(line, f, 5);
	if (strcmp(f[0], "start") == 0) {
		d->started_ms = strtoll(f[1], NULL, 10);
	} else if (strcmp(f[0], "phase") == 0) {
		static const char *const known[] = {
		    "checkpoint", "agent_running", "build_check",
		    "health_check"};
		for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
			if (strcmp(f[1], known[i]) == 0)
				emit_status(x, known[i]);
		if (strcmp(f[1], "agent_running") == 0)
			d->in_agent = true;
	} else if (strcmp(f[0], "checkpoint") == 0) {
		size_t n = strlen(f[1]); /* SHA-1, or SHA-256 repositories */
		bool hex = (n == 40 || n == 64) &&
		           strspn(f[1], "0123456789abcdef") == n;
		snprintf(d->ckpt, sizeof(d->ckpt), "%s", hex ? f[1] : "");
		snprintf(d->ckpt_err, sizeof(d->ckpt_err), "%s", f[2]);
	} else if (strcmp(f[0], "agent") == 0 && !d->agent_done) {
		if (d->in_agent)
			agent_read(x, d, true);
		d->in_agent = false;
		d->agent_done = true;
		d->agent_code = (int)strtol(f[1], NULL, 10);
		snprintf(d->how, sizeof(d->how), "%s", f[2]);
		agent_parser_finish(d->parser, d->agent_code, &d->oc);
	} else if (strcmp(f[0], "files") == 0) {
		read_files(d);
	} else if (strcmp(f[0], "build") == 0) {
		on_build(x, d, f);
	} else if (strcmp(f[0], "health") == 0) {
		d->health_seen = true;
		snprintf(d->health, sizeof(d->health), "%s", f[1]);
		snprintf(d->health_detail, sizeof(d->health_detail), "%s",
		         f[2]);
	} else if (strcmp(f[0], "end") == 0) {
		d->ended = true;
		d->ended_ms = strtoll(f[1], NULL, 10);
		d->interrupted = strcmp(f[2], "interrupted") == 0;
	}
}

/* Derives every event the files allow now. */
static void
derive_step(struct tasks *ts, struct live *lv)
{
	struct derive *d = &lv->d;
	struct emit_ctx x = {ts, lv};
	char chunk[4096];
	ssize_t n;

	if (!d->opened) {
		char rel[64];
		snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s", lv->row.id);
		d->dirfd = wsfs_open_dir(lv->ws, rel, NULL);
		if (d->dirfd < 0)
			return;
		d->opened = true;
		d->parser = agent_parser_new(lv->kind);
		if (lv->wd < 0) {
			char proc[64];
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d",
			         d->dirfd);
			lv->wd =
			    inotify_add_watch(ts->inotify_fd, proc,
			                      IN_MODIFY | IN_CREATE |
			                          IN_CLOSE_WRITE | IN_MOVED_TO);
		}
	}
	if (d->stepsfd < 0 && (d->stepsfd = open_reg(d->dirfd, "steps")) < 0)
		return;
	while (!d->ended && !d->corrupt) {
		char *nl;
		if (d->in_agent)
			agent_read(&x, d, false);
		nl = d->steps.len ? memchr(d->steps.data, '\n', d->steps.len)
		                  : NULL;
		if (nl == NULL) {
			n = read(d->stepsfd, chunk, sizeof(chunk));
			if (n <= 0)
				break;
			if (buf_append(&d->steps, chunk, (size_t)n) < 0)
				d->corrupt = true;
			continue;
		}
		*nl = '\0';
		on_record(&x, d, d->steps.data);
		{
			size_t used = (size_t)(nl - d->steps.data) + 1;
			memmove(d->steps.data, nl + 1, d->steps.len - used);
			d->steps.len -= used;
			d->steps.data[d->steps.len] = '\0';
		}
		if (lv->log.failed)
			break;
	}
}

/* ---- results ---------------------------------------------------------- */

static void
set_time(struct jv *o, const char *key, int64_t ms)
{
	char t[CLOCK_RFC3339_LEN];

	if (ms <= 0)
		return;
	clock_rfc3339(ms / 1000, t);
	jv_set_str(o, key, t);
}

struct outcome {
	const char *status;
	const char *reason;
	char msg[1024];
};

static void
classify(struct live *lv, struct outcome *o)
{
	struct derive *d = &lv->d;

	o->status = "succeeded";
	o->reason = NULL;
	o->msg[0] = '\0';
	if (lv->end_reason[0]) {
		o->status = strcmp(lv->end_reason, "cancelled") == 0
		                ? "cancelled"
		                : "failed";
		o->reason = lv->end_reason;
		snprintf(o->msg, sizeof(o->msg), "%s", lv->end_msg);
	} else if (d->interrupted || !d->agent_done) {
		o->status = "failed";
		o->reason = "sandbox_stopped";
		snprintf(o->msg, sizeof(o->msg),
		         "the task was interrupted: the sandbox stopped or "
		         "restarted while it ran");
	} else if (strcmp(d->how, "timeout") == 0) {
		o->status = "failed";
		o->reason = "agent_timeout";
		snprintf(o->msg, sizeof(o->msg),
		         "the agent did not finish within the task's timeout "
		         "(%llds)",
		         (long long)lv->row.timeout_s);
	} else if (strcmp(d->how, "cancelled") == 0) {
		o->status = "cancelled";
		o->reason = "cancelled";
		snprintf(o->msg, sizeof(o->msg), "the task was cancelled");
	} else if (strcmp(d->how, "oom") == 0 ||
	           (lv->sb_oom && d->agent_code == 137)) {
		o->status = "failed";
		o->reason = "oom_killed";
		snprintf(o->msg, sizeof(o->msg),
		         "the agent was killed because the sandbox ran out of "
		         "memory (exit code %d)",
		         d->agent_code);
	} else if (strcmp(d->how, "spawn_failed") == 0) {
		char why[256];
		last_line(d->dirfd, "agent.log", why, sizeof(why));
		o->status = "failed";
		o->reason = "agent_error";
		snprintf(o->msg, sizeof(o->msg),
		         "could not start the agent%s%s", why[0] ? ": " : "",
		         why);
	} else if (d->oc.error) {
		o->status = "failed";
		o->reason = "agent_error";
		/* The provider's own words beat the CLI's summary of them. */
		snprintf(o->msg, sizeof(o->msg), "%s",
		         lv->end_provider[0] ? lv->end_provider : d->oc.error);
	}
	if (lv->cancel_seen && strcmp(o->status, "succeeded") == 0) {
		o->status = "cancelled";
		o->reason = "cancelled";
		snprintf(o->msg, sizeof(o->msg), "the task was cancelled");
	}
}

static struct jv *
tokens_json(const struct agent_tokens *t)
{
	struct jv *o = jv_obj();

	jv_set_int(o, "input", t->input);
	jv_set_int(o, "output", t->output);
	jv_set_int(o, "reasoning", t->reasoning);
	jv_set_int(o, "cache_read", t->cache_read);
	jv_set_int(o, "cache_write", t->cache_write);
	jv_set_int(o, "total",
	           t->input + t->output + t->reasoning + t->cache_read +
	               t->cache_write);
	jv_set_real(o, "cost", t->cost);
	return o;
}

/* The TaskResult of a live task that ended. */
static struct jv *
result_json(struct live *lv, const struct outcome *o, int64_t finished_ms)
{
	struct derive *d = &lv->d;
	struct jv *r = jv_obj();
	bool cancelled = strcmp(o->status, "cancelled") == 0;
	bool web = d->health_seen && strcmp(d->health, "none") != 0;
	bool ready = d->health_seen && strcmp(d->health, "ready") == 0;
	int64_t start = d->started_ms ? d->started_ms : lv->row.created_at;

	jv_set_str(r, "id", lv->row.id);
	jv_set_str(r, "sandbox_id", lv->row.sandbox_id);
	jv_set_str(r, "agent", lv->row.agent);
	if (lv->row.model[0])
		jv_set_str(r, "model", lv->row.model);
	jv_set_str(r, "prompt", lv->row.prompt);
	jv_set_str(r, "status", o->status);
	jv_set_str(r, "failure_reason", o->reason);
	if (o->msg[0])
		jv_set_str(r, "error_message", o->msg);
	jv_set(r, "files_changed", d->files ? jv_copy(d->files) : jv_arr());
	if (d->nfiles > TASK_FILES_MAX)
		jv_set_int(r, "files_changed_total", d->nfiles);
	jv_set_str(r, "agent_message_final", d->oc.final_message);
	jv_set_bool(r, "build_ok",
	            d->built && strcmp(d->build_status, "passed") == 0);
	jv_set_str(r, "build_status", d->built ? d->build_status : "skipped");
	jv_set_str(r, "build_error_message", d->build_msg);
	if (d->health_seen) {
		jv_set_str(r, "preview_status_after", d->health);
		if (d->health_detail[0])
			jv_set_str(r, "preview_detail", d->health_detail);
		if (web)
			jv_set_bool(r, "preview_ok", ready);
	}
	jv_set_bool(r, "app_healthy",
	            !cancelled && d->health_seen &&
	                !(d->built && strcmp(d->build_status, "passed")) &&
	                (ready || !web));
	if (d->ckpt[0])
		jv_set_str(r, "checkpoint_id", d->ckpt);
	jv_set_int(r, "duration_ms",
	           finished_ms > start ? finished_ms - start : 0);
	jv_set(r, "tokens", tokens_json(&d->oc.tokens));
	set_time(r, "created_at", lv->row.created_at);
	set_time(r, "started_at", d->started_ms);
	set_time(r, "finished_at", finished_ms);
	return r;
}

/* Writes done and the row.  0 when finished, -1 to try again later. */
static int
finish(struct tasks *ts, struct core *c, struct live *lv)
{
	struct emit_ctx x = {ts, lv};
	struct sandbox sb;
	struct outcome o;
	struct jv *r;
	struct buf text;
	int64_t fin;
	int rc;

	if (!lv->log.done) {
		if (lv->d.in_agent && !lv->d.agent_done && lv->d.parser) {
			agent_read(&x, &lv->d, true);
			agent_parser_finish(lv->d.parser, 0, &lv->d.oc);
		}
		if (store_sandbox_get(c->store, lv->row.sandbox_id, &sb) == 0)
			lv->sb_oom = sb.oom_killed;
		classify(lv, &o);
		fin = lv->d.ended && lv->d.ended_ms ? lv->d.ended_ms
		                                    : clock_now_ms();
		r = result_json(lv, &o, fin);
		/* done is written after whatever the log holds. */
		lv->log.failed = false;
		if (lv->log.n < lv->log.have)
			lv->log.n = lv->log.have;
		if (evlog_append(ts, lv->row.id, &lv->log, "done", jv_copy(r)) <
		    0) {
			jv_free(r);
			return -1;
		}
	} else {
		/* A restart found done in the log: its data is the result. */
		r = lv->done_result ? lv->done_result : jv_obj();
		lv->done_result = NULL;
	}
	buf_init(&text, 0);
	jv_dump(r, &text);
	rc = store_task_finish(c->store, lv->row.id,
	                       jv_str(jv_get(r, "status")) ?: "failed",
	                       jv_str(jv_get(r, "failure_reason")) ?: "",
	                       jv_str(jv_get(r, "checkpoint_id")) ?: "",
	                       text.data ? text.data : "{}", clock_now_ms());
	buf_release(&text);
	log_info("task %s: %s%s%s", lv->row.id,
	         jv_str(jv_get(r, "status")) ?: "?",
	         jv_str(jv_get(r, "failure_reason")) ? " / " : "",
	         jv_str(jv_get(r, "failure_reason")) ?: "");
	jv_free(r);
	if (rc < 0)
		return -1; /* database trouble: keep it and retry */
	subs_finish(ts, lv->row.id);
	return 0;
}

/* ---- the follower ------------------------------------------------------ */

static void
live_free(struct tasks *ts, struct live *lv)
{
	if (lv->wd >= 0)
		inotify_rm_watch(ts->inotify_fd, lv->wd);
	derive_reset(&lv->d);
	buf_release(&lv->d.steps);
	buf_release(&lv->d.line);
	evlog_close(&lv->log);
	jv_free(lv->done_result);
	store_task_release(&lv->row);
	free(lv);
}

/* Records why the task ends unless a reason is there (ts->mu held). */
static void
fail_locked(struct live *lv, const char *reason, const char *msg)
{
	if (lv->fail_reason[0])
		return;
	snprintf(lv->fail_reason, sizeof(lv->fail_reason), "%s", reason);
	snprintf(lv->fail_msg, sizeof(lv->fail_msg), "%s", msg);
}

static void set_fail(struct tasks *ts, struct live *lv, const char *reason,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
set_fail(struct tasks *ts, struct live *lv, const char *reason, const char *fmt,
         ...)
{
	char msg[sizeof(lv->fail_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ts->mu);
	fail_locked(lv, reason, msg);
	pthread_mutex_unlock(&ts->mu);
}

/* Once a second: sandbox gone, overdue, activity. */
static void
live_tick(struct core *c, struct live *lv)
{
	struct sandbox sb;
	int rc;

	preview_activity(c, lv->row.sandbox_id);
	if (lv->d.ended)
		return;
	rc = store_sandbox_get(c->store, lv->row.sandbox_id, &sb);
	if (rc == 0 && strcmp(sb.status, "running") != 0) {
		bool oom = sb.oom_killed ||
		           strcmp(sb.status_reason, "oom_killed") == 0;
		if (oom)
			set_fail(c->tasks, lv, "oom_killed",
			         "the sandbox was killed because it ran out of "
			         "memory");
		else
			set_fail(c->tasks, lv, "sandbox_stopped",
			         "the sandbox stopped (%s) while the task ran",
			         sb.status_reason[0] ? sb.status_reason
			                             : sb.status);
	} else if (clock_mono_ms() > lv->deadline_mono) {
		char line[96];
		struct jv *ans = NULL;
		struct err e;
		snprintf(line, sizeof(line), "task cancel %s\n", lv->row.id);
		if (runtime_request(lv->ws, line, RUNTIME_TIMEOUT_MS, &ans,
		                    &e) == 0)
			jv_free(ans);
		set_fail(c->tasks, lv, "internal",
		         "the sandbox reported no result within the task's "
		         "timeout plus %ds",
		         TASK_WINDOW_EXTRA_S);
	}
}

/* Works on one live task; true when it is done with. */
static bool
live_turn(struct core *c, struct live *lv, bool tick)
{
	struct tasks *ts = c->tasks;
	bool started, forget, failing;

	pthread_mutex_lock(&ts->mu);
	started = lv->started;
	forget = lv->forget;
	lv->cancel_seen = lv->cancelled;
	pthread_mutex_unlock(&ts->mu);
	if (forget) {
		subs_finish(ts, lv->row.id);
		return true;
	}
	if (lv->log.failed) { /* derive again, skipping what is written */
		int64_t have = lv->log.n;
		derive_reset(&lv->d);
		lv->log.failed = false;
		lv->log.n = 0;
		lv->log.have = have;
		emit_status(&(struct emit_ctx){ts, lv}, "starting");
	}
	if (started || lv->d.opened)
		derive_step(ts, lv);
	if (tick)
		live_tick(c, lv);
	pthread_mutex_lock(&ts->mu);
	failing = lv->fail_reason[0] != '\0';
	pthread_mutex_unlock(&ts->mu);
	if (lv->d.ended || failing || lv->d.corrupt) {
		if (lv->d.corrupt && !failing)
			set_fail(ts, lv, "internal",
			         "the task's step records are malformed");
		/* From here on the reason is ours to read without the lock. */
		pthread_mutex_lock(&ts->mu);
		memcpy(lv->end_reason, lv->fail_reason, sizeof(lv->end_reason));
		memcpy(lv->end_msg, lv->fail_msg, sizeof(lv->end_msg));
		memcpy(lv->end_provider, lv->provider_err,
		       sizeof(lv->end_provider));
		pthread_mutex_unlock(&ts->mu);
		if (failing && (started || lv->d.opened))
			derive_step(ts, lv); /* what is there, first */
		return finish(ts, c, lv) == 0;
	}
	return false;
}

static void
drain(int fd)
{
	char b[4096];

	while (read(fd, b, sizeof(b)) > 0)
		;
}

static void *
follower_main(void *arg)
{
	struct core *c = arg;
	struct tasks *ts = c->tasks;
	int64_t last_tick = 0;

	while (!c->stopping) {
		struct pollfd p[2] = {{ts->wake_fd, POLLIN, 0},
		                      {ts->inotify_fd, POLLIN, 0}};
		int64_t now;
		bool tick;

		poll(p, 2, 250);
		drain(ts->wake_fd);
		drain(ts->inotify_fd);
		now = clock_mono_ms();
		tick = now - last_tick >= TICK_MS;
		if (tick) {
			last_tick = now;
			subs_heartbeat(ts);
		}
		pthread_mutex_lock(&ts->mu);
		struct live *list = ts->lives;
		pthread_mutex_unlock(&ts->mu);
		/* New tasks go to the head: the rest of the list is ours. */
		for (struct live *lv = list; lv; lv = lv->next)
			if (!lv->finished && live_turn(c, lv, tick))
				lv->finished = true;
		pthread_mutex_lock(&ts->mu);
		for (struct live **pp = &ts->lives; *pp;) {
			struct live *lv = *pp;
			if (lv->finished) {
				*pp = lv->next;
				live_free(ts, lv);
			} else {
				pp = &lv->next;
			}
		}
		pthread_mutex_unlock(&ts->mu);
	}
	return NULL;
}

static void
wake(struct tasks *ts)
{
	uint64_t one = 1;

	if (write(ts->wake_fd, &one, sizeof(one)) < 0)
		log_warn("tasks: wake: %s", strerror(errno));
}

/* Called with ts->mu held (from taskev.c). */
int
task_live_committed(struct tasks *ts, const char *id, off_t *out)
{
	for (struct live *lv = ts->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0 && !lv->log.done) {
			*out = lv->log.committed;
			return 0;
		}
	return -1;
}

/* ---- starting ----------------------------------------------------------- */

static struct live *
live_new(struct core *c, const struct task *row)
{
	struct live *lv = calloc(1, sizeof(*lv));

	if (lv == NULL)
		return NULL;
	lv->row = *row;
	lv->row.prompt = strdup(row->prompt ? row->prompt : "");
	lv->row.result = NULL;
	lv->kind = (enum agent_kind)agent_kind_parse(row->agent);
	lv->wd = -1;
	lv->d.opened = false;
	derive_reset(&lv->d);
	workspace_path(c->cfg->data_dir, row->sandbox_id, lv->ws,
	               sizeof(lv->ws));
	lv->deadline_mono = clock_mono_ms() +
	                    (row->timeout_s + TASK_WINDOW_EXTRA_S) * 1000 -
	                    (clock_now_ms() - row->created_at);
	if (lv->row.prompt == NULL ||
	    evlog_open(c->cfg->data_dir, row->id, &lv->log, &lv->done_result) <
	        0) {
		free(lv->row.prompt);
		free(lv);
		return NULL;
	}
	return lv;
}

static void
live_add(struct core *c, struct live *lv)
{
	pthread_mutex_lock(&c->tasks->mu);
	lv->next = c->tasks->lives;
	c->tasks->lives = lv;
	pthread_mutex_unlock(&c->tasks->mu);
	wake(c->tasks);
}

static void
request_fail(struct core *c, const char *id, const char *reason,
             const char *msg)
{
	struct tasks *ts = c->tasks;

	pthread_mutex_lock(&ts->mu);
	for (struct live *lv = ts->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			fail_locked(lv, reason, msg);
	pthread_mutex_unlock(&ts->mu);
	wake(ts);
}

static void
mark_started(struct core *c, const char *id)
{
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			lv->started = true;
	pthread_mutex_unlock(&c->tasks->mu);
	wake(c->tasks);
}

/* Still live and not ending (so worth handing to the supervisor). */
static bool
task_wanted(struct core *c, const char *id)
{
	bool want = false;

	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			want = !lv->fail_reason[0] && !lv->cancelled;
	pthread_mutex_unlock(&c->tasks->mu);
	return want;
}

struct starter {
	struct core *c;
	struct task row;
	bool cont;
};

/*
 * The agent's environment: the credential proxy's address and this
 * sandbox's proxy token in place of a key.  *model_arg gets the model as
 * the CLI must name it.
 */
static int
task_env(struct core *c, const struct starter *st, struct buf *env,
         char *model_arg, size_t len)
{
	char url[96], token[128];
	int rc;

	snprintf(model_arg, len, "%s", st->row.model);
	core_proxy_url(c, url, sizeof(url));
	if (url[0] == '\0')
		return -1; /* task_submit checked: it stopped since */
	if (cred_proxy_token(c, st->row.sandbox_id, token, sizeof(token)) < 0 &&
	    (cred_new_proxy_token(c, st->row.sandbox_id) < 0 ||
	     cred_proxy_token(c, st->row.sandbox_id, token, sizeof(token)) < 0))
		return -1;
	rc = agentcmd_env((enum agent_kind)agent_kind_parse(st->row.agent), url,
	                  token, st->row.model, env, model_arg, len);
	vault_wipe(token, sizeof(token));
	return rc;
}

/* Writes the task's argv and env files for the supervisor. */
static int
write_argv(struct core *c, const struct starter *st, const char *ws, char *msg,
           size_t len)
{
	char rel[96], model[TASK_MAX_MODEL_BYTES + 32];
	struct manifest m;
	struct buf sys, argv, env;
	struct err e = {0};
	int wsfd, rc = -1;

	wsfd = wsfs_open_dir(ws, ".", &e);
	if (wsfd < 0) {
		snprintf(msg, len, "%s", e.msg);
		return -1;
	}
	if (runtime_manifest(c, st->row.sandbox_id, &m) < 0)
		manifest_default(&m, 3000, false);
	buf_init(&sys, 64u << 10);
	buf_init(&argv, 1u << 20);
	buf_init(&env, 60u << 10);
	if (task_env(c, st, &env, model, sizeof(model)) < 0) {
		snprintf(msg, len, "cannot prepare the agent's credentials");
		goto out;
	}
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/env", st->row.id);
	if (env.len && wsfs_write(wsfd, rel, env.data, env.len, WORKSPACE_UID,
	                          WORKSPACE_GID, &e) < 0) {
		snprintf(msg, len, "cannot write the task's files: %s", e.msg);
		goto out;
	}
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/argv", st->row.id);
	if (agentcmd_system_prompt(&m, &sys) < 0 ||
	    agentcmd_argv((enum agent_kind)agent_kind_parse(st->row.agent),
	                  model, st->cont, sys.data ? sys.data : "",
	                  st->row.prompt, &argv) < 0)
		snprintf(msg, len, "the agent's command line is too long");
	else if (wsfs_write(wsfd, rel, argv.data, argv.len, WORKSPACE_UID,
	                    WORKSPACE_GID, &e) < 0)
		snprintf(msg, len, "cannot write the task's files: %s", e.msg);
	else
		rc = 0;
out:
	if (env.data)
		vault_wipe(env.data, env.len);
	buf_release(&sys);
	buf_release(&argv);
	buf_release(&env);
	close(wsfd);
	return rc;
}

static void
start_once(struct starter *st)
{
	struct core *c = st->c;
	char ws[4200], line[128], msg[384];
	struct jv *ans = NULL;
	struct err e = {0};
	const char *err;

	workspace_path(c->cfg->data_dir, st->row.sandbox_id, ws, sizeof(ws));
	if (!runtime_wait(c, st->row.sandbox_id, TASK_START_WAIT_MS)) {
		if (!c->stopping)
			request_fail(c, st->row.id, "sandbox_unavailable",
			             "the sandbox's supervisor did not answer "
			             "within 60 s");
		return;
	}
	if (!task_wanted(c, st->row.id))
		return; /* cancelled or failed meanwhile */
	/* run.conf must carry the app's build and restart settings. */
	runtime_configure(c, st->row.sandbox_id, true);
	if (write_argv(c, st, ws, msg, sizeof(msg)) < 0) {
		request_fail(c, st->row.id, "internal", msg);
		return;
	}
	snprintf(line, sizeof(line), "task start %s %lld\n", st->row.id,
	         (long long)st->row.timeout_s);
	if (runtime_request(ws, line, RUNTIME_TIMEOUT_MS, &ans, &e) < 0) {
		snprintf(msg, sizeof(msg), "the sandbox's supervisor: %s",
		         e.msg);
		request_fail(c, st->row.id, "sandbox_unavailable", msg);
		return;
	}
	err = jv_str(jv_get(ans, "error"));
	if (jv_is_true(jv_get(ans, "ok")) ||
	    (err && strcmp(err, "task already ran") == 0)) {
		mark_started(c, st->row.id);
	} else {
		snprintf(msg, sizeof(msg), "the sandbox refused the task: %s",
		         err ? err : "no reason given");
		request_fail(c, st->row.id,
		             err && strcmp(err, "task_in_progress") == 0
		                 ? "task_in_progress"
		                 : "sandbox_unavailable",
		             msg);
	}
	jv_free(ans);
}

static void *
starter_main(void *arg)
{
	struct starter *st = arg;
	struct tasks *ts = st->c->tasks;

	start_once(st);
	store_task_release(&st->row);
	free(st);
	pthread_mutex_lock(&ts->mu);
	ts->starters--;
	pthread_cond_broadcast(&ts->starters_cv);
	pthread_mutex_unlock(&ts->mu);
	return NULL;
}

static int
starter_spawn(struct core *c, const struct task *row, bool cont)
{
	struct starter *st = calloc(1, sizeof(*st));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (st == NULL)
		return -1;
	st->c = c;
	st->row = *row;
	st->row.prompt = strdup(row->prompt ? row->prompt : "");
	st->row.result = NULL;
	st->cont = cont;
	if (st->row.prompt == NULL) {
		free(st);
		return -1;
	}
	pthread_mutex_lock(&c->tasks->mu);
	c->tasks->starters++;
	pthread_mutex_unlock(&c->tasks->mu);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, starter_main, st);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_mutex_lock(&c->tasks->mu);
		c->tasks->starters--;
		pthread_mutex_unlock(&c->tasks->mu);
		store_task_release(&st->row);
		free(st);
		return -1;
	}
	return 0;
}

/* ---- API -------------------------------------------------------------- */

/* Stops at the first earlier task of the same agent. */
static int
same_agent(const struct task *t, void *arg)
{
	return strcmp(t->agent, arg) == 0;
}

static bool
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static int
validate(struct core *c, const struct task_request *r, struct task *t,
         struct err *e)
{
	const struct config *cfg = c->cfg;
	const char *agent = r->agent ? r->agent : cfg->default_agent;
	char saved[TASK_MAX_MODEL_BYTES + 1], method[16];
	const char *model = r->model;

	if (r->prompt == NULL || r->prompt[strspn(r->prompt, " \t\r\n")] == 0)
		return ERR_BAD(e, "prompt is required");
	if (strlen(r->prompt) > TASK_MAX_PROMPT_BYTES)
		return err_set(e, 413, "too_large",
		               "prompt is longer than %u bytes",
		               TASK_MAX_PROMPT_BYTES);
	if (agent_kind_parse(agent) < 0)
		return ERR_BAD(e,
		               "unknown agent \"%.64s\" (supported: opencode, "
		               "claude-code)",
		               agent);
	if (r->timeout_s < 0)
		return ERR_BAD(e, "timeout_s must be >= 0");
	if (r->timeout_s > 86400)
		return ERR_BAD(e, "timeout_s must be <= 86400");
	if (model && strlen(model) > TASK_MAX_MODEL_BYTES)
		return ERR_BAD(e, "model is longer than %d bytes",
		               TASK_MAX_MODEL_BYTES);
	if (model && (!printable(model) || model[0] == '-'))
		return ERR_BAD(e, "model must be printable text not starting "
		                  "with '-'");
	/*
	 * The task's model, else the agent's default from settings, else
	 * the configured one; OpenCode with no key gets its free model.
	 */
	if ((model == NULL || *model == '\0') &&
	    store_agent_default_model(c->store, agent, saved, sizeof(saved)) ==
	        0)
		model = saved;
	if (model == NULL || *model == '\0') {
		if (strcmp(agent, "opencode") != 0)
			model = cfg->claude_model;
		else if (cfg->opencode_model[0] &&
		         store_agent_method(c->store, agent, method) == 0)
			model = cfg->opencode_model;
		else
			model = cfg->opencode_free_model;
	}
	memset(t, 0, sizeof(*t));
	snprintf(t->agent, sizeof(t->agent), "%s", agent);
	snprintf(t->model, sizeof(t->model), "%s", model ? model : "");
	t->timeout_s = r->timeout_s ? r->timeout_s : cfg->task_timeout_s;
	return 0;
}

int
task_submit(struct core *c, const char *sandbox_id,
            const struct task_request *r, struct task *out, struct err *e)
{
	char why[SBNET_ERR_LEN + 64];
	struct sandbox sb;
	struct live *lv;
	bool cont, prior;
	int rc;

	if (validate(c, r, out, e) < 0)
		return -1;
	rc = store_sandbox_get(c->store, sandbox_id, &sb);
	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such sandbox");
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	if (strcmp(sb.status, "stopped") == 0) {
		int avail = reaper_mem_available_pct();
		if (avail >= 0 && avail < c->cfg->mem_refuse_pct)
			return err_set(e, 503, "no_headroom",
			               "only %d%% of the host's memory is "
			               "available; the sandbox stays stopped",
			               avail);
		if (core_sandbox_start(c, sandbox_id, &sb, e) < 0)
			return -1;
		preview_started(c, sandbox_id);
	} else if (strcmp(sb.status, "running") != 0) {
		return err_set(e, 409, "sandbox_not_running",
		               "sandbox is %s; cannot run a task", sb.status);
	}
	/* Continuing means the same agent's last session in this sandbox. */
	prior = store_task_list(c->store, sandbox_id, TASK_HISTORY_MAX,
	                        same_agent, out->agent) > 0;
	cont = r->cont < 0 ? prior : r->cont > 0;
	ulid_new(out->id);
	snprintf(out->sandbox_id, sizeof(out->sandbox_id), "%s", sandbox_id);
	snprintf(out->status, sizeof(out->status), "running");
	out->created_at = clock_now_ms();
	out->prompt = strdup(r->prompt);
	if (out->prompt == NULL)
		return ERR_INTERNAL(e, "out of memory");
	rc = store_task_insert(c->store, out);
	if (rc == STORE_CONFLICT) {
		store_task_release(out);
		return err_set(e, 409, "task_in_progress",
		               "a task is already running in this sandbox");
	}
	if (rc < 0 || (lv = live_new(c, out)) == NULL) {
		store_task_finish(c->store, out->id, "failed", "internal", "",
		                  NULL, clock_now_ms());
		store_task_release(out);
		return ERR_INTERNAL(e, "cannot record the task");
	}
	emit_status(&(struct emit_ctx){c->tasks, lv}, "starting");
	live_add(c, lv);
	/* Without the proxy the agent has no model: fail now, saying why. */
	if (sbnet_proxy_down(c, why, sizeof(why)) < 0) {
		log_warn("task %s: %s", out->id, why);
		request_fail(c, out->id, "proxy_unavailable", why);
	} else if (starter_spawn(c, out, cont) < 0)
		request_fail(c, out->id, "internal",
		             "cannot start a thread for the task");
	log_info("task %s: %s on sandbox %s (timeout %llds)", out->id,
	         out->agent, sandbox_id, (long long)out->timeout_s);
	return 0;
}

int
task_cancel(struct core *c, const char *sandbox_id, const char *id,
            char status[16], struct err *e)
{
	char ws[4200], line[96];
	struct jv *ans = NULL;
	struct task t;
	struct err re;
	int rc = store_task_get(c->store, sandbox_id, id, &t);

	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such task");
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	snprintf(status, 16, "%s", t.status);
	store_task_release(&t);
	if (strcmp(status, "running") != 0)
		return 0; /* already over: nothing to cancel */
	snprintf(status, 16, "cancelling");
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.id, id) == 0)
			lv->cancelled = true;
	pthread_mutex_unlock(&c->tasks->mu);
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	snprintf(line, sizeof(line), "task cancel %s\n", id);
	rc = runtime_request(ws, line, RUNTIME_TIMEOUT_MS, &ans, &re);
	/*
	 * The supervisor stops it and its files say so; if it never got the
	 * task (or does not answer), the task ends here.  One it already
	 * finished ("state":"ended") ends as its files say.
	 */
	if (rc < 0 || !jv_is_true(jv_get(ans, "ok")))
		request_fail(c, id, "cancelled", "the task was cancelled");
	jv_free(ans);
	return 0;
}

int
task_revert(struct core *c, const char *sandbox_id, const char *id,
            struct err *e)
{
	char ws[4200], line[96], rel[96];
	struct jv *ans = NULL;
	struct sandbox sb;
	struct task t;
	struct err re = {0};
	int64_t deadline;
	int rc = store_task_get(c->store, sandbox_id, id, &t), wsfd;

	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such task");
	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	rc = strcmp(t.status, "running") == 0 ? 1 : t.checkpoint_id[0] ? 0 : 2;
	store_task_release(&t);
	if (rc == 1)
		return err_set(e, 409, "task_in_progress",
		               "the task is still running; cancel it first");
	if (rc == 2)
		return err_set(e, 409, "no_checkpoint",
		               "the task has no checkpoint to revert to");
	if (task_running_on(c, sandbox_id))
		return err_set(e, 409, "task_in_progress",
		               "another task is running in this sandbox");
	if (store_sandbox_get(c->store, sandbox_id, &sb) != 0)
		return ERR_NOTFOUND(e, "no such sandbox");
	if (strcmp(sb.status, "stopped") == 0 &&
	    core_sandbox_start(c, sandbox_id, &sb, e) < 0)
		return -1;
	if (!runtime_wait(c, sandbox_id, TASK_START_WAIT_MS))
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor does not answer");
	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	snprintf(line, sizeof(line), "task revert %s\n", id);
	if (runtime_request(ws, line, RUNTIME_TIMEOUT_MS, &ans, &re) < 0)
		return err_set(e, 502, "sandbox_unavailable",
		               "the sandbox's supervisor: %s", re.msg);
	if (!jv_is_true(jv_get(ans, "ok"))) {
		err_set(e, 409, "revert_failed", "%s",
		        jv_str(jv_get(ans, "error")) ?: "revert refused");
		jv_free(ans);
		return -1;
	}
	jv_free(ans);
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/revert", id);
	deadline = clock_mono_ms() + TASK_REVERT_WAIT_MS;
	while (clock_mono_ms() < deadline && !c->stopping) {
		struct buf b;
		wsfd = wsfs_open_dir(ws, ".", NULL);
		rc = wsfd >= 0 ? wsfs_read(wsfd, rel, 4096, &b, &re) : -1;
		if (wsfd >= 0)
			close(wsfd);
		if (rc == 0 && b.len && b.data[b.len - 1] == '\n') {
			bool ok = strncmp(b.data, "ok", 2) == 0;
			char *tab = strchr(b.data, '\t');
			if (!ok)
				err_set(e, 409, "revert_failed", "%.*s",
				        (int)(b.len - 1 -
				              (tab ? (size_t)(tab + 1 - b.data)
				                   : 0)),
				        tab ? tab + 1 : b.data);
			buf_release(&b);
			if (ok)
				preview_activity(c, sandbox_id);
			return ok ? 0 : -1;
		}
		if (rc == 0)
			buf_release(&b);
		usleep(50 * 1000);
	}
	return err_set(e, 504, "revert_timeout",
	               "the revert did not finish within %d s",
	               TASK_REVERT_WAIT_MS / 1000);
}

void
task_provider_error(struct core *c, const char *sandbox_id, const char *msg)
{
	if (c->tasks == NULL)
		return;
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0)
			snprintf(lv->provider_err, sizeof(lv->provider_err),
			         "%s", msg);
	pthread_mutex_unlock(&c->tasks->mu);
}

bool
task_active_id(struct core *c, const char *sandbox_id, char id[ULID_LEN + 1])
{
	bool found = false;

	if (c->tasks == NULL)
		return false;
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0 &&
		    !lv->finished && !lv->log.done) {
			snprintf(id, ULID_LEN + 1, "%s", lv->row.id);
			found = true;
		}
	pthread_mutex_unlock(&c->tasks->mu);
	return found;
}

bool
task_running_on(struct core *c, const char *sandbox_id)
{
	char id[ULID_LEN + 1];

	return task_active_id(c, sandbox_id, id);
}

struct forget {
	struct core *c;
};

static int
forget_log(const struct task *t, void *arg)
{
	struct forget *f = arg;
	char path[4200];

	task_events_path(f->c->cfg->data_dir, t->id, path, sizeof(path));
	unlink(path);
	return 0;
}

void
task_forget_sandbox(struct core *c, const char *sandbox_id)
{
	struct forget f = {c};

	if (c->tasks == NULL)
		return;
	pthread_mutex_lock(&c->tasks->mu);
	for (struct live *lv = c->tasks->lives; lv; lv = lv->next)
		if (strcmp(lv->row.sandbox_id, sandbox_id) == 0)
			lv->forget = true;
	pthread_mutex_unlock(&c->tasks->mu);
	wake(c->tasks);
	store_task_list(c->store, sandbox_id, 1 << 30, forget_log, &f);
	store_task_delete_sandbox(c->store, sandbox_id);
}

struct jv *
task_json(const struct task *t)
{
	struct jv *r = NULL, *o;

	if (t->result)
		r = jv_parse(t->result, strlen(t->result), 64, NULL, 0);
	if (r && jv_type(r) == JV_OBJECT)
		return r;
	jv_free(r);
	o = jv_obj();
	jv_set_str(o, "id", t->id);
	jv_set_str(o, "sandbox_id", t->sandbox_id);
	jv_set_str(o, "agent", t->agent);
	if (t->model[0])
		jv_set_str(o, "model", t->model);
	jv_set_str(o, "prompt", t->prompt);
	jv_set_str(o, "status", t->status);
	if (t->failure_reason[0])
		jv_set_str(o, "failure_reason", t->failure_reason);
	set_time(o, "created_at", t->created_at);
	return o;
}

/* ---- start and stop ----------------------------------------------------- */

static int
recover_one(const struct task *t, void *arg)
{
	struct core *c = arg;
	struct live *lv = live_new(c, t);
	struct sandbox sb;
	char ws[4200], rel[96];
	int wsfd, fd;
	bool have_steps = false;

	if (lv == NULL) {
		log_error("task %s: cannot follow it again", t->id);
		return 0;
	}
	/* Event 0 again (the log has it: counted, not written). */
	emit_status(&(struct emit_ctx){c->tasks, lv}, "starting");
	workspace_path(c->cfg->data_dir, t->sandbox_id, ws, sizeof(ws));
	snprintf(rel, sizeof(rel), ".sandboxd/tasks/%s/steps", t->id);
	if ((wsfd = wsfs_open_dir(ws, ".", NULL)) >= 0) {
		fd = wsfs_openat(wsfd, rel, O_PATH, 0);
		have_steps = fd >= 0;
		if (fd >= 0)
			close(fd);
		close(wsfd);
	}
	lv->started = have_steps || lv->log.done;
	live_add(c, lv);
	if (!lv->started && !lv->log.done &&
	    store_sandbox_get(c->store, t->sandbox_id, &sb) == 0 &&
	    strcmp(sb.status, "running") == 0) {
		if (starter_spawn(c, t, false) < 0)
			request_fail(c, t->id, "internal",
			             "cannot start a thread for the task");
	}
	log_info("task %s: following it again after a restart", t->id);
	return 0;
}

int
task_init(struct core *c)
{
	struct tasks *ts = calloc(1, sizeof(*ts));
	char dir[4200];

	if (ts == NULL)
		return -1;
	pthread_mutex_init(&ts->mu, NULL);
	pthread_cond_init(&ts->starters_cv, NULL);
	ts->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ts->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	c->tasks = ts;
	snprintf(dir, sizeof(dir), "%s/tasks", c->cfg->data_dir);
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || ts->wake_fd < 0 ||
	    ts->inotify_fd < 0) {
		log_error("tasks: %s: %s", dir, strerror(errno));
		return -1;
	}
	store_task_list_running(c->store, recover_one, c);
	if (pthread_create(&ts->thread, NULL, follower_main, c) != 0)
		return -1;
	ts->started = true;
	return 0;
}

void
task_shutdown(struct core *c)
{
	struct tasks *ts = c->tasks;

	if (ts == NULL)
		return;
	c->stopping = true;
	wake(ts);
	if (ts->started)
		pthread_join(ts->thread, NULL);
	ts->started = false;
	pthread_mutex_lock(&ts->mu);
	while (ts->starters > 0)
		pthread_cond_wait(&ts->starters_cv, &ts->mu);
	pthread_mutex_unlock(&ts->mu);
	subs_end_all(ts);
}

void
task_free(struct core *c)
{
	struct tasks *ts = c->tasks;

	if (ts == NULL)
		return;
	task_shutdown(c);
	while (ts->lives) {
		struct live *lv = ts->lives;
		ts->lives = lv->next;
		live_free(ts, lv);
	}
	close(ts->wake_fd);
	close(ts->inotify_fd);
	pthread_cond_destroy(&ts->starters_cv);
	pthread_mutex_destroy(&ts->mu);
	free(ts);
	c->tasks = NULL;
}
