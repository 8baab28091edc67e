/*
 * Unit tests of task/derive: fixture task directories
 * (tests/unit/fixtures/task/<name>/, as the supervisor leaves them) come
 * out as the exact events in <name>.events, and as the same events when
 * the files are read while the supervisor is still writing them, a few
 * bytes at a time: the events are a function of the files' contents,
 * not of when we read.  Hostile directories (links, FIFOs, overlong
 * lines, an endless steps record) yield nothing they should not and
 * never block.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/jv.h"
#include "task/derive.h"
#include "unit.h"

#define FIXTURES "tests/unit/fixtures/task/"

/* Events as text, one "type data" line each. */
struct run {
	struct buf events;
	int nevents;
	bool stop; /* the sink asks derive_step to stop after each record */
};

static void
collect(void *ctx, const char *type, struct jv *data)
{
	struct run *r = ctx;

	r->nevents++;
	buf_appendf(&r->events, "%s ", type);
	jv_dump(data, &r->events);
	buf_append(&r->events, "\n", 1);
	jv_free(data);
}

static bool
stopped(void *ctx)
{
	return ((struct run *)ctx)->stop;
}

static const char *
text(const struct run *r)
{
	return r->events.data ? r->events.data : "";
}

static int
read_file(const char *path, struct buf *b)
{
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_append(b, chunk, (size_t)n);
	close(fd);
	return n < 0 ? -1 : 0;
}

static int
write_file(int dirfd, const char *name, const void *p, size_t n, bool append)
{
	int fd = openat(dirfd, name,
	                O_WRONLY | O_CREAT | O_CLOEXEC |
	                    (append ? O_APPEND : O_TRUNC),
	                0600);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = n ? write(fd, p, n) : 0;
	close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static int
open_dir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static char tmp[64];

static int
tmp_dir(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sandboxd-unit-derive.XXXXXX");
	CHECK(mkdtemp(tmp) != NULL);
	return open_dir(tmp);
}

static void
tmp_remove(void)
{
	static const char *const names[] = {
	    "steps",     "agent.out", "agent.log", "files",
	    "build.log", "outside",   "outside.d"};
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, names[i]);
		unlink(path);
	}
	rmdir(tmp);
}

/* Derives a directory as it is now, to its end (a restart's view). */
static void
derive_whole(int dirfd, enum agent_kind kind, struct run *r, struct derive *d)
{
	struct derive_sink s = {collect, stopped, r};

	derive_init(d);
	derive_open(d, dirfd, kind);
	derive_step(d, &s);
	/* A stopping sink gets one record per step; more steps, the rest. */
	for (int i = 0; r->stop && i < 100; i++)
		derive_step(d, &s);
	derive_abandon_agent(d, &s);
}

/*
 * Writes a fixture into an empty directory in the supervisor's order,
 * deriving after every write: each steps record in two pieces, and the
 * agent's output in small chunks right after `phase agent_running`
 * (the agent ran, and exited, before its record).
 */
static void
derive_grown(const char *fixture, enum agent_kind kind, struct run *r,
             struct derive *d)
{
	static const char *const side[] = {"files", "build.log", "agent.log"};
	struct derive_sink s = {collect, NULL, r};
	struct buf steps, out, b;
	char path[256];
	int dirfd = tmp_dir();

