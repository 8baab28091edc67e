/*
 * Unit tests of the supervisor's pure parts: the control request parser
 * (with env's body), the JSON writer's escaping and cap, the app's
 * environment (parsing, its rules, where it goes), the restart policy
 * (backoff schedule and crash-loop rule, as functions of time), the
 * health policy and HTTP status-line parser, and log rotation.  The supervisor
 * is its own binary, so its sources are included here directly rather than
 * linked.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/supervisor/appenv.c"
#include "../../src/supervisor/conf.c"
#include "../../src/supervisor/ctl.c"
#include "../../src/supervisor/health.c"
#include "../../src/supervisor/jw.c"
#include "../../src/supervisor/log.c"
#include "../../src/supervisor/logs.c"
#include "../../src/supervisor/proc.c"
#include "../../src/supervisor/procs.c"
#include "../../src/supervisor/sig.c"
#include "lib/jv.h"
#include "unit.h"

/* --- control requests ---------------------------------------------------- */

static bool
req(const char *s, bool eof, struct ctl_req *r)
{
	return ctl_parse(s, strlen(s), eof, r);
}

static void
ctl_requests(void)
{
	struct ctl_req r;

	CHECK(req("ping\n", false, &r) && r.op == CTL_PING);
	CHECK(req("status\n", false, &r) && r.op == CTL_STATUS);
	CHECK(req("reload\n", false, &r) && r.op == CTL_RELOAD);
	CHECK(req("status\r\n", false, &r) && r.op == CTL_STATUS);
	CHECK(req("restart web\n", false, &r) && r.op == CTL_RESTART);
	CHECK(r.arg_len == 3 && memcmp(r.arg, "web", 3) == 0);
	CHECK(req("restart a b\n", false, &r) && r.op == CTL_RESTART);
	CHECK(r.arg_len == 3 && memcmp(r.arg, "a b", 3) == 0);
	/* Bytes after the line are not part of it. */
	CHECK(req("ping\nstatus\n", false, &r) && r.op == CTL_PING);
}

/* The request's two arguments are a and b (b NULL: no second one). */
static bool
args_are(const struct ctl_req *r, const char *a, const char *b)
{
	if (r->arg_len != strlen(a) || memcmp(r->arg, a, r->arg_len) != 0)
		return false;
	if (b == NULL)
		return r->arg2 == NULL && r->arg2_len == 0;
	return r->arg2_len == strlen(b) && memcmp(r->arg2, b, r->arg2_len) == 0;
}

static void
ctl_task_requests(void)
{
	static const char *const bad[] = {
	    "task\n",
	    "task start\n",
	    "task start \n",
	    "task start 01ARZ3NDEKTSV4RRFFQ69G5FAV\n",
	    "task start 01ARZ3NDEKTSV4RRFFQ69G5FAV \n",
	    "task start  600\n",
	    "task start\t01ARZ3NDEKTSV4RRFFQ69G5FAV 600\n",
	    "task  start 01ARZ3NDEKTSV4RRFFQ69G5FAV 600\n",
	    "task cancel\n",
	    "task cancel \n",
	    "task revert\n",
	    "task stop 01ARZ3NDEKTSV4RRFFQ69G5FAV\n",
	    "TASK cancel 01ARZ3NDEKTSV4RRFFQ69G5FAV\n",
	    "task startx 01ARZ3NDEKTSV4RRFFQ69G5FAV 6\n",
	    "tasks\n",
	};
	struct ctl_req r;
	size_t i;

	CHECK(req("task start 01ARZ3NDEKTSV4RRFFQ69G5FAV 600\n", false, &r));
	CHECK(r.op == CTL_TASK_START);
	CHECK(args_are(&r, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "600"));
	CHECK(req("task start 01ARZ3NDEKTSV4RRFFQ69G5FAV 600\r\n", false, &r));
	CHECK(r.op == CTL_TASK_START &&
	      args_are(&r, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "600"));
	/* The second argument runs to the end of the line; the handler
	 * refuses what is not a timeout. */
	CHECK(req("task start a b c\n", false, &r) && r.op == CTL_TASK_START);
	CHECK(args_are(&r, "a", "b c"));
	CHECK(req("task cancel 01ARZ3NDEKTSV4RRFFQ69G5FAV\n", false, &r));
	CHECK(r.op == CTL_TASK_CANCEL);
	CHECK(args_are(&r, "01ARZ3NDEKTSV4RRFFQ69G5FAV", NULL));
	CHECK(req("task revert 01ARZ3NDEKTSV4RRFFQ69G5FAV", true, &r));
	CHECK(r.op == CTL_TASK_REVERT);
	CHECK(args_are(&r, "01ARZ3NDEKTSV4RRFFQ69G5FAV", NULL));
	/* One-argument words take the rest of the line, like restart. */
	CHECK(req("task cancel x y\n", false, &r) && r.op == CTL_TASK_CANCEL);
	CHECK(args_are(&r, "x y", NULL));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(req(bad[i], false, &r));
		if (r.op != CTL_UNKNOWN)
			fprintf(stderr, "  \"%s\" was understood\n", bad[i]);
		CHECK(r.op == CTL_UNKNOWN && r.arg == NULL && r.arg2 == NULL);
	}
}

