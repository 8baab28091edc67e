/*
 * Deriving a task's events from its directory (see derive.h).
 *
 * Agent events sit between the `phase agent_running` and `agent`
 * records, and the `agent` record is written only after the agent
 * exited, so the sequence does not depend on when we read: while in the
 * agent phase, each step first drains what agent.out holds, then looks
 * at the next whole steps record; the `agent` record drains agent.out to
 * its end before the parser is finished.  That is what makes a restart
 * (or a failed write) safe: derive again from the start and skip the
 * events the log already has.
 *
 * Every file is opened with wsfs_open_file (beneath the directory, no
 * links), O_NONBLOCK (a FIFO planted by the sandbox cannot block the
 * open, and fstat then refuses it), and must be a regular file.  Reads
 * are capped: steps at DERIVE_STEPS_MAX unprocessed bytes and
 * DERIVE_STEPS_FILE_MAX in all (more means malformed), agent output at
 * DERIVE_OUT_TURN_MAX per step, DERIVE_OUT_MAX in all and AGENT_LINE_MAX
 * per line, `files` and the build log at their own caps.  A sparse file
 * claiming a terabyte, or one the sandbox never stops writing, therefore
 * costs the follower (one thread for every tenant's tasks) a bounded
 * read per step and a bounded read in all.
 */
#include "task/derive.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ws/wsfs.h"

void
derive_init(struct derive *d)
{
	memset(d, 0, sizeof(*d));
	d->dirfd = d->stepsfd = d->outfd = -1;
	buf_init(&d->steps, DERIVE_STEPS_MAX);
	buf_init(&d->line, AGENT_LINE_MAX + 1);
}

void
derive_release(struct derive *d)
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
	d->opened = false;
	d->parser = NULL;
	d->files = NULL;
	d->build_msg = NULL;
}

void
derive_reset(struct derive *d)
{
	derive_release(d);
	derive_init(d);
}

void
derive_open(struct derive *d, int dirfd, enum agent_kind kind)
{
	d->dirfd = dirfd;
	d->opened = true;
	d->parser = agent_parser_new(kind);
}

/* ---- reading the supervisor's files ---------------------------------- */

/* Opens a regular file of the task directory; -1 when not (yet) there. */
static int
open_reg(int dirfd, const char *name)
{
	return wsfs_open_file(dirfd, name, NULL);
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

void
derive_last_line(const struct derive *d, const char *name, char *out,
                 size_t len)
{
	char *t, *p, *end;

	out[0] = '\0';
	if (!d->opened || (t = read_tail(d->dirfd, name, 1024)) == NULL)
		return;
	end = t + strlen(t);
	while (end > t && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	p = strrchr(t, '\n');
	snprintf(out, len, "%s", p ? p + 1 : t);
	free(t);
}

/* ---- events ---------------------------------------------------------- */

static void
emit_status(const struct derive_sink *s, const char *phase)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "phase", phase);
	s->emit(s->ctx, "status", o);
}

/* Feeds complete lines of agent output to the parser. */
static void
agent_feed(const struct derive_sink *s, struct derive *d, const char *p,
           size_t n, bool eof)
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
			                 s->emit, s->ctx);
		buf_reset(&d->line);
		d->line_skip = false;
		n -= take + 1;
		p = nl + 1;
	}
	if (eof) {
		if (!d->line_skip && d->line.len)
			agent_parse_line(d->parser, d->line.data, d->line.len,
			                 s->emit, s->ctx);
		buf_reset(&d->line);
		d->line_skip = false;
	}
}

/*
 * Reads what the agent wrote since last time, at most DERIVE_OUT_TURN_MAX
 * bytes.  With drain, true once the output is read to its end (or to
 * DERIVE_OUT_MAX, past which nothing more is read: a sparse file or one
 * that never stops growing would otherwise hold the follower, which
 * every task shares), and the last line is then fed.  The events depend
 * only on the first DERIVE_OUT_MAX bytes, however the reads are cut.
 */
static bool
agent_read(const struct derive_sink *s, struct derive *d, bool drain,
           size_t turn_max)
{
	char *chunk = NULL;
	size_t turn = 0, want;
	ssize_t n = 0;
	bool end;

	if (d->outfd < 0)
		d->outfd = open_reg(d->dirfd, "agent.out");
	if (d->outfd >= 0)
		chunk = malloc(DERIVE_OUT_CHUNK);
	while (chunk && turn < turn_max && d->out_read < DERIVE_OUT_MAX) {
		want = DERIVE_OUT_MAX - d->out_read;
		if (want > DERIVE_OUT_CHUNK)
			want = DERIVE_OUT_CHUNK;
		if ((n = read(d->outfd, chunk, want)) <= 0)
			break;
		agent_feed(s, d, chunk, (size_t)n, false);
		turn += (size_t)n;
		d->out_read += (size_t)n;
	}
	/* No output (or no memory for it) is an end too. */
	end = chunk == NULL || n <= 0 || d->out_read >= DERIVE_OUT_MAX;
	free(chunk);
	if (drain && end)
		agent_feed(s, d, "", 0, true);
	return end;
}