	for (size_t i = 0; i < sizeof(side) / sizeof(*side); i++) {
		snprintf(path, sizeof(path), FIXTURES "%s/%s", fixture,
		         side[i]);
		buf_init(&b, 0);
		if (read_file(path, &b) == 0)
			CHECK(write_file(dirfd, side[i], b.data, b.len,
			                 false) == 0);
		buf_release(&b);
	}
	buf_init(&steps, 0);
	buf_init(&out, 0);
	snprintf(path, sizeof(path), FIXTURES "%s/steps", fixture);
	CHECK(read_file(path, &steps) == 0);
	snprintf(path, sizeof(path), FIXTURES "%s/agent.out", fixture);
	read_file(path, &out);
	derive_init(d);
	derive_open(d, dup(dirfd), kind);
	derive_step(d, &s); /* no steps yet: nothing */
	CHECK(r->nevents == 0);
	for (size_t at = 0; at < steps.len;) {
		const char *rec = steps.data + at;
		const char *nl = memchr(rec, '\n', steps.len - at);
		size_t len = nl ? (size_t)(nl - rec) + 1 : steps.len - at;
		size_t half = len / 2;
		CHECK(write_file(dirfd, "steps", rec, half, true) == 0);
		derive_step(d, &s);
		CHECK(write_file(dirfd, "steps", rec + half, len - half,
		                 true) == 0);
		derive_step(d, &s);
		if (strncmp(rec, "phase\tagent_running", 19) == 0)
			for (size_t o = 0; o < out.len; o += 97) {
				size_t n = out.len - o < 97 ? out.len - o : 97;
				CHECK(write_file(dirfd, "agent.out",
				                 out.data + o, n, true) == 0);
				derive_step(d, &s);
			}
		at += len;
	}
	derive_step(d, &s);
	derive_abandon_agent(d, &s);
	buf_release(&steps);
	buf_release(&out);
	close(dirfd);
}

static void
run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->events, 0);
}

/* Both ways give <fixture>.events; d is left as the whole derivation. */
static void
check_fixture(const char *fixture, enum agent_kind kind, struct derive *d)
{
	struct run whole, grown, stepwise;
	struct derive g, sw;
	struct buf want;
	char path[256];
	int dirfd;

	snprintf(path, sizeof(path), FIXTURES "%s.events", fixture);
	buf_init(&want, 0);
	if (read_file(path, &want) < 0) {
		fprintf(stderr, "  cannot read %s (run from the repo root)\n",
		        path);
		unit_failed = 1;
	}
	snprintf(path, sizeof(path), FIXTURES "%s", fixture);
	dirfd = open_dir(path);
	CHECK(dirfd >= 0);
	run_init(&whole);
	derive_whole(dirfd, kind, &whole, d);
	CHECK_STR(text(&whole), want.data ? want.data : "");

	run_init(&stepwise);
	stepwise.stop = true;
	derive_whole(open_dir(path), kind, &stepwise, &sw);
	CHECK_STR(text(&stepwise), text(&whole));
	derive_release(&sw);

	run_init(&grown);
	derive_grown(fixture, kind, &grown, &g);
	CHECK_STR(text(&grown), text(&whole));
	CHECK(g.ended == d->ended && g.agent_done == d->agent_done &&
	      g.nfiles == d->nfiles && strcmp(g.ckpt, d->ckpt) == 0);
	derive_release(&g);
	tmp_remove();

	/* Deriving again from a reset gives the same events. */
	buf_reset(&whole.events);
	{
		struct derive_sink s = {collect, NULL, &whole};
		int again = open_dir(path);
		derive_reset(d);
		derive_open(d, again, kind);
		derive_step(d, &s);
		derive_abandon_agent(d, &s);
	}
	CHECK_STR(text(&whole), want.data ? want.data : "");
	buf_release(&whole.events);
	buf_release(&stepwise.events);
	buf_release(&grown.events);
	buf_release(&want);
}

static void
test_opencode_ok(void)
{
	struct derive d;

	check_fixture("opencode_ok", AGENT_OPENCODE, &d);
	CHECK(d.ended && !d.interrupted && !d.corrupt);
	CHECK(d.started_ms == 1764600000000 && d.ended_ms == 1764600042000);
	CHECK_STR(d.ckpt, "0123456789abcdef0123456789abcdef01234567");
	CHECK(d.agent_done && d.agent_code == 0);
	CHECK_STR(d.how, "exited");
	CHECK(d.oc.error == NULL && d.oc.final_message != NULL);
	CHECK(d.nfiles == 2 && jv_len(d.files) == 2);
	CHECK_STR(jv_str(jv_at(d.files, 1)), "package.json");
	CHECK(d.built && d.build_msg == NULL);
	CHECK_STR(d.build_status, "passed");
	CHECK(d.health_seen);
	CHECK_STR(d.health, "ready");
	CHECK_STR(d.health_detail, "GET / answered 200");
	derive_release(&d);
}