static void
ctl_unknown_requests(void)
{
	static const char *const bad[] = {
	    "\n",         "PING\n",     "ping \n",      " ping\n",
	    "pingx\n",    "restart\n",  "restart \n",   "reload now\n",
	    "status\t\n", "ping\r\r\n", "restartweb\n", "stat\n",
	};
	struct ctl_req r;
	size_t i;

	CHECK(ctl_parse("status\0\n", 8, false, &r) && r.op == CTL_UNKNOWN);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(req(bad[i], false, &r));
		if (r.op != CTL_UNKNOWN)
			fprintf(stderr, "  \"%s\" was understood\n", bad[i]);
		CHECK(r.op == CTL_UNKNOWN);
	}
}

static void
ctl_framing(void)
{
	char *big = malloc(CTL_LINE_MAX + 2);
	struct ctl_req r;

	CHECK(!req("", false, &r));
	CHECK(!req("stat", false, &r));
	CHECK(req("status", true, &r) && r.op == CTL_STATUS);
	CHECK(req("", true, &r) && r.op == CTL_UNKNOWN);
	memset(big, 'x', CTL_LINE_MAX + 1);
	/* 4096 bytes and no newline yet: still waiting. */
	CHECK(!ctl_parse(big, CTL_LINE_MAX, false, &r));
	CHECK(ctl_parse(big, CTL_LINE_MAX + 1, false, &r));
	CHECK(r.op == CTL_TOO_LONG);
	big[CTL_LINE_MAX] = '\n';
	CHECK(ctl_parse(big, CTL_LINE_MAX + 1, false, &r));
	CHECK(r.op == CTL_UNKNOWN);
	free(big);
}

/* env: the line, then exactly the body it announces. */
#define ENVREQ(lit) ctl_parse(lit, sizeof(lit) - 1, false, &r)
#define ENVEOF(lit) ctl_parse(lit, sizeof(lit) - 1, true, &r)

