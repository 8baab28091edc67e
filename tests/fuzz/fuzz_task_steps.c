/*
 * libFuzzer target: deriving a task's events from a task directory the
 * sandbox wrote (task/derive.c) and the result they come to
 * (task/result.c).  The input is cut at "\n--8<--\n" into the files
 * `steps`, `agent.out`, `files`, `build.log` and `agent.log` (missing
 * parts: no file); its first byte picks the agent.  The directory is
 * derived twice, once in one go and once one record per step; both must
 * give the same events, every event must be an object of a known type
 * that dumps as JSON, the state must keep its limits, and the result
 * must build for every way of ending.  Nothing may crash, leak or read
 * out of bounds.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/jv.h"
#include "lib/utf8.h"
#include "task/derive.h"
#include "task/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CUT "\n--8<--\n"

static const char *const names[] = {"steps", "agent.out", "files", "build.log",
                                    "agent.log"};
static int dirfd = -1;
static char tmp[] = "/tmp/fuzz-task-steps.XXXXXX";

static void
cleanup(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		unlinkat(dirfd, names[i], 0);
	rmdir(tmp);
}

struct run {
	struct buf events;
	bool stop;
};

static void
collect(void *ctx, const char *type, struct jv *data)
{
	struct run *r = ctx;

	if (jv_type(data) != JV_OBJECT)
		__builtin_trap();
	if (strcmp(type, "status") != 0 && strcmp(type, "message") != 0 &&
	    strcmp(type, "tool") != 0 && strcmp(type, "build") != 0)
		__builtin_trap();
	buf_appendf(&r->events, "%s ", type);
	if (jv_dump(data, &r->events) < 0)
		__builtin_trap();
	buf_append(&r->events, "\n", 1);
	jv_free(data);
}

static bool
stopped(void *ctx)
{
	return ((struct run *)ctx)->stop;
}

static void
derive_all(enum agent_kind kind, struct run *r, struct derive *d)
{
	struct derive_sink s = {collect, stopped, r};
	int fd = dup(dirfd);

	if (fd < 0)
		__builtin_trap();
	buf_init(&r->events, 64u << 20);
	derive_init(d);
	derive_open(d, fd, kind);
	derive_step(d, &s);
	/* One record per step, until a step reads and does nothing. */
	while (r->stop && !d->ended && !d->corrupt && d->stepsfd >= 0) {
		off_t at = lseek(d->stepsfd, 0, SEEK_CUR);
		size_t left = d->steps.len;
		derive_step(d, &s);
		if (lseek(d->stepsfd, 0, SEEK_CUR) == at &&
		    d->steps.len == left)
			break;
	}
	derive_abandon_agent(d, &s);
}

static void
check_state(const struct derive *d)
{
	size_t n = strlen(d->ckpt);

	if (n &&
	    ((n != 40 && n != 64) || strspn(d->ckpt, "0123456789abcdef") != n))
		__builtin_trap();
	if (d->files && jv_len(d->files) > DERIVE_FILES_MAX)
		__builtin_trap();
	/* The tail is DERIVE_BUILD_TAIL bytes of the log; each invalid byte
	 * of it becomes U+FFFD (3 bytes). */
	if (d->build_msg &&
	    (strlen(d->build_msg) > 3 * DERIVE_BUILD_TAIL + 64 ||
	     !utf8_valid(d->build_msg, strlen(d->build_msg))))
		__builtin_trap();
	if (d->steps.len > DERIVE_STEPS_MAX)
		__builtin_trap();
}

static void
check_results(const struct derive *d)
{
	static const char *const reasons[] = {"", "cancelled", "internal"};
	struct task t;
	struct buf b;

	memset(&t, 0, sizeof(t));
	memcpy(t.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV", 27);
	memcpy(t.agent, "opencode", 9);
	t.prompt = (char *)"p";
	t.timeout_s = 600;
	t.created_at = 1;
	for (size_t i = 0; i < 6; i++) {
		struct task_end end = {0};
		struct result_outcome o;
		struct jv *r;
		memcpy(end.reason, reasons[i % 3], strlen(reasons[i % 3]) + 1);
		end.cancelled = i >= 3;
		end.sb_oom = i & 1;
		result_classify(&t, d, &end, &o);
		if (task_state_name(o.status) == NULL)
			__builtin_trap();
		r = result_json(&t, d, &o, d->ended_ms);
		buf_init(&b, 64u << 20);
		if (jv_type(r) != JV_OBJECT || jv_dump(r, &b) < 0)
			__builtin_trap();
		buf_release(&b);
		jv_free(r);
	}
}

static void
write_parts(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		const char *cut;
		size_t len;
		int fd;
		unlinkat(dirfd, names[i], 0);
		if (p == NULL)
			continue;
		cut = memmem(p, (size_t)(end - p), CUT, sizeof(CUT) - 1);
		len = cut ? (size_t)(cut - p) : (size_t)(end - p);
		fd = openat(dirfd, names[i], O_WRONLY | O_CREAT | O_CLOEXEC,
		            0600);
		if (fd < 0 || (len && write(fd, p, len) != (ssize_t)len))
			__builtin_trap();
		close(fd);
		p = cut ? cut + sizeof(CUT) - 1 : NULL;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum agent_kind kind;
	struct run whole = {0}, stepwise = {.stop = true};
	struct derive a, b;

	if (dirfd < 0) {
		if (mkdtemp(tmp) == NULL)
			__builtin_trap();
		dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			__builtin_trap();
		atexit(cleanup);
	}
	if (size == 0)
		return 0;
	kind = data[0] & 1 ? AGENT_CLAUDE : AGENT_OPENCODE;
	write_parts(data + 1, size - 1);

	derive_all(kind, &whole, &a);
	derive_all(kind, &stepwise, &b);
	if (whole.events.len != stepwise.events.len ||
	    (whole.events.len && memcmp(whole.events.data, stepwise.events.data,
	                                whole.events.len) != 0))
		__builtin_trap();
	check_state(&a);
	check_results(&a);
	derive_release(&a);
	derive_release(&b);
	buf_release(&whole.events);
	buf_release(&stepwise.events);
	return 0;
}
