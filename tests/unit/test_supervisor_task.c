/*
 * Unit tests of the supervisor's agent-task formats (src/supervisor/task.c)
 * and task directory (taskdir.c): task ids and timeouts, the argv and env
 * files, which inherited variables the agent does not get, the text of
 * steps records, reading a steps file back, the checkpoint's output, the
 * files list as it streams, the cgroup's OOM count, and the boot sweep
 * that ends interrupted tasks.  The supervisor is its own binary, so its
 * sources are included here directly rather than linked.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/supervisor/jw.c"
#include "../../src/supervisor/log.c"
#include "../../src/supervisor/task.c"
#include "../../src/supervisor/taskdir.c"
#include "unit.h"

#define LIT(s) s, sizeof(s) - 1

/* --- ids and timeouts ---------------------------------------------------- */

static void
ids(void)
{
	static const char *const bad[] = {
	    "",
	    "01ARZ3NDEKTSV4RRFFQ69G5FA",   /* 25 */
	    "01ARZ3NDEKTSV4RRFFQ69G5FAVX", /* 27 */
	    "81ARZ3NDEKTSV4RRFFQ69G5FAV",  /* > 128 bits */
	    "01arz3ndektsv4rrffq69g5fav",  /* lower case */
	    "01ARZ3NDEKTSV4RRFFQ69G5FAI",  /* I, L, O, U are not Crockford */
	    "01ARZ3NDEKTSV4RRFFQ69G5FAL",
	    "01ARZ3NDEKTSV4RRFFQ69G5FAO",
	    "01ARZ3NDEKTSV4RRFFQ69G5FAU",
	    "01ARZ3NDEKTSV4RRFFQ69G5F/.",
	    "../../../../../../etc/pass",
	    "01ARZ3NDEKTSV4RRFFQ69G5FA ",
	};
	size_t i;

	CHECK(task_id_ok(LIT("01ARZ3NDEKTSV4RRFFQ69G5FAV")));
	CHECK(task_id_ok(LIT("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")));
	CHECK(task_id_ok(LIT("00000000000000000000000000")));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (task_id_ok(bad[i], strlen(bad[i])))
			fprintf(stderr, "  \"%s\" was accepted\n", bad[i]);
		CHECK(!task_id_ok(bad[i], strlen(bad[i])));
	}
	/* A NUL inside is not the end of the id. */
	CHECK(!task_id_ok("01ARZ3NDEKTSV4RRFF\0"
	                  "69G5FAV",
	                  26));
}

static void
timeouts(void)
{
	CHECK(task_timeout_parse(LIT("1")) == 1);
	CHECK(task_timeout_parse(LIT("600")) == 600);
	CHECK(task_timeout_parse(LIT("86400")) == 86400);
	CHECK(task_timeout_parse(LIT("86401")) == 0);
	CHECK(task_timeout_parse(LIT("0")) == 0);
	CHECK(task_timeout_parse(LIT("060")) == 0);
	CHECK(task_timeout_parse(LIT("-5")) == 0);
	CHECK(task_timeout_parse(LIT("+5")) == 0);
	CHECK(task_timeout_parse(LIT("5s")) == 0);
	CHECK(task_timeout_parse(LIT("")) == 0);
	CHECK(task_timeout_parse(LIT("99999999999999999999")) == 0);
}

/* --- argv and env -------------------------------------------------------- */

static char err[256];

/* Parses len bytes of a copy of s as argv; returns the count or -1. */
static int
argv_of(const char *s, size_t len, char **argv)
{
	static char buf[1024];

	memcpy(buf, s, len);
	err[0] = '\0';
	return task_argv_parse(buf, len, argv, err, sizeof(err));
}