static void
ctl_env_framing(void)
{
	struct ctl_req r;

	CHECK(ENVREQ("env 0\n") && r.op == CTL_ENV && r.body_len == 0);
	CHECK(ENVEOF("env 0") && r.op == CTL_ENV && r.body_len == 0);
	CHECK(ENVREQ("env 4\nA=1\0") && r.op == CTL_ENV);
	CHECK(r.body_len == 4 && memcmp(r.body, "A=1\0", 4) == 0);
	CHECK(r.arg_len == 1 && r.arg[0] == '4');
	/* The body may hold newlines; bytes after it are not part of it. */
	CHECK(ENVREQ("env 6\r\nA=1\n2\0junk") && r.op == CTL_ENV);
	CHECK(r.body_len == 6 && memcmp(r.body, "A=1\n2\0", 6) == 0);
	/* Part of the body: wait, knowing for how many bytes in all. */
	CHECK(!ENVREQ("env 4\nA="));
	CHECK(r.want == 10 && r.body == NULL);
	CHECK(!ENVREQ("env 524288\n") && r.want == 11 + CTL_BODY_MAX);
	CHECK(!ENVREQ("env 5") && r.want == 0); /* no line yet */
	/* The input ends first. */
	CHECK(ENVEOF("env 4\nA=") && r.op == CTL_SHORT && r.body == NULL);
	CHECK(ENVEOF("env 4") && r.op == CTL_SHORT);
	CHECK(ENVREQ("env 524289\n") && r.op == CTL_TOO_LONG);
	CHECK(ENVREQ("env 99999999999999999999999999\n") &&
	      r.op == CTL_TOO_LONG);
}

static void
ctl_env_bad_lines(void)
{
	static const char *const bad[] = {
	    "env\n",     "env \n",   "env 01\n",  "env -1\n", "env +1\n",
	    "env 1 2\n", "env x\n",  "ENV 1\n",   "env  1\n", "env\t1\n",
	    "env 1x\n",  "envs 1\n", "env 0x1\n",
	};
	struct ctl_req r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(req(bad[i], false, &r));
		if (r.op != CTL_UNKNOWN)
			fprintf(stderr, "  \"%s\" was understood\n", bad[i]);
		CHECK(r.op == CTL_UNKNOWN && r.body == NULL);
	}
}

/* --- the app's environment ----------------------------------------------- */

/* Parses the literal's bytes; the error message, or "" when it parsed. */
static const char *
env_err(const char *body, size_t len, struct appenv *e)
{
	static char err[256];

	err[0] = '\0';
	if (appenv_parse(body, len, e, err, sizeof(err)) == 0)
		CHECK(err[0] == '\0');
	else
		CHECK(err[0] != '\0' && e->n == 0 && e->buf == NULL);
	return err;
}

#define ENV_ERR(lit, e) env_err(lit, sizeof(lit) - 1, e)

static void
appenv_parsing(void)
{
	struct appenv e;

	CHECK_STR(ENV_ERR("", &e), "");
	CHECK(e.n == 0);
	appenv_free(&e);
	CHECK_STR(ENV_ERR("B=2\0A_=3\0A=1\0", &e), "");
	/* Sorted by name: '=' ends a name before any character. */
	CHECK(e.n == 3);
	CHECK_STR(e.list[0], "A=1");
	CHECK_STR(e.list[1], "A_=3");
	CHECK_STR(e.list[2], "B=2");
	appenv_free(&e);
	CHECK(e.n == 0 && e.buf == NULL);
	/* Values are any bytes but NUL, empty too; names keep their case. */
	CHECK_STR(ENV_ERR("K=a=b\nc\xff\0E=\0lang=x\0PATHX=1\0", &e), "");
	CHECK(e.n == 4);
	CHECK_STR(e.list[1], "K=a=b\nc\xff");
	CHECK(appenv_has(&e, "E=whatever") && appenv_has(&e, "K="));
	CHECK(!appenv_has(&e, "KK=x") && !appenv_has(&e, "E") &&
	      !appenv_has(&e, "LANG=x"));
	appenv_free(&e);
}

