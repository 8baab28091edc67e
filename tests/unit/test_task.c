/*
 * Task pieces that need no sandbox: the agents' command lines and system
 * prompt, and the event log with its subscriptions (replay, resume from
 * an id, a torn tail cut at reopen, suspend when there is nothing new).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task/agentcmd.h"
#include "task/evlog.h"
#include "task/internal.h"
#include "task/task.h"
#include "unit.h"

/* argv as one string with '|' between arguments. */
static void
argv_text(const struct buf *b, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < b->len && o + 1 < len; i++)
		out[o++] = b->data[i] ? b->data[i] : '|';
	out[o] = '\0';
}

static void
test_opencode_argv(void)
{
	struct buf b;
	char t[4096];

	buf_init(&b, 0);
	CHECK(agentcmd_argv(AGENT_OPENCODE, "opencode/big-pickle", false, "SYS",
	                    "do it", NULL, &b) == 0);
	argv_text(&b, t, sizeof(t));
	CHECK_STR(t,
	          "opencode|run|--format|json|--dangerously-skip-permissions|"
	          "--model|opencode/big-pickle|SYS\n\n---\n\n# Your "
	          "task\n\ndo it|");
	buf_reset(&b);
	CHECK(agentcmd_argv(AGENT_OPENCODE, "", true, "SYS", "more", NULL,
	                    &b) == 0);
	argv_text(&b, t, sizeof(t));
	CHECK_STR(t,
	          "opencode|run|--format|json|--dangerously-skip-permissions|"
	          "--continue|more|");
	buf_release(&b);
}

static void
test_claude_argv(void)
{
	struct buf b;
	char t[4096];

	buf_init(&b, 0);
	CHECK(agentcmd_argv(AGENT_CLAUDE, "claude-sonnet-4-5", true, "SYS",
	                    "-rf", NULL, &b) == 0);
	argv_text(&b, t, sizeof(t));
	/* The prompt is an argument of its own even when it looks like a flag:
	 * it comes last, after every option. */
	CHECK_STR(t, "claude|-p|--output-format|stream-json|--verbose|"
	             "--dangerously-skip-permissions|--model|claude-sonnet-4-5|"
	             "--continue|--append-system-prompt|SYS|-rf|");
	buf_release(&b);
}

static void
test_system_prompt(void)
{
	struct manifest m;
	struct buf b;

	memset(&m, 0, sizeof(m));
	m.has_web = true;
	m.web.port = 8000;
	snprintf(m.web.health_path, sizeof(m.web.health_path), "/health");
	buf_init(&b, 0);
	CHECK(agentcmd_system_prompt(&m, &b) == 0);
	CHECK(strstr(b.data, "0.0.0.0:8000") != NULL);
	CHECK(strstr(b.data, "curl -s http://127.0.0.1:8000/health") != NULL);
	CHECK(strstr(b.data, "/home/sandbox/workspace/app/sandbox.yaml") !=
	      NULL);
	CHECK(strstr(b.data, "%") == NULL); /* every placeholder filled */
	buf_release(&b);
}

/* --- event log and subscriptions ---------------------------------------- */

static char dir[256];
static int suspended, resumed;

static void
on_suspend(void *arg)
{
	(void)arg;
	suspended++;
}

static void
on_resume(void *arg)
{
	(void)arg;
	resumed++;
}

static struct jv *
msg(int i)
{
	struct jv *o = jv_obj();

	jv_set_int(o, "i", i);
	return o;
}

/* Everything a subscription yields until it would wait or ends. */
static ssize_t
drain(struct evlog_sub *s, char *out, size_t len, size_t chunk)
{
	size_t o = 0;
	ssize_t n = 0;

	while (o + chunk < len && (n = evlog_sub_read(s, out + o, chunk)) > 0)
		o += (size_t)n;
	out[o] = '\0';
	return n < 0 ? -1 : (ssize_t)o;
}

static void
setup(struct core *c, struct config *cfg, struct tasks *ts)
{
	char sub[300];

	snprintf(dir, sizeof(dir), "/tmp/sandboxd-unit-task.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/tasks", dir);
	mkdir(sub, 0700);
	memset(c, 0, sizeof(*c));
	memset(cfg, 0, sizeof(*cfg));
	memset(ts, 0, sizeof(*ts));
	snprintf(cfg->data_dir, sizeof(cfg->data_dir), "%s", dir);
	pthread_mutex_init(&ts->mu, NULL);
	c->cfg = cfg;
	c->tasks = ts;
}