static void
argv_files(void)
{
	char *argv[TASK_ARGV_MAX + 1];
	char big[TASK_ARGV_MAX + 2];

	CHECK(argv_of(LIT("claude\0-p\0fix the bug\0"), argv) == 3);
	CHECK_STR(argv[0], "claude");
	CHECK_STR(argv[1], "-p");
	CHECK_STR(argv[2], "fix the bug");
	CHECK(argv[3] == NULL);
	/* Empty arguments after the first are fine. */
	CHECK(argv_of(LIT("x\0\0\0"), argv) == 3);
	CHECK_STR(argv[1], "");
	CHECK(argv[3] == NULL);
	CHECK(argv_of(LIT("/usr/bin/agent\0"), argv) == 1);
	/* Newlines, tabs, quotes, any bytes but NUL are kept as they are. */
	CHECK(argv_of(LIT("a\0line 1\nline 2\t\"$(x)\"\xff\0"), argv) == 2);
	CHECK_STR(argv[1], "line 1\nline 2\t\"$(x)\"\xff");

	CHECK(argv_of("", 0, argv) == -1);
	CHECK_STR(err, "argv is empty");
	CHECK(argv_of(LIT("claude\0-p"), argv) == -1);
	CHECK(strstr(err, "not NUL-terminated") != NULL);
	CHECK(argv_of(LIT("\0x\0"), argv) == -1);
	CHECK(strstr(err, "argument 0") != NULL);
	CHECK(argv_of(LIT("\0"), argv) == -1);

	memset(big, '\0', sizeof(big));
	big[0] = 'x';
	/* "x" and 63 empty ones: 65 bytes. */
	CHECK(argv_of(big, TASK_ARGV_MAX + 1, argv) == TASK_ARGV_MAX);
	CHECK(argv[TASK_ARGV_MAX] == NULL);
	CHECK(argv_of(big, TASK_ARGV_MAX + 2, argv) == -1);
	CHECK(strstr(err, "more than 64 arguments") != NULL);
}

static int
env_of(const char *s, size_t len, char **env)
{
	static char buf[1024];

	memcpy(buf, s, len);
	err[0] = '\0';
	return task_env_parse(buf, len, env, err, sizeof(err));
}

static void
env_files(void)
{
	char *env[TASK_ENV_MAX + 1];
	char big[4 * (TASK_ENV_MAX + 1)];
	size_t i;

	CHECK(env_of("", 0, env) == 0 && env[0] == NULL);
	CHECK(env_of(LIT("ANTHROPIC_API_KEY=sk-1\0_x9=\0a=b=c\0"), env) == 3);
	CHECK_STR(env[0], "ANTHROPIC_API_KEY=sk-1");
	CHECK_STR(env[1], "_x9=");
	CHECK_STR(env[2], "a=b=c");
	CHECK(env[3] == NULL);
	CHECK(env_of(LIT("V=multi\nline\0"), env) == 1);

	CHECK(env_of(LIT("NOEQUALS\0"), env) == -1);
	CHECK(strstr(err, "entry 1") != NULL);
	CHECK(env_of(LIT("A=1\09X=1\0"), env) == -1);
	CHECK(strstr(err, "entry 2") != NULL);
	CHECK(env_of(LIT("=x\0"), env) == -1);
	CHECK(env_of(LIT("A-B=x\0"), env) == -1);
	CHECK(env_of(LIT("A B=x\0"), env) == -1);
	CHECK(env_of(LIT("\0"), env) == -1);
	CHECK(env_of(LIT("A=1"), env) == -1);
	CHECK(strstr(err, "not NUL-terminated") != NULL);

	for (i = 0; i <= TASK_ENV_MAX; i++)
		memcpy(big + 4 * i, "A=1", 4);
	CHECK(env_of(big, 4 * TASK_ENV_MAX, env) == TASK_ENV_MAX);
	CHECK(env_of(big, sizeof(big), env) == -1);
	CHECK(strstr(err, "more than 64 entries") != NULL);
}

static void
env_withheld(void)
{
	static const char *const kept[] = {
	    "PATH=/bin",         "TERM=xterm",       "KEYBOARD=us",
	    "MY_KEYS=x",         "TOKENIZER=x",      "KEY=x",
	    "SANDBOXD_PRESET=x", "SANDBOXD_INITX=1", "PASSWORD_HINT=x",
	    "A_KEY_B=x",
	};
	static const char *const withheld[] = {
	    "OPENAI_API_KEY=sk",
	    "github_token=x",
	    "Db_Password=x",
	    "AWS_SECRET=x",
	    "GCP_CREDENTIALS=x",
	    "SERVICE_APIKEY=x",
	    "X_key=",
	    "_KEY=x",
	    "SANDBOXD_INIT_BACKOFF_MS=1",
	    "SANDBOXD_INIT_X=",
	    "NO_EQUALS_SIGN",
	};
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		if (task_env_withheld(kept[i]))
			fprintf(stderr, "  \"%s\" was withheld\n", kept[i]);
		CHECK(!task_env_withheld(kept[i]));
	}
	for (i = 0; i < sizeof(withheld) / sizeof(withheld[0]); i++) {
		if (!task_env_withheld(withheld[i]))
			fprintf(stderr, "  \"%s\" was kept\n", withheld[i]);
		CHECK(task_env_withheld(withheld[i]));
	}
	CHECK(task_env_same("A=1", "A=2"));
	CHECK(task_env_same("PATH=/x", "PATH="));
	CHECK(!task_env_same("A=1", "AB=1"));
	CHECK(!task_env_same("AB=1", "A=1"));
	CHECK(!task_env_same("A", "A"));
}