static void
appenv_refusals(void)
{
	static const struct {
		const char *body;
		size_t len;
		const char *err;
	} bad[] = {
#define BAD(lit, err) {lit, sizeof(lit) - 1, err}
	    BAD("A=1", "env: the last entry is not NUL-terminated"),
	    BAD("A=1\0B", "env: the last entry is not NUL-terminated"),
	    BAD("\0", "env: entry 1 is not NAME=value"),
	    BAD("A=1\0\0", "env: entry 2 is not NAME=value"),
	    BAD("A=1\0B\0", "env: entry 2 is not NAME=value"),
	    BAD("=x\0", "env: entry 1 is not NAME=value"),
	    BAD("1A=x\0", "env: entry 1: the name must match "
	                  "[A-Za-z_][A-Za-z0-9_]{0,127}"),
	    BAD("A-B=x\0", "env: entry 1: the name must match "
	                   "[A-Za-z_][A-Za-z0-9_]{0,127}"),
	    BAD("A B=x\0", "env: entry 1: the name must match "
	                   "[A-Za-z_][A-Za-z0-9_]{0,127}"),
	    BAD("PATH=/x\0", "env: entry 1: PATH is reserved"),
	    BAD("A=1\0HOME=/x\0", "env: entry 2: HOME is reserved"),
	    BAD("LANG=C\0", "env: entry 1: LANG is reserved"),
	    BAD("HOST=x\0", "env: entry 1: HOST is reserved"),
	    BAD("PORT=1\0", "env: entry 1: PORT is reserved"),
	    BAD("LD_PRELOAD=x\0", "env: entry 1: LD_PRELOAD is reserved"),
	    BAD("LD_=x\0", "env: entry 1: LD_ is reserved"),
	    BAD("SANDBOXD_X=1\0", "env: entry 1: SANDBOXD_X is reserved"),
	    BAD("A=1\0B=2\0A=3\0", "env: A is given twice"),
	    BAD("A=1\0A=1\0", "env: A is given twice"),
#undef BAD
	};
	struct appenv e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_STR(env_err(bad[i].body, bad[i].len, &e), bad[i].err);
}

/* n entries V<i>=<i>, or a name of len characters. */
static size_t
env_build(char *buf, size_t n, size_t name_len)
{
	size_t off = 0, i;

	if (name_len > 0) {
		buf[0] = '_';
		memset(buf + 1, 'x', name_len - 1);
		memcpy(buf + name_len, "=v", 3);
		return name_len + 3;
	}
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, 32, "V%zu=%zu", i, i) + 1;
	return off;
}

static void
appenv_limits(void)
{
	char *buf = malloc(APPENV_MAX * 32 + 32);
	struct appenv e;
	size_t len;

	len = env_build(buf, APPENV_MAX, 0);
	CHECK_STR(env_err(buf, len, &e), "");
	CHECK(e.n == APPENV_MAX);
	appenv_free(&e);
	len = env_build(buf, APPENV_MAX + 1, 0);
	CHECK_STR(env_err(buf, len, &e), "env: more than 256 entries");
	len = env_build(buf, 0, APPENV_NAME_MAX);
	CHECK_STR(env_err(buf, len, &e), "");
	appenv_free(&e);
	len = env_build(buf, 0, APPENV_NAME_MAX + 1);
	CHECK_STR(env_err(buf, len, &e), "env: entry 1: the name must match "
	                                 "[A-Za-z_][A-Za-z0-9_]{0,127}");
	free(buf);
}

static void
appenv_equality(void)
{
	struct appenv a, b;

	CHECK_STR(ENV_ERR("A=1\0B=2\0", &a), "");
	CHECK_STR(ENV_ERR("B=2\0A=1\0", &b), "");
	CHECK(appenv_equal(&a, &b)); /* the order sent does not count */
	appenv_free(&b);
	CHECK_STR(ENV_ERR("A=1\0B=3\0", &b), "");
	CHECK(!appenv_equal(&a, &b));
	appenv_free(&b);
	CHECK_STR(ENV_ERR("A=1\0", &b), "");
	CHECK(!appenv_equal(&a, &b));
	appenv_free(&b);
	CHECK_STR(ENV_ERR("A=1\0B=2\0C=\0", &b), "");
	CHECK(!appenv_equal(&a, &b));
	appenv_free(&b);
	CHECK_STR(ENV_ERR("", &b), "");
	CHECK(!appenv_equal(&a, &b) && appenv_equal(&b, &b));
	appenv_free(&a);
	CHECK(appenv_equal(&a, &b)); /* freed: the empty set */
	appenv_free(&b);
}