static void
test_claude_error(void)
{
	struct derive d;

	check_fixture("claude_error", AGENT_CLAUDE, &d);
	CHECK(d.ended && d.agent_done && d.agent_code == 1);
	CHECK_STR(d.ckpt, "0123456789abcdef0123456789abcdef0123456789abcdef0"
	                  "123456789abcdef"); /* a SHA-256 repository */
	CHECK(d.oc.error != NULL);
	CHECK(!d.built && d.nfiles == 0 && jv_len(d.files) == 0);
	CHECK_STR(d.health, "none");
	derive_release(&d);
}

static void
test_build_failed(void)
{
	struct derive d;

	check_fixture("build_failed", AGENT_OPENCODE, &d);
	CHECK_STR(d.ckpt, "");
	CHECK_STR(d.ckpt_err, "fatal: not a git repository");
	CHECK(d.built);
	CHECK_STR(d.build_status, "failed");
	CHECK_STR(d.build_msg, "the build did not finish in time\nnpm run "
	                       "build\n> vite build\nerror: something broke\n");
	CHECK_STR(d.health, "error");
	derive_release(&d);
}

static void
test_interrupted(void)
{
	struct derive d;

	check_fixture("interrupted", AGENT_OPENCODE, &d);
	CHECK(d.ended && d.interrupted && !d.agent_done);
	CHECK(d.in_agent); /* the output was read to its end regardless */
	derive_release(&d);
}

static void
test_spawn_failed(void)
{
	struct derive d;
	char why[256];

	check_fixture("spawn_failed", AGENT_OPENCODE, &d);
	CHECK(d.agent_done && d.agent_code == 127);
	CHECK_STR(d.how, "spawn_failed");
	derive_last_line(&d, "agent.log", why, sizeof(why));
	CHECK_STR(why, "exec opencode: No such file or directory");
	derive_last_line(&d, "no-such-file", why, sizeof(why));
	CHECK_STR(why, "");
	derive_release(&d);
}

static void
test_hostile_records(void)
{
	struct derive d;

	check_fixture("hostile", AGENT_OPENCODE, &d);
	CHECK(d.ended && !d.corrupt && d.started_ms == 0);
	CHECK_STR(d.ckpt, "");    /* upper-case hex is not a commit id */
	CHECK(d.agent_code == 0); /* the second agent record is ignored */
	CHECK_STR(d.how, "exited");
	CHECK(d.nfiles == 3 && jv_len(d.files) == 3);
	CHECK_STR(d.build_status, "failed");
	CHECK_STR(d.build_msg, "the build failed (no output)");
	CHECK(strlen(d.health_detail) == sizeof(d.health_detail) - 1);
	CHECK_STR(d.health, "ready"); /* records after end are not read */
	derive_release(&d);
}

/* Links and FIFOs planted by the sandbox are not followed or read. */
static void
test_links_and_fifos(void)
{
	static const char agent_line[] =
	    "{\"type\":\"text\",\"part\":{\"type\":\"text\",\"text\":"
	    "\"leaked\",\"time\":{\"end\":1}}}\n";
	static const char steps[] = "phase\tagent_running\nfiles\t1\n"
	                            "agent\t0\texited\nend\t1\tended\n";
	struct run r;
	struct derive d;
	struct derive_sink s = {collect, NULL, &r};
	char path[128];
	int dirfd = tmp_dir();

	run_init(&r);
	/* steps a FIFO: the open must not block, and nothing is read. */
	snprintf(path, sizeof(path), "%s/steps", tmp);
	CHECK(mkfifo(path, 0600) == 0);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	derive_step(&d, &s);
	CHECK(r.nevents == 0 && d.stepsfd < 0);
	unlink(path);

	/* agent.out and files as links to a file outside the directory. */
	CHECK(write_file(dirfd, "outside", agent_line, strlen(agent_line),
	                 false) == 0);
	CHECK(symlinkat("outside", dirfd, "agent.out") == 0);
	CHECK(symlinkat("outside", dirfd, "files") == 0);
	CHECK(write_file(dirfd, "steps", steps, strlen(steps), false) == 0);
	derive_step(&d, &s);
	CHECK_STR(text(&r), "status {\"phase\":\"agent_running\"}\n");
	CHECK(d.ended && d.nfiles == 0 && d.oc.final_message == NULL);
	derive_release(&d);

	/* A task directory whose steps is a directory: nothing either. */
	unlinkat(dirfd, "steps", 0);
	CHECK(mkdirat(dirfd, "steps", 0700) == 0);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	derive_step(&d, &s);
	CHECK(d.stepsfd < 0);
	derive_release(&d);
	unlinkat(dirfd, "steps", AT_REMOVEDIR);
	unlinkat(dirfd, "agent.out", 0);
	unlinkat(dirfd, "files", 0);
	close(dirfd);
	tmp_remove();
	buf_release(&r.events);
}