/* --- steps records ------------------------------------------------------- */

static const char *
text(const char *s, size_t n)
{
	static char out[TASK_TEXT_MAX + 1];
	size_t len = task_text(out, s, n);

	CHECK(len == strlen(out) && len <= TASK_TEXT_MAX);
	return out;
}

#define TEXT(lit) text(lit, sizeof(lit) - 1)

static void
record_text(void)
{
	char big[3000];
	const char *t;

	CHECK_STR(TEXT("fatal: not a git repository"),
	          "fatal: not a git repository");
	CHECK_STR(TEXT("a\tb\rc\nd\x01"
	               "e\x7f"
	               "f\0g"),
	          "a b c d e f g");
	CHECK_STR(TEXT("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
	/* C1 controls (U+0085 NEL among them) are controls too. */
	CHECK_STR(TEXT("a\xc2\x85"
	               "b\xc2\x9f"
	               "c\xc2\xa0"),
	          "a b c\xc2\xa0");
	CHECK_STR(TEXT("bad \xff\xc0\xaf end"),
	          "bad \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end");
	CHECK_STR(TEXT("cut \xe2\x82"), "cut \xef\xbf\xbd\xef\xbf\xbd");
	CHECK_STR(TEXT(""), "");

	memset(big, 'x', sizeof(big));
	t = text(big, sizeof(big));
	CHECK(strlen(t) == TASK_TEXT_MAX);
	/* Never cut inside a character. */
	memset(big, 'x', sizeof(big));
	memcpy(big + TASK_TEXT_MAX - 1, "\xe2\x82\xac", 3);
	t = text(big, sizeof(big));
	CHECK(strlen(t) == TASK_TEXT_MAX - 1);
	memcpy(big + TASK_TEXT_MAX - 2, "\xff", 1);
	t = text(big, sizeof(big));
	CHECK(strlen(t) == TASK_TEXT_MAX - 2);
}

static struct task_steps
steps_of(const char *s)
{
	struct task_steps st;

	task_steps_scan(s, strlen(s), &st);
	return st;
}

static void
steps_scan(void)
{
	static const char sha[] = "0123456789abcdef0123456789abcdef01234567";
	struct task_steps st;

	st = steps_of("");
	CHECK(!st.start && !st.end && st.sha[0] == '\0');
	st = steps_of("start\t1700000000000\nphase\tcheckpoint\n"
	              "checkpoint\t0123456789abcdef0123456789abcdef01234567\n"
	              "phase\tagent_running\n");
	CHECK(st.start && !st.end);
	CHECK_STR(st.sha, sha);
	st = steps_of("start\t1\ncheckpoint\t\tfatal: x\nend\t2\tended\n");
	CHECK(st.start && st.end && st.sha[0] == '\0');
	/* A last line without its newline counts. */
	st = steps_of("start\t1\nend\t2\tinterrupted");
	CHECK(st.start && st.end);
	st = steps_of("start\t1\nen");
	CHECK(st.start && !st.end);
	/* Records are whole words at the start of a line. */
	st = steps_of("restart\t1\nstartx\t1\n start\t1\nend\nending\t1\n");
	CHECK(!st.start && !st.end);
	/* Not a commit id: upper case, short, 41 digits. */
	st = steps_of("checkpoint\t0123456789ABCDEF0123456789abcdef01234567\n");
	CHECK(st.sha[0] == '\0');
	st = steps_of("checkpoint\t0123\n");
	CHECK(st.sha[0] == '\0');
	st =
	    steps_of("checkpoint\t0123456789abcdef0123456789abcdef012345678\n");
	CHECK(st.sha[0] == '\0');
	/* SHA-256 repositories. */
	st = steps_of("checkpoint\t0123456789abcdef0123456789abcdef"
	              "0123456789abcdef0123456789abcdef\n");
	CHECK(strlen(st.sha) == 64);
}

static void
checkpoint_output(void)
{
	char sha[TASK_SHA_MAX + 1];

	CHECK(task_sha_parse(LIT("0123456789abcdef0123456789abcdef01234567\n"),
	                     sha));
	CHECK_STR(sha, "0123456789abcdef0123456789abcdef01234567");
	CHECK(task_sha_parse(LIT("0123456789abcdef0123456789abcdef01234567"),
	                     sha));
	CHECK(!task_sha_parse(LIT(""), sha));
	CHECK(!task_sha_parse(LIT("\n"), sha));
	CHECK(!task_sha_parse(LIT("warning: x\n"
	                          "0123456789abcdef0123456789abcdef01234567\n"),
	                      sha));
	CHECK(!task_sha_parse(LIT(" 0123456789abcdef0123456789abcdef0123456\n"),
	                      sha));
}

static void
last_lines(void)
{
	const char *line;
	size_t n;

	n = task_last_line(LIT("hint: a\nfatal: bad object\n"), &line);
	CHECK(n == 17 && memcmp(line, "fatal: bad object", n) == 0);
	n = task_last_line(LIT("one\ntwo"), &line);
	CHECK(n == 3 && memcmp(line, "two", 3) == 0);
	n = task_last_line(LIT("err\r\n\n  \n\t\n"), &line);
	CHECK(n == 3 && memcmp(line, "err", 3) == 0);
	CHECK(task_last_line(LIT("\n\n \n"), &line) == 0 && line == NULL);
	CHECK(task_last_line("", 0, &line) == 0);
}

static void
oom_counts(void)
{
	CHECK(task_oom_parse(LIT("low 0\nhigh 0\nmax 3\noom 2\noom_kill 7\n"
	                         "oom_group_kill 0\n")) == 7);
	CHECK(task_oom_parse(LIT("oom_kill_disable 0\nunder_oom 0\n"
	                         "oom_kill 12\n")) == 12);
	CHECK(task_oom_parse(LIT("oom_kill 0")) == 0);
	CHECK(task_oom_parse(LIT("oom 3\n")) == -1);
	CHECK(task_oom_parse(LIT("oom_kill x\n")) == -1);
	CHECK(task_oom_parse(LIT("oom_kill \n")) == -1);
	CHECK(task_oom_parse(LIT("xoom_kill 3\n")) == -1);
	CHECK(task_oom_parse("", 0) == -1);
}

/* --- the files list ------------------------------------------------------ */

struct names_out {
	char buf[512];
	size_t len;
	unsigned lines;
};

static void
names_emit(void *ctx, const char *line, size_t len)
{
	struct names_out *o = ctx;

	CHECK(len > 0 && line[len - 1] == '\n');
	CHECK(o->len + len < sizeof(o->buf));
	memcpy(o->buf + o->len, line, len);
	o->len += len;
	o->buf[o->len] = '\0';
	o->lines++;
}

static size_t longest;

static void
names_longest(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	CHECK(line[len - 1] == '\n');
	if (len > longest)
		longest = len;
}

static void
names_stream(void)
{
	static const char in[] = "a.txt\0dir/b c.js\0bad\nname\0\0last\0tail";
	static struct task_names s;
	struct names_out o = {.len = 0};
	size_t i;
	char *huge;

	task_names_init(&s);
	task_names_feed(&s, in, sizeof(in) - 1, names_emit, &o);
	CHECK_STR(o.buf, "a.txt\ndir/b c.js\nlast\n");
	CHECK(o.lines == 3);
	/* Byte by byte: the same. */
	memset(&o, 0, sizeof(o));
	task_names_init(&s);
	for (i = 0; i < sizeof(in) - 1; i++)
		task_names_feed(&s, in + i, 1, names_emit, &o);
	CHECK_STR(o.buf, "a.txt\ndir/b c.js\nlast\n");
	/* A path longer than TASK_NAME_MAX is skipped, the next one kept. */
	huge = malloc(TASK_NAME_MAX + 8);
	memset(huge, 'p', TASK_NAME_MAX + 1);
	memcpy(huge + TASK_NAME_MAX + 1, "\0ok\0", 4);
	memset(&o, 0, sizeof(o));
	task_names_init(&s);
	task_names_feed(&s, huge, TASK_NAME_MAX + 5, names_emit, &o);
	CHECK_STR(o.buf, "ok\n");
	/* Exactly TASK_NAME_MAX bytes is still a path. */
	longest = 0;
	task_names_init(&s);
	huge[TASK_NAME_MAX] = '\0';
	task_names_feed(&s, huge, TASK_NAME_MAX + 1, names_longest, NULL);
	CHECK(longest == TASK_NAME_MAX + 1);
	free(huge);
}

/* --- the boot sweep ------------------------------------------------------ */

static char tasks_dir[] = "/tmp/test-supervisor-tasks.XXXXXX";

static void
put(const char *id, const char *name, const char *content)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tasks_dir, id);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", tasks_dir, id, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f == NULL)
		return;
	fputs(content, f);
	fclose(f);
}