/* The index of the entry kv in env, or -1; fails on a second one. */
static int
env_at(char **env, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t nl = (size_t)(eq - kv) + 1;
	int at = -1, i, same = 0;

	for (i = 0; env[i] != NULL; i++) {
		if (strncmp(env[i], kv, nl) != 0)
			continue;
		same++;
		if (strcmp(env[i], kv) == 0)
			at = i;
	}
	CHECK(same <= 1);
	return same == 1 ? at : -1;
}

static void
appenv_reaches_web_and_workers_only(void)
{
	struct conf_rec web = {.kind = CONF_WEB, .port = 3000},
	                worker = {.kind = CONF_WORKER},
	                build = {.kind = CONF_BUILD};
	char home[] = "/tmp/test-supervisor-env.XXXXXX", path[600], port[16];
	struct procs p;
	struct appenv e;
	char **env;

	CHECK(mkdtemp(home) != NULL);
	snprintf(path, sizeof(path), "%s/.sandboxd", home);
	CHECK(mkdir(path, 0700) == 0);
	setenv("SHARED_VAR", "from-container", 1);
	setenv("ONLY_CONTAINER", "c", 1);
	CHECK(procs_init(&p, home, 1000) == 0);
	CHECK_STR(ENV_ERR("SHARED_VAR=from-app\0APP_SECRET=s3\0", &e), "");
	CHECK(procs_set_app_env(&p, &e, 0) && e.n == 0 && p.app_env.n == 2);
	env = procs_env(&p, &web, port, sizeof(port));
	/* After the container's, before HOST and PORT, overriding. */
	CHECK(env_at(env, "APP_SECRET=s3") > env_at(env, "ONLY_CONTAINER=c"));
	CHECK(env_at(env, "SHARED_VAR=from-app") >= 0);
	CHECK(env_at(env, "HOST=0.0.0.0") > env_at(env, "APP_SECRET=s3"));
	CHECK(env_at(env, "PORT=3000") > env_at(env, "HOST=0.0.0.0"));
	free(env);
	env = procs_env(&p, &worker, port, sizeof(port));
	CHECK(env_at(env, "APP_SECRET=s3") >= 0 &&
	      env_at(env, "SHARED_VAR=from-app") >= 0);
	free(env);
	/* Builds and git steps (a build record) do not get it. */
	env = procs_env(&p, &build, port, sizeof(port));
	CHECK(env_at(env, "APP_SECRET=s3") == -1);
	CHECK(env_at(env, "SHARED_VAR=from-container") >= 0);
	free(env);
	/* The same set again is no change. */
	CHECK_STR(ENV_ERR("APP_SECRET=s3\0SHARED_VAR=from-app\0", &e), "");
	CHECK(!procs_set_app_env(&p, &e, 0) && e.buf == NULL);
	CHECK_STR(ENV_ERR("", &e), "");
	CHECK(procs_set_app_env(&p, &e, 0) && p.app_env.n == 0);
	procs_release(&p);
	unsetenv("SHARED_VAR");
	unsetenv("ONLY_CONTAINER");
	snprintf(path, sizeof(path), "%s/.sandboxd/logs", home);
	CHECK(rmdir(path) == 0);
	snprintf(path, sizeof(path), "%s/.sandboxd", home);
	CHECK(rmdir(path) == 0);
	CHECK(rmdir(home) == 0);
}

/* --- the JSON writer ----------------------------------------------------- */

/* The escaped form of len bytes of s (static buffer). */
static const char *
esc(const char *s, size_t len)
{
	static char out[256];
	struct jw w;

	jw_init(&w, 200);
	jw_str(&w, s, len);
	snprintf(out, sizeof(out), "%s", jw_ok(&w) ? w.p : "(full)");
	jw_release(&w);
	return out;
}

#define ESC(lit) esc(lit, sizeof(lit) - 1)

