/*
 * problem.c - a sandbox's problem, from its supervisor's process states
 * and the tail of its web process's log; and the last process list seen.
 *
 * Where the scan runs, and why here (docs/design.md, "The app's
 * problem"): the daemon reads the last APPLOG_TAIL bytes of the log the
 * supervisor already writes into the workspace, when a sandbox's JSON is
 * made.  The supervisor is baked into the sandbox image, so a scanner
 * there would only reach sandboxes made from a rebuilt image; here it
 * costs one confined open (wsfs, openat2: the workspace is the
 * sandbox's to plant symlinks in), an fstat and one pread of 32 KiB per
 * poll, whatever the log's size, and the matching table can grow with
 * the daemon.
 *
 * The log is only ever read from its fd: a FIFO or a device planted in
 * its place is refused by wsfs_open_file, and nothing past the tail is
 * read.  "since" is remembered per sandbox with the error's signature
 * (logscan.h): the same error printed again keeps its first time.
 *
 * A fixed file clears a compile error even when the dev server prints
 * nothing on success (Vite logs a transform error when a client asks for
 * the module, and nothing when it compiles): the error names the file,
 * and a file of the workspace changed after the log's last write was
 * changed after the error.  Still broken, the next request for it prints
 * the error again, which makes the log the newer of the two.
 */
#include "applog/problem.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applog/logscan.h"
#include "lib/clock.h"
#include "lib/idtab.h"
#include "lib/ulid.h"
#include "ws/wsfs.h"

struct seen_proc {
	char name[APPLOG_NAME];
	bool web;
	int port; /* 0: none */
};

struct seen {
	char id[ULID_LEN + 1];
	int64_t used;  /* clock_now_ms of the last use */
	char kind[16]; /* the problem's kind, "" when none */
	uint32_t sig;
	int64_t since;
	size_t nprocs;
	struct seen_proc procs[APPLOG_PROCS];
};

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static struct seen seen_slots[APPLOG_TABLE];
static struct idtab seen_tab;
static bool seen_ready;

static int64_t
seen_keep(const void *entry)
{
	return ((const struct seen *)entry)->used;
}

/* id's entry, made if missing; call with seen_mu held. */
static struct seen *
seen_get(const char *id)
{
	struct seen *s;

	if (!seen_ready) {
		idtab_init(&seen_tab, seen_slots, APPLOG_TABLE,
		           sizeof(seen_slots[0]), seen_keep);
		seen_ready = true;
	}
	if (strlen(id) != ULID_LEN)
		return NULL;
	s = idtab_put(&seen_tab, id);
	if (s)
		s->used = clock_now_ms();
	return s;
}

/* The web process of a status's list, or NULL. */
static const struct jv *
web_of(const struct jv *procs)
{
	for (size_t i = 0; procs && i < jv_len(procs); i++) {
		const char *k = jv_str(jv_get(jv_at(procs, i), "kind"));
		if (k && strcmp(k, "web") == 0)
			return jv_at(procs, i);
	}
	return NULL;
}

/*
 * The last APPLOG_TAIL bytes of <ws>/.sandboxd/logs/<name>.log, from the
 * first whole line, into buf (NUL-terminated), and the log's mtime into
 * *mtime.  Returns their length; 0 when there is no such file or it
 * cannot be read.
 */
static ssize_t
read_tail_remote(const struct wsnode_ref *src, const char *rel, char *buf,
                 struct timespec *mtime, off_t *off)
{
	struct err e = {0};
	struct buf b;
	char type[8];
	int64_t size, mt;
	bool eof;
	ssize_t n = 0;

	if (wsnode_stat(src->wn, src->sb, rel, type, &size, &mt, &e) < 0 ||
	    strcmp(type, "file") != 0)
		return 0;
	*mtime = (struct timespec){.tv_sec = mt};
	if (size > (int64_t)APPLOG_TAIL)
		*off = (off_t)(size - (int64_t)APPLOG_TAIL);
	buf_init(&b, APPLOG_TAIL + 1);
	if (wsnode_read(src->wn, src->sb, rel, *off, APPLOG_TAIL, &b, &eof,
	                &e) == 0 &&
	    b.len <= APPLOG_TAIL) {
		memcpy(buf, b.data ? b.data : "", b.len);
		n = (ssize_t)b.len;
	}
	buf_release(&b);
	return n;
}

static size_t
read_tail(const struct wsnode_ref *src, const char *name, char *buf,
          struct timespec *mtime)
{
	char rel[96];
	struct err e = {0};
	struct stat st;
	off_t off = 0;
	ssize_t n;
	int dfd, fd;
	char *nl;

	snprintf(rel, sizeof(rel), ".sandboxd/logs/%s.log", name);
	if (wsnode_remote(src->sb)) {
		n = read_tail_remote(src, rel, buf, mtime, &off);
		goto got;
	}
	if ((dfd = wsfs_open_dir(src->ws, "", &e)) < 0)
		return 0;
	fd = wsfs_open_file(dfd, rel, &e);
	close(dfd);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0) {
		*mtime = st.st_mtim;
		if (st.st_size > (off_t)APPLOG_TAIL)
			off = st.st_size - (off_t)APPLOG_TAIL;
	}
	n = pread(fd, buf, APPLOG_TAIL, off);
	close(fd);