static void
test_evlog_and_subs(void)
{
	static const char id[] = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
	struct config cfg;
	struct tasks ts;
	struct core c;
	struct evlog l;
	struct evlog_sub *s;
	struct err e = {0};
	struct jv *last;
	char out[4096], path[400];
	FILE *f;

	setup(&c, &cfg, &ts);
	CHECK(evlog_open(dir, id, &l, &last) == 0 && l.have == 0 && !l.done);
	CHECK(evlog_append(&ts, id, &l, "status", msg(0)) == 0);
	CHECK(evlog_append(&ts, id, &l, "message", msg(1)) == 0);
	evlog_close(&l);

	/* A finished log replays whole; since=0 skips event 0. */
	CHECK(evlog_sub_open(&c, id, 0, on_suspend, on_resume, NULL, &s, &e) ==
	      0);
	CHECK(drain(s, out, sizeof(out), 7) == -1); /* small reads too */
	CHECK_STR(out, "id: 1\nevent: message\ndata: {\"i\":1}\n\n");
	evlog_sub_close(s);

	/* Reopen: counts events, cuts a torn tail, sees done. */
	evlog_path(dir, id, path, sizeof(path));
	f = fopen(path, "a");
	fputs("id: 2\nevent: mess", f);
	fclose(f);
	CHECK(evlog_open(dir, id, &l, &last) == 0 && l.have == 2 && !l.done);
	jv_free(last);
	/* Replaying counts without writing. */
	CHECK(evlog_append(&ts, id, &l, "status", msg(0)) == 0 && l.n == 1);
	CHECK(evlog_append(&ts, id, &l, "message", msg(1)) == 0 && l.n == 2);
	CHECK(evlog_append(&ts, id, &l, "done", msg(2)) == 0 && l.done);
	evlog_close(&l);
	CHECK(evlog_open(dir, id, &l, &last) == 0 && l.have == 3 && l.done);
	CHECK(last && jv_int(jv_get(last, "i")) == 2);
	jv_free(last);
	evlog_close(&l);

	CHECK(evlog_sub_open(&c, id, -1, on_suspend, on_resume, NULL, &s, &e) ==
	      0);
	drain(s, out, sizeof(out), 5);
	CHECK_STR(out, "id: 0\nevent: status\ndata: {\"i\":0}\n\n"
	               "id: 1\nevent: message\ndata: {\"i\":1}\n\n"
	               "id: 2\nevent: done\ndata: {\"i\":2}\n\n");
	evlog_sub_close(s);
	CHECK(evlog_sub_open(&c, id, 1, on_suspend, on_resume, NULL, &s, &e) ==
	      0);
	drain(s, out, sizeof(out), 1024);
	CHECK_STR(out, "id: 2\nevent: done\ndata: {\"i\":2}\n\n");
	evlog_sub_close(s);
}

static void
test_live_sub_suspends(void)
{
	static const char id[] = "01ARZ3NDEKTSV4RRFFQ69G5FAW";
	struct config cfg;
	struct tasks ts;
	struct core c;
	struct evlog l;
	struct evlog_sub *s;
	struct err e = {0};
	char out[4096];

	setup(&c, &cfg, &ts);
	CHECK(evlog_open(dir, id, &l, NULL) == 0);
	CHECK(evlog_append(&ts, id, &l, "status", msg(0)) == 0);
	/* Not live (no follower entry): it ends at the file's end. */
	CHECK(evlog_sub_open(&c, id, -1, on_suspend, on_resume, NULL, &s, &e) ==
	      0);
	CHECK(drain(s, out, sizeof(out), 1024) == -1);
	evlog_sub_close(s);
	evlog_close(&l);
	(void)suspended, (void)resumed;
}

/*
 * The proxy's events are not derived from the task's files: after a
 * restart the derivation replays around them, so every derived event
 * keeps its id and none is lost or written twice.
 */
static void
test_evlog_outside_replay(void)
{
	static const char id[] = "01ARZ3NDEKTSV4RRFFQ69G5FAX";
	struct config cfg;
	struct tasks ts;
	struct core c;
	struct evlog l;
	struct evlog_sub *s;
	struct err e = {0};
	char out[4096];

	setup(&c, &cfg, &ts);
	CHECK(evlog_open(dir, id, &l, NULL) == 0);
	CHECK(evlog_append(&ts, id, &l, "status", msg(0)) == 0);
	CHECK(evlog_append_outside(&ts, id, &l, msg(9)) == 0);
	CHECK(evlog_append(&ts, id, &l, "message", msg(1)) == 0);
	CHECK(evlog_append_outside(&ts, id, &l, msg(8)) == 0);
	evlog_close(&l);

	/* The restart: ids 1 and 3 are the outside ones. */
	CHECK(evlog_open(dir, id, &l, NULL) == 0 && l.have == 4 &&
	      l.nout == 2 && l.outside[0] == 1 && l.outside[1] == 3);
	CHECK(evlog_append(&ts, id, &l, "status", msg(0)) == 0 && l.n == 1);
	/* Replaying: an outside event waits for the derived ones. */
	struct jv *later = msg(7);
	CHECK(evlog_append_outside(&ts, id, &l, later) == 1);
	jv_free(later);
	CHECK(evlog_append(&ts, id, &l, "message", msg(1)) == 0 && l.n == 3);
	/* The new one goes after the last outside event, as id 4. */
	CHECK(evlog_append(&ts, id, &l, "build", msg(2)) == 0 && l.n == 5);
	evlog_close(&l);

	CHECK(evlog_sub_open(&c, id, -1, on_suspend, on_resume, NULL, &s, &e) ==
	      0);
	drain(s, out, sizeof(out), 1024);
	CHECK_STR(out, "id: 0\nevent: status\ndata: {\"i\":0}\n\n"
	               "id: 1\nevent: provider_error\ndata: {\"i\":9}\n\n"
	               "id: 2\nevent: message\ndata: {\"i\":1}\n\n"
	               "id: 3\nevent: provider_error\ndata: {\"i\":8}\n\n"
	               "id: 4\nevent: build\ndata: {\"i\":2}\n\n");
	evlog_sub_close(s);
}

static const struct unit_test tests[] = {
    {"opencode argv", test_opencode_argv},
    {"claude argv", test_claude_argv},
    {"system prompt", test_system_prompt},
    {"event log and subscriptions", test_evlog_and_subs},
    {"a finished log ends its subscribers", test_live_sub_suspends},
    {"outside events keep the derived ids on replay",
     test_evlog_outside_replay},
};

int
main(void)
{
	return UNIT_RUN("task", tests);
}