/* An overlong agent line is dropped whole; the next one counts. */
static void
test_overlong_agent_line(void)
{
	static const char head[] = "{\"type\":\"text\",\"part\":{\"text\":\"";
	static const char tail[] =
	    "\n{\"type\":\"text\",\"part\":{\"type\":\"text\",\"text\":"
	    "\"short\",\"time\":{\"end\":1}}}\n";
	static const char steps[] = "phase\tagent_running\nagent\t0\texited\n";
	size_t n = AGENT_LINE_MAX + 10;
	char *big = malloc(n + sizeof(tail));
	struct run r;
	struct derive d;
	struct derive_sink s = {collect, NULL, &r};
	int dirfd = tmp_dir();

	CHECK(big != NULL);
	memset(big, ' ', n);
	memcpy(big, head, strlen(head));
	memcpy(big + n, tail, sizeof(tail));
	CHECK(write_file(dirfd, "agent.out", big, n + sizeof(tail) - 1,
	                 false) == 0);
	CHECK(write_file(dirfd, "steps", steps, strlen(steps), false) == 0);
	run_init(&r);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	derive_step(&d, &s);
	CHECK(d.agent_done && !d.ended);
	CHECK(strstr(text(&r), "short") != NULL);
	CHECK(r.nevents == 2); /* agent_running, the short message */
	derive_release(&d);
	free(big);
	close(dirfd);
	tmp_remove();
	buf_release(&r.events);
}