got:
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (off > 0 && (nl = memchr(buf, '\n', (size_t)n)) != NULL) {
		size_t skip = (size_t)(nl - buf) + 1;
		memmove(buf, buf + skip, (size_t)n - skip + 1);
		n -= (ssize_t)skip;
	}
	return (size_t)n;
}

/* The home directory inside the sandbox: the workspace on the host. */
#define SANDBOX_HOME "/home/sandbox/"

static bool
later(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec ||
	       (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

/* named_file_changed for a remote workspace (mtimes in seconds there). */
static bool
remote_changed(const struct wsnode_ref *src, const char *rel,
               struct timespec log_mtime)
{
	struct err e = {0};
	char type[8];
	int64_t size, mt;

	return wsnode_stat(src->wn, src->sb, rel, type, &size, &mt, &e) == 0 &&
	       strcmp(type, "file") == 0 && mt > (int64_t)log_mtime.tv_sec;
}

/*
 * Whether the first file of the workspace an error's lines name (as
 * "/home/sandbox/…", the way the dev servers print paths) was changed
 * after log_mtime: then it was fixed, or changed, since the error.
 */
static bool
named_file_changed(const struct wsnode_ref *src, const struct logscan *ls,
                   struct timespec log_mtime)
{
	for (size_t i = 0; i < ls->nlines; i++) {
		const char *p = strstr(ls->lines[i], SANDBOX_HOME);
		char rel[LOGSCAN_LINE_MAX];
		struct err e = {0};
		struct stat st;
		size_t n;
		int dfd, fd;
		bool changed;

		if (p == NULL)
			continue;
		p += strlen(SANDBOX_HOME);
		n = strcspn(p, ": \t\"'()?");
		if (n == 0 || n >= sizeof(rel))
			continue;
		memcpy(rel, p, n);
		rel[n] = '\0';
		if (wsnode_remote(src->sb))
			return remote_changed(src, rel, log_mtime);
		if ((dfd = wsfs_open_dir(src->ws, "", &e)) < 0)
			return false;
		fd = wsfs_open_file(dfd, rel, &e);
		close(dfd);
		if (fd < 0)
			continue; /* not a file of the workspace: the next one
			           */
		changed = fstat(fd, &st) == 0 && later(st.st_mtim, log_mtime);
		close(fd);
		return changed;
	}
	return false;
}

/* The kind the supervisor's state of the web process gives, or NULL. */
static const char *
state_kind(const struct jv *web, int64_t *code)
{
	const char *st = web ? jv_str(jv_get(web, "state")) : NULL;
	const struct jv *ec = web ? jv_get(web, "exit_code") : NULL;

	*code = ec && jv_type(ec) == JV_INT ? jv_int(ec) : -1;
	if (st == NULL)
		return NULL;
	if (strcmp(st, "crashloop") == 0)
		return "crashloop";
	if (strcmp(st, "backoff") == 0 ||
	    ((strcmp(st, "exited") == 0 || strcmp(st, "stopped") == 0) &&
	     *code > 0))
		return "crashed";
	return NULL;
}

/* Stamps "since": the first time this sandbox showed this problem. */
static int64_t
since_of(const char *id, const char *kind, uint32_t sig)
{
	int64_t now = clock_now(), since = now;
	struct seen *s;

	pthread_mutex_lock(&seen_mu);
	if ((s = seen_get(id)) != NULL) {
		if (kind && strcmp(s->kind, kind) == 0 && s->sig == sig)
			since = s->since;
		snprintf(s->kind, sizeof(s->kind), "%s", kind ? kind : "");
		s->sig = sig;
		s->since = since;
	}
	pthread_mutex_unlock(&seen_mu);
	return since;
}

static struct jv *
problem_json(const char *kind, const char *process, const char *summary,
             const struct logscan *ls, int64_t since)
{
	struct jv *o = jv_obj(), *lines = jv_arr();
	char t[CLOCK_RFC3339_LEN];

	jv_set_str(o, "kind", kind);
	jv_set_str(o, "process", process);
	jv_set(o, "summary", jv_new_str_lossy(summary, strlen(summary)));
	for (size_t i = 0; i < ls->nlines; i++)
		jv_push(lines,
		        jv_new_str_lossy(ls->lines[i], strlen(ls->lines[i])));
	jv_set(o, "lines", lines);
	clock_rfc3339(since, t);
	jv_set_str(o, "since", t);
	return o;
}

struct jv *
applog_problem(const struct wsnode_ref *src, const char *id,
               const struct jv *procs)
{
	const struct jv *web = web_of(procs);
	const char *name = web ? jv_str(jv_get(web, "name")) : NULL;
	const char *kind;
	char summary[LOGSCAN_SUMMARY + 64];
	struct logscan *ls = NULL;
	struct jv *out = NULL;
	char *buf = NULL;
	struct timespec log_mtime = {0};
	size_t n;
	int64_t code;

	if (name == NULL || strlen(name) >= APPLOG_NAME)
		name = "web";
	kind = state_kind(web, &code);
	if ((ls = calloc(1, sizeof(*ls))) == NULL ||
	    (buf = malloc(APPLOG_TAIL + 1)) == NULL)
		goto out;
	n = read_tail(src, name, buf, &log_mtime);
	logscan_text(buf, n, ls);
	if (ls->kind == LOGSCAN_COMPILE &&
	    named_file_changed(src, ls, log_mtime))
		ls->kind = LOGSCAN_NONE;
	if (kind == NULL && ls->kind == LOGSCAN_NONE) {
		since_of(id, NULL, 0);
		goto out;
	}
	if (kind == NULL) {
		kind = ls->kind == LOGSCAN_COMPILE ? "compile_error"
		                                   : "runtime_error";
		snprintf(summary, sizeof(summary), "%s", ls->summary);
	} else if (ls->kind != LOGSCAN_NONE) {
		snprintf(summary, sizeof(summary), "%s", ls->summary);
	} else {
		logscan_tail(buf, n, LOGSCAN_LINES, ls);
		if (strcmp(kind, "crashloop") == 0)
			snprintf(summary, sizeof(summary),
			         "The %s process keeps exiting right after it "
			         "starts (exit code %lld).",
			         name, (long long)code);
		else
			snprintf(summary, sizeof(summary),
			         "The %s process exited (exit code %lld).",
			         name, (long long)code);
	}
	out =
	    problem_json(kind, name, summary, ls, since_of(id, kind, ls->sig));
out:
	free(buf);
	free(ls);
	return out ? out : jv_new_null();
}

struct jv *
applog_install_problem(const struct wsnode_ref *src, const char *id,
                       const struct jv *install)
{
	const char *st = jv_str(jv_get(install, "state"));
	const struct jv *ec = jv_get(install, "exit_code");
	char summary[LOGSCAN_SUMMARY + 96];
	const char *kind;
	struct timespec mtime;
	struct logscan *ls;
	struct jv *out;
	char *buf;
	size_t n;

	if (st == NULL ||
	    (strcmp(st, "running") != 0 && strcmp(st, "failed") != 0))
		return NULL;
	if ((ls = calloc(1, sizeof(*ls))) == NULL ||
	    (buf = malloc(APPLOG_TAIL + 1)) == NULL) {
		free(ls);
		return NULL;
	}
	n = read_tail(src, "install", buf, &mtime);
	if (strcmp(st, "running") == 0) {
		logscan_tail(buf, n, 5, ls);
		snprintf(summary, sizeof(summary), "installing dependencies");
	} else {
		logscan_tail(buf, n, 20, ls);
		snprintf(summary, sizeof(summary),
		         "the install failed (exit %lld): %s",
		         ec && jv_type(ec) == JV_INT ? (long long)jv_int(ec)
		                                     : -1LL,
		         ls->nlines ? ls->lines[ls->nlines - 1]
		                    : "see .sandboxd/logs/install.log");
	}
	kind = strcmp(st, "running") == 0 ? "installing" : "install_failed";
	out = problem_json(kind, "install", summary, ls, since_of(id, kind, 0));
	free(buf);
	free(ls);
	return out;
}

void
applog_procs_seen(const char *id, const struct jv *procs)
{
	struct seen *s;

	pthread_mutex_lock(&seen_mu);
	if ((s = seen_get(id)) != NULL) {
		s->nprocs = 0;
		for (size_t i = 0;
		     procs && i < jv_len(procs) && s->nprocs < APPLOG_PROCS;
		     i++) {
			const struct jv *p = jv_at(procs, i);
			const char *name = jv_str(jv_get(p, "name"));
			const char *k = jv_str(jv_get(p, "kind"));
			struct seen_proc *sp = &s->procs[s->nprocs];
			if (name == NULL || strlen(name) >= APPLOG_NAME)
				continue;
			snprintf(sp->name, sizeof(sp->name), "%s", name);
			sp->web = k && strcmp(k, "web") == 0;
			sp->port = (int)jv_int(jv_get(p, "port"));
			s->nprocs++;
		}
	}
	pthread_mutex_unlock(&seen_mu);
}

struct jv *
applog_procs_paused(const char *id)
{
	struct jv *list = jv_arr();
	struct seen *s;

	pthread_mutex_lock(&seen_mu);
	s = seen_ready && strlen(id) == ULID_LEN ? idtab_get(&seen_tab, id)
	                                         : NULL;
	for (size_t i = 0; s && i < s->nprocs; i++) {
		struct jv *o = jv_obj();
		jv_set_str(o, "name", s->procs[i].name);
		jv_set_str(o, "kind", s->procs[i].web ? "web" : "worker");
		jv_set_str(o, "state", "paused");
		if (s->procs[i].port > 0)
			jv_set_int(o, "port", s->procs[i].port);
		jv_push(list, o);
	}
	pthread_mutex_unlock(&seen_mu);
	return list;
}