void
derive_abandon_agent(struct derive *d, const struct derive_sink *s)
{
	if (d->in_agent && !d->agent_done && d->parser) {
		agent_read(s, d, true, DERIVE_OUT_MAX);
		agent_parser_finish(d->parser, 0, &d->oc);
	}
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
	if (read_small(d->dirfd, "files", DERIVE_FILES_READ_MAX, &b) < 0) {
		buf_release(&b);
		return;
	}
	for (p = b.data; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p == '\0')
			continue;
		if (d->nfiles++ < DERIVE_FILES_MAX)
			jv_push(d->files, jv_new_str_lossy(p, strlen(p)));
	}
	buf_release(&b);
}

static void
on_build(const struct derive_sink *s, struct derive *d, char **f)
{
	struct jv *o = jv_obj();
	bool ok = strcmp(f[1], "passed") == 0;

	d->built = true;
	snprintf(d->build_status, sizeof(d->build_status), "%s",
	         ok ? "passed" : "failed");
	free(d->build_msg);
	d->build_msg = NULL;
	if (!ok) {
		char *tail =
		    read_tail(d->dirfd, "build.log", DERIVE_BUILD_TAIL);
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
	s->emit(s->ctx, "build", o);
}

/*
 * Whether the agent's run ended in a failure (result.c's order: timeout,
 * cancel, OOM, no start, an error in its stream).  Then no build or
 * health check is shown: the supervisor may still run the build (an
 * error in the stream is ours to see, not its), but nothing that reads
 * "passed" follows a failure.
 */
static bool
agent_failed(const struct derive *d)
{
	return d->agent_done &&
	       (strcmp(d->how, "exited") != 0 || d->oc.error != NULL);
}

/* One steps record. */
static void
on_record(const struct derive_sink *s, struct derive *d, char *line)
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
			if (strcmp(f[1], known[i]) == 0 &&
			    !(i >= 2 && agent_failed(d)))
				emit_status(s, known[i]);
		if (strcmp(f[1], "agent_running") == 0)
			d->in_agent = true;
	} else if (strcmp(f[0], "checkpoint") == 0) {
		size_t n = strlen(f[1]); /* SHA-1, or SHA-256 repositories */
		bool hex = (n == 40 || n == 64) &&
		           strspn(f[1], "0123456789abcdef") == n;
		snprintf(d->ckpt, sizeof(d->ckpt), "%s", hex ? f[1] : "");
		snprintf(d->ckpt_err, sizeof(d->ckpt_err), "%s", f[2]);
	} else if (strcmp(f[0], "agent") == 0 && !d->agent_done) {
		d->in_agent = false;
		d->agent_done = true;
		d->agent_code = (int)strtol(f[1], NULL, 10);
		snprintf(d->how, sizeof(d->how), "%s", f[2]);
		agent_parser_finish(d->parser, d->agent_code, &d->oc);
	} else if (strcmp(f[0], "files") == 0) {
		read_files(d);
	} else if (strcmp(f[0], "build") == 0 && !agent_failed(d)) {
		on_build(s, d, f);
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

/* Whether the next steps record (whole, in d->steps) is `agent`. */
static bool
is_agent_record(const struct derive *d)
{
	return d->steps.len >= 6 && memcmp(d->steps.data, "agent", 5) == 0 &&
	       (d->steps.data[5] == '\t' || d->steps.data[5] == '\n');
}

void
derive_step(struct derive *d, const struct derive_sink *s)
{
	char chunk[4096];
	ssize_t n;

	if (!d->opened)
		return;
	if (d->stepsfd < 0 && (d->stepsfd = open_reg(d->dirfd, "steps")) < 0)
		return;
	while (!d->ended && !d->corrupt) {
		char *nl;
		size_t used;
		if (d->in_agent)
			agent_read(s, d, false, DERIVE_OUT_TURN_MAX);
		nl = d->steps.len ? memchr(d->steps.data, '\n', d->steps.len)
		                  : NULL;
		if (nl == NULL) {
			if (d->steps_read >= DERIVE_STEPS_FILE_MAX) {
				d->corrupt = true; /* no pipeline has so many */
				break;
			}
			n = read(d->stepsfd, chunk, sizeof(chunk));
			if (n <= 0)
				break;
			d->steps_read += (size_t)n;
			if (buf_append(&d->steps, chunk, (size_t)n) < 0)
				d->corrupt = true;
			continue;
		}
		/* The agent's record is taken once its output is drained,
		 * a turn at a time, so a long output costs the follower
		 * DERIVE_OUT_TURN_MAX per step, like a growing one. */
		if (d->in_agent && !d->agent_done && is_agent_record(d) &&
		    !agent_read(s, d, true, DERIVE_OUT_TURN_MAX))
			break;
		*nl = '\0';
		on_record(s, d, d->steps.data);
		used = (size_t)(nl - d->steps.data) + 1;
		memmove(d->steps.data, nl + 1, d->steps.len - used);
		d->steps.len -= used;
		d->steps.data[d->steps.len] = '\0';
		if (s->stopped && s->stopped(s->ctx))
			break;
	}
}