/* A steps record that never ends is malformed, not a memory sink. */
static void
test_endless_record(void)
{
	char *junk = malloc(DERIVE_STEPS_MAX + 1);
	struct run r;
	struct derive d;
	struct derive_sink s = {collect, NULL, &r};
	int dirfd = tmp_dir();

	CHECK(junk != NULL);
	memset(junk, 'x', DERIVE_STEPS_MAX + 1);
	CHECK(write_file(dirfd, "steps", junk, DERIVE_STEPS_MAX + 1, false) ==
	      0);
	run_init(&r);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	derive_step(&d, &s);
	CHECK(d.corrupt && !d.ended && r.nevents == 0);
	CHECK(d.steps.len <= DERIVE_STEPS_MAX);
	derive_release(&d);
	free(junk);
	close(dirfd);
	tmp_remove();
	buf_release(&r.events);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * agent.out as a sparse file claiming a terabyte: each step reads a
 * bounded amount (the follower serves every tenant's tasks between two
 * steps), the agent's record is taken after at most DERIVE_OUT_MAX, and
 * a line past that cap is never seen, however the reads were cut.
 */
static void
test_sparse_agent_out(void)
{
	static const char steps[] = "phase\tagent_running\nagent\t0\texited\n"
	                            "end\t1\tok\n";
	static const char late[] =
	    "\n{\"type\":\"text\",\"part\":{\"type\":\"text\",\"text\":"
	    "\"late\",\"time\":{\"end\":1}}}\n";
	struct run r;
	struct derive d;
	struct derive_sink s = {collect, NULL, &r};
	int dirfd = tmp_dir(), fd, steps_taken = 0;
	int64_t t0, slowest = 0;

	fd = openat(dirfd, "agent.out", O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)1 << 40) == 0);
	CHECK(pwrite(fd, late, strlen(late), (off_t)DERIVE_OUT_MAX + 10) > 0);
	close(fd);
	CHECK(write_file(dirfd, "steps", steps, strlen(steps), false) == 0);
	run_init(&r);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	while (!d.ended && steps_taken < 100) {
		size_t before = d.out_read;
		t0 = now_ms();
		derive_step(&d, &s);
		if (now_ms() - t0 > slowest)
			slowest = now_ms() - t0;
		CHECK(d.out_read - before <= 2 * DERIVE_OUT_TURN_MAX);
		steps_taken++;
	}
	CHECK(d.agent_done && d.ended);
	CHECK(d.out_read == DERIVE_OUT_MAX);
	CHECK(steps_taken > 1 && steps_taken < 100);
	CHECK(slowest < 1000);
	CHECK(strstr(text(&r), "late") == NULL);
	derive_release(&d);

	/* A task that ends without the agent's record reads no further. */
	buf_reset(&r.events);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	CHECK(write_file(dirfd, "steps", steps, 20, false) == 0);
	derive_step(&d, &s);
	t0 = now_ms();
	derive_abandon_agent(&d, &s);
	CHECK(now_ms() - t0 < 2000);
	CHECK(d.out_read == DERIVE_OUT_MAX);
	derive_release(&d);
	close(dirfd);
	tmp_remove();
	buf_release(&r.events);
}

/* A steps file of endless short records is malformed past its cap. */
static void
test_endless_steps(void)
{
	size_t n = DERIVE_STEPS_FILE_MAX + (64u << 10);
	char *junk = malloc(n);
	struct run r;
	struct derive d;
	struct derive_sink s = {collect, NULL, &r};
	int dirfd = tmp_dir();

	CHECK(junk != NULL);
	for (size_t i = 0; i < n; i += 2)
		memcpy(junk + i, "x\n", 2);
	CHECK(write_file(dirfd, "steps", junk, n, false) == 0);
	run_init(&r);
	derive_init(&d);
	derive_open(&d, dup(dirfd), AGENT_OPENCODE);
	derive_step(&d, &s);
	CHECK(d.corrupt && !d.ended && r.nevents == 0);
	CHECK(d.steps_read <= DERIVE_STEPS_FILE_MAX + 4096);
	derive_release(&d);
	free(junk);
	close(dirfd);
	tmp_remove();
	buf_release(&r.events);
}

static void
test_unopened(void)
{
	struct run r;
	struct derive d;
	struct derive_sink s = {collect, NULL, &r};
	char why[16];

	run_init(&r);
	derive_init(&d);
	derive_step(&d, &s); /* the directory is not there yet */
	derive_abandon_agent(&d, &s);
	derive_last_line(&d, "agent.log", why, sizeof(why));
	CHECK(r.nevents == 0 && why[0] == '\0');
	derive_reset(&d);
	derive_release(&d);
	buf_release(&r.events);
}

static const struct unit_test tests[] = {
    {"an opencode task that succeeded", test_opencode_ok},
    {"a claude task whose agent failed", test_claude_error},
    {"a failed checkpoint and a build that timed out", test_build_failed},
    {"a task a restart interrupted", test_interrupted},
    {"an agent that could not be started", test_spawn_failed},
    {"unknown, malformed and late records", test_hostile_records},
    {"links and FIFOs are not followed", test_links_and_fifos},
    {"an overlong agent line is dropped", test_overlong_agent_line},
    {"an endless steps record is malformed", test_endless_record},
    {"a sparse terabyte agent.out is read within its caps",
     test_sparse_agent_out},
    {"endless short steps records are malformed", test_endless_steps},
    {"nothing opened, nothing derived", test_unopened},
};

int
main(void)
{
	return UNIT_RUN("task derive", tests);
}