static void
jw_escapes(void)
{
	CHECK_STR(ESC("plain"), "\"plain\"");
	CHECK_STR(ESC(""), "\"\"");
	CHECK_STR(ESC("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	CHECK_STR(ESC("\n\t\r\x01\x1f\x7f"), "\"\\n\\t\\r\\u0001\\u001f\x7f\"");
	/* The control plane's parser (jansson) refuses \u0000. */
	CHECK_STR(ESC("nul\0byte"), "\"nul\\ufffdbyte\"");
}

static void
jw_utf8(void)
{
	CHECK_STR(ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
	          "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* Invalid: lone continuation, overlong, surrogate, truncated, >
	 * U+10FFFF */
	CHECK_STR(ESC("\x80"), "\"\\ufffd\"");
	CHECK_STR(ESC("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	CHECK_STR(ESC("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_STR(ESC("\xe2\x82"), "\"\\ufffd\\ufffd\"");
	CHECK_STR(ESC("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	CHECK_STR(ESC("\xff!"), "\"\\ufffd!\"");
}

static void
jw_output_parses(void)
{
	char bytes[256], perr[128];
	struct jv *v;
	struct jw w;
	int i;

	for (i = 0; i < 256; i++)
		bytes[i] = (char)i;
	jw_init(&w, 4096);
	jw_raw(&w, "{");
	jw_key(&w, "s", false);
	jw_str(&w, bytes, sizeof(bytes));
	jw_key(&w, "n", true);
	jw_int(&w, -42);
	jw_key(&w, "b", true);
	jw_bool(&w, true);
	jw_raw(&w, "}");
	CHECK(jw_ok(&w));
	v = jv_parse(w.p, w.len, 4, perr, sizeof(perr));
	if (v == NULL)
		fprintf(stderr, "  %s\n", perr);
	CHECK(v != NULL && jv_int(jv_get(v, "n")) == -42);
	CHECK(v != NULL && jv_str_len(jv_get(v, "s")) > 128);
	jv_free(v);
	jw_release(&w);
}

static void
jw_cap(void)
{
	struct jw w;
	int i;

	jw_init(&w, 16);
	jw_raw(&w, "0123456789");
	jw_raw(&w, "abcdef");
	CHECK(jw_ok(&w) && w.len == 16);
	jw_raw(&w, "x");
	CHECK(!jw_ok(&w));
	jw_reset(&w);
	CHECK(jw_ok(&w) && w.len == 0);
	jw_str(&w, "\x01\x01\x01", 3); /* 20 bytes escaped */
	CHECK(!jw_ok(&w));
	jw_release(&w);
	jw_init(&w, CTL_ANSWER_MAX);
	for (i = 0; i < 100000 && jw_ok(&w); i++)
		jw_raw(&w, "0123456789");
	CHECK(!jw_ok(&w) && w.len <= CTL_ANSWER_MAX);
	jw_release(&w);
}

/* --- the restart policy -------------------------------------------------- */

static void
backoff_schedule(void)
{
	static const long long want[] = {1000,  2000,  4000,  8000, 16000,
	                                 32000, 60000, 60000, 60000};
	unsigned i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(procs_backoff_ms(i + 1, 1000) == want[i]);
	CHECK(procs_backoff_ms(0, 1000) == 1000);
	CHECK(procs_backoff_ms(1000, 1000) == 60000);
	/* A test's shorter base scales the whole schedule. */
	CHECK(procs_backoff_ms(1, 100) == 100);
	CHECK(procs_backoff_ms(5, 100) == 1600);
	CHECK(procs_backoff_ms(9, 100) == 6000);
}

static void
crash_loop_after_six_short_runs(void)
{
	static const long long delays[] = {1000, 2000, 4000, 8000, 16000};
	struct procs_run r = {0};
	long long now = 5000;
	int i;

	for (i = 0; i < 5; i++) {
		procs_run_started(&r, now, false);
		CHECK(r.state == PROCS_STARTING);
		now += 10; /* dies at once */
		procs_run_exited(&r, now, 1000);
		CHECK(r.state == PROCS_BACKOFF);
		CHECK(r.due_at == now + delays[i]);
		now = r.due_at;
	}
	procs_run_started(&r, now, false);
	procs_run_exited(&r, now + 29999, 1000);
	CHECK(r.state == PROCS_CRASHLOOP);
	CHECK(r.due_at == -1);
	CHECK(r.short_runs == 6);
}

static void
long_run_resets_the_count(void)
{
	struct procs_run r = {0};
	long long now = 0;
	int i;

	for (i = 0; i < 5; i++) {
		procs_run_started(&r, now, false);
		procs_run_exited(&r, now + 1, 1000);
		now = r.due_at;
	}
	CHECK(r.short_runs == 5);
	procs_run_started(&r, now, false);
	procs_run_exited(&r, now + PROCS_SHORT_RUN_MS, 1000);
	CHECK(r.state == PROCS_BACKOFF);
	CHECK(r.short_runs == 0);
	CHECK(r.due_at == now + PROCS_SHORT_RUN_MS + 1000);
	now = r.due_at;
	procs_run_started(&r, now, false);
	procs_run_exited(&r, now + 1, 1000);
	CHECK(r.short_runs == 1 && r.due_at == now + 1 + 1000);
}

static void
worker_up_after_one_second(void)
{
	struct procs_run r = {0};

	procs_run_started(&r, 700, false);
	CHECK(r.state == PROCS_STARTING &&
	      r.due_at == 700 + PROCS_WORKER_UP_MS);
	procs_run_started(&r, 700, true);
	CHECK(r.state == PROCS_STARTING && r.due_at == -1);
}

/* --- health -------------------------------------------------------------- */

static int
status_of(const char *s, bool eof)
{
	return health_parse_status(s, strlen(s), eof);
}

static void
health_status_line(void)
{
	char junk[HEALTH_LINE_MAX];

	CHECK(status_of("HTTP/1.0 200 OK\r\n", false) == 200);
	CHECK(status_of("HTTP/1.1 404 Not Found\r\nServer: x\r\n", false) ==
	      404);
	CHECK(status_of("HTTP/1.0 503\n", false) == 503);
	CHECK(status_of("HTTP/1.0 204", true) == 204);
	CHECK(status_of("HTTP/1.0 20", false) == 0);
	CHECK(status_of("HTTP/1.0 20", true) == -1);
	CHECK(status_of("", true) == -1);
	CHECK(status_of("", false) == 0);
	CHECK(status_of("SSH-2.0-OpenSSH\r\n", false) == -1);
	CHECK(status_of("HTTP/1.0 099 x\r\n", false) == -1);
	CHECK(status_of("HTTP/1.0 2000\r\n", false) == -1);
	CHECK(status_of("HTTP/1.0 2x0\r\n", false) == -1);
	CHECK(status_of("HTTP/x.0 200\r\n", false) == -1);
	memset(junk, 'a', sizeof(junk));
	CHECK(health_parse_status(junk, sizeof(junk), false) == -1);
}

static void
health_policy(void)
{
	struct health h;

	health_init(&h);
	CHECK(h.state == HEALTH_NONE && h.next_at == -1);
	health_start(&h, 1000);
	CHECK(h.state == HEALTH_STARTING &&
	      h.next_at == 1000 + HEALTH_FIRST_MS);
	/* Failures before the first pass keep it starting; the checks come
	 * closer than a period: 5, 10, 20, 40, then 50 ms apart. */
	CHECK(!health_note(&h, false, 1005));
	CHECK(h.next_at == 1015);
	CHECK(!health_note(&h, false, 1015));
	CHECK(h.next_at == 1035);
	CHECK(!health_note(&h, false, 1035));
	CHECK(h.next_at == 1075);
	CHECK(!health_note(&h, false, 1075));
	CHECK(h.next_at == 1075 + HEALTH_STARTING_MS);
	CHECK(!health_note(&h, false, 2200));
	CHECK(h.state == HEALTH_STARTING && h.next_at == 2250);
	CHECK(health_note(&h, true, 2250));
	CHECK(h.state == HEALTH_READY && h.next_at == 2250 + HEALTH_READY_MS);
	CHECK(!health_note(&h, true, 7250));
	/* Ready: two failures are tolerated, the third is an error. */
	CHECK(!health_note(&h, false, 12250));
	CHECK(!health_note(&h, false, 17250));
	CHECK(h.state == HEALTH_READY);
	CHECK(!health_note(&h, false, 22250));
	CHECK(h.state == HEALTH_ERROR && h.next_at == 27250);
	CHECK(!health_note(&h, true, 27250));
	CHECK(h.state == HEALTH_READY);
	health_set(&h, HEALTH_ERROR, "web process in backoff");
	CHECK(h.state == HEALTH_ERROR && h.next_at == -1);
	CHECK_STR(h.detail, "web process in backoff");
}

/* --- logs ---------------------------------------------------------------- */

static void
logs_split_points(void)
{
	CHECK(logs_split(0, "abc\n", 4, 10) == 4);
	CHECK(logs_split(6, "abc\n", 4, 10) == 4);
	CHECK(logs_split(7, "abc\n", 4, 10) == 0);
	CHECK(logs_split(7, "a\nbc\n", 5, 10) == 2);
	CHECK(logs_split(20, "a\n", 2, 10) == 0);
	/* A line longer than a whole file is cut. */
	CHECK(logs_split(0, "0123456789abc", 13, 10) == 10);
	CHECK(logs_split(3, "0123456789abc", 13, 10) == 0);
}

static long
file_size(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void
logs_rotate_at_cap(void)
{
	char dir[] = "/tmp/test-supervisor-logs.XXXXXX", line[64];
	struct logs l;
	int dfd, i;

	CHECK(mkdtemp(dir) != NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(logs_open(&l, dfd, "w") == 0);
	l.max = 100;
	for (i = 0; i < 30; i++) {
		snprintf(line, sizeof(line), "line %02d\n", i); /* 8 bytes */
		logs_write(&l, line, strlen(line));
		CHECK(file_size(dir, "w.log") <= 100);
	}
	/* 240 bytes: 96 in the first file, 96 in the second, 48 now. */
	CHECK(file_size(dir, "w.log") == 48);
	CHECK(file_size(dir, "w.log.1") == 96);
	CHECK(write(l.pipe[1], "via pipe\n", 9) == 9);
	logs_drain(&l);
	CHECK(file_size(dir, "w.log") == 57);
	logs_close(&l);
	CHECK(unlinkat(dfd, "w.log", 0) == 0);
	CHECK(unlinkat(dfd, "w.log.1", 0) == 0);
	close(dfd);
	CHECK(rmdir(dir) == 0);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"control requests", ctl_requests},
	    {"task control requests", ctl_task_requests},
	    {"unknown control requests", ctl_unknown_requests},
	    {"control request framing and length", ctl_framing},
	    {"env: line and body framing", ctl_env_framing},
	    {"env: malformed lines", ctl_env_bad_lines},
	    {"app env: parsing and order", appenv_parsing},
	    {"app env: refused entries", appenv_refusals},
	    {"app env: entry and name limits", appenv_limits},
	    {"app env: equality", appenv_equality},
	    {"app env: web and workers only, overriding the container's",
	     appenv_reaches_web_and_workers_only},
	    {"JSON escapes", jw_escapes},
	    {"JSON strings are valid UTF-8", jw_utf8},
	    {"JSON output parses", jw_output_parses},
	    {"JSON answers are capped", jw_cap},
	    {"backoff schedule", backoff_schedule},
	    {"crashloop after 6 short runs", crash_loop_after_six_short_runs},
	    {"a long run resets the crash count", long_run_resets_the_count},
	    {"a worker is up after one second", worker_up_after_one_second},
	    {"HTTP status line", health_status_line},
	    {"health policy", health_policy},
	    {"log split points", logs_split_points},
	    {"logs rotate at the cap", logs_rotate_at_cap},
	};

	return UNIT_RUN("supervisor", tests);
}