static const char *
get(const char *id, const char *name)
{
	static char buf[1024];
	char path[512];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", tasks_dir, id, name);
	f = fopen(path, "r");
	if (f == NULL)
		return "(none)";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The steps of id end with "end\t<ms>\tinterrupted\n" after prefix. */
static bool
ended_after(const char *id, const char *prefix)
{
	const char *s = get(id, "steps");
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 && strncmp(s + n, "end\t", 4) == 0 &&
	       strcmp(s + strlen(s) - 13, "\tinterrupted\n") == 0;
}

/* A sweep without its log lines. */
static unsigned
quiet_sweep(void)
{
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
	unsigned n;

	dup2(null, STDERR_FILENO);
	n = taskdir_sweep(tasks_dir);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(null);
	return n;
}

static void
sweep(void)
{
	char path[600];

	CHECK(mkdtemp(tasks_dir) != NULL);
	put("01ARZ3NDEKTSV4RRFFQ69G5FA0", "steps", "start\t1\nphase\tagent");
	put("01ARZ3NDEKTSV4RRFFQ69G5FA1", "steps", "start\t1\nfiles\t0\n");
	put("01ARZ3NDEKTSV4RRFFQ69G5FA2", "steps", "start\t1\nend\t2\tended\n");
	put("01ARZ3NDEKTSV4RRFFQ69G5FA3", "argv", "x"); /* never started */
	put("not-a-task-id", "steps", "start\t1\n");    /* not ours */
	put("01ARZ3NDEKTSV4RRFFQ69G5FA4", "other", ""); /* steps a symlink */
	snprintf(path, sizeof(path), "%s/01ARZ3NDEKTSV4RRFFQ69G5FA4/steps",
	         tasks_dir);
	CHECK(symlink("../01ARZ3NDEKTSV4RRFFQ69G5FA1/steps", path) == 0);

	CHECK(quiet_sweep() == 2);
	CHECK(ended_after("01ARZ3NDEKTSV4RRFFQ69G5FA0",
	                  "start\t1\nphase\tagent\n"));
	CHECK(
	    ended_after("01ARZ3NDEKTSV4RRFFQ69G5FA1", "start\t1\nfiles\t0\n"));
	CHECK_STR(get("01ARZ3NDEKTSV4RRFFQ69G5FA2", "steps"),
	          "start\t1\nend\t2\tended\n");
	CHECK_STR(get("01ARZ3NDEKTSV4RRFFQ69G5FA3", "steps"), "(none)");
	CHECK_STR(get("not-a-task-id", "steps"), "start\t1\n");
	/* A second boot finds nothing left to end. */
	CHECK(quiet_sweep() == 0);
	CHECK(taskdir_sweep("/nonexistent/tasks") == 0);
}

static void
sweep_newest_only(void)
{
	char id[TASK_ID_LEN + 1];
	unsigned i;

	/* TASK_SCAN_DIRS + 5 unfinished tasks: only the newest are ended. */
	for (i = 0; i < TASK_SCAN_DIRS + 5; i++) {
		snprintf(id, sizeof(id), "02000000000000000000%06u", i);
		put(id, "steps", "start\t1\n");
	}
	CHECK(quiet_sweep() == TASK_SCAN_DIRS);
	CHECK_STR(get("02000000000000000000000004", "steps"), "start\t1\n");
	CHECK(ended_after("02000000000000000000000005", "start\t1\n"));
	snprintf(id, sizeof(id), "02000000000000000000%06u",
	         TASK_SCAN_DIRS + 4);
	CHECK(ended_after(id, "start\t1\n"));
}

static void
dir_files(void)
{
	char path[600], line[TASK_TEXT_MAX + 1];
	size_t len;
	char *buf;
	int dir, fd;

	put("03000000000000000000000000", "argv", "a\0");
	snprintf(path, sizeof(path), "%s/03000000000000000000000000/link",
	         tasks_dir);
	CHECK(symlink("argv", path) == 0);
	snprintf(path, sizeof(path), "%s/03000000000000000000000000/sub",
	         tasks_dir);
	CHECK(mkdir(path, 0755) == 0);
	dir = taskdir_open(tasks_dir, "03000000000000000000000000");
	CHECK(dir != -1);
	buf = taskdir_read(dir, "argv", 100, &len);
	CHECK(buf != NULL && len == 1 && buf[0] == 'a');
	free(buf);
	CHECK(taskdir_read(dir, "argv", 0, &len) == NULL && errno == EFBIG);
	CHECK(taskdir_read(dir, "link", 100, &len) == NULL && errno == ELOOP);
	CHECK(taskdir_read(dir, "sub", 100, &len) == NULL && errno == EINVAL);
	CHECK(taskdir_read(dir, "none", 100, &len) == NULL && errno == ENOENT);
	CHECK(taskdir_create(dir, "link", 0) == -1 && errno == ELOOP);
	fd = taskdir_create(dir, "steps", O_EXCL);
	CHECK(fd != -1);
	taskdir_record(fd, "start\t%d", 5);
	taskdir_record(fd, "agent\t%d\t%s", 0, "exited");
	close(fd);
	CHECK(taskdir_create(dir, "steps", O_EXCL) == -1 && errno == EEXIST);
	CHECK_STR(get("03000000000000000000000000", "steps"),
	          "start\t5\nagent\t0\texited\n");
	/* The last line of a log, written since an offset. */
	fd = taskdir_create(dir, "checkpoint.log", O_RDWR);
	CHECK(fd != -1);
	CHECK(write(fd, "old error\n", 10) == 10);
	CHECK(taskdir_last_line(fd, 10, line) == 0 && line[0] == '\0');
	CHECK(write(fd, LIT("hint: x\nfatal: \x01"
	                    "bad\n\n")) == 21);
	CHECK(taskdir_last_line(fd, 10, line) == 11);
	CHECK_STR(line, "fatal:  bad");
	close(fd);
	CHECK(taskdir_put(dir, "revert", "ok\n", 3) == 0);
	CHECK_STR(get("03000000000000000000000000", "revert"), "ok\n");
	close(dir);
	snprintf(path, sizeof(path), "%s/04000000000000000000000000",
	         tasks_dir);
	CHECK(symlink("03000000000000000000000000", path) == 0);
	CHECK(taskdir_open(tasks_dir, "04000000000000000000000000") == -1 &&
	      errno == ELOOP);
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"task ids", ids},
	    {"task timeouts", timeouts},
	    {"argv files", argv_files},
	    {"env files", env_files},
	    {"variables withheld from the agent", env_withheld},
	    {"steps record text", record_text},
	    {"steps files read back", steps_scan},
	    {"the checkpoint's output", checkpoint_output},
	    {"last line of a log", last_lines},
	    {"cgroup OOM-kill counts", oom_counts},
	    {"files list from git's NUL-separated paths", names_stream},
	    {"boot sweep ends interrupted tasks", sweep},
	    {"boot sweep looks at the newest ids only", sweep_newest_only},
	    {"task directory files", dir_files},
	};
	int rc;

	rc = UNIT_RUN("supervisor tasks", tests);
	if (strncmp(tasks_dir, "/tmp/test-supervisor-tasks.", 27) == 0 &&
	    nftw(tasks_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		rc = 1;
	return rc;
}
