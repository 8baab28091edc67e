/*
 * Unit tests of the supervisor's run.conf parser (src/supervisor/conf.c):
 * what a good file gives, that every bad line is refused with its line
 * number, the limits (records, line length), duplicate names, ports and
 * TABs.  The supervisor is its own binary, so its source is included here
 * directly rather than linked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/supervisor/conf.c"
#include "unit.h"

static char err[256];

/* Parses s; returns 0 or -1 like conf_parse, the conf freed unless kept. */
static int
parse(const char *s, struct conf *keep)
{
	struct conf c;
	int r;

	err[0] = '\0';
	r = conf_parse(s, strlen(s), &c, err, sizeof(err));
	if (keep != NULL)
		*keep = c;
	else
		conf_free(&c);
	return r;
}

/* s must be refused with an error that contains want. */
static void
refused(const char *s, const char *want)
{
	struct conf c;

	if (parse(s, &c) != -1) {
		fprintf(stderr, "  accepted: %s\n", s);
		unit_failed = 1;
		conf_free(&c);
		return;
	}
	CHECK(c.n == 0);
	if (strstr(err, want) == NULL) {
		fprintf(stderr, "  error \"%s\" lacks \"%s\"\n", err, want);
		unit_failed = 1;
	}
}

static void
good_file(void)
{
	struct conf c;

	CHECK(parse("# sandboxd run.conf 1\n"
	            "\n"
	            "web\t3000\t/healthz\t1\tnpm run dev -- --port \"$PORT\"\n"
	            "worker\tqueue-1\t0\tnode worker.js\n"
	            "# a comment\n"
	            "worker\tmail_2\t1\tsleep 1\n"
	            "build\t120\tnpm run build",
	            &c) == 0);
	CHECK(c.n == 4);
	CHECK(c.recs[0].kind == CONF_WEB);
	CHECK_STR(c.recs[0].name, "web");
	CHECK(c.recs[0].port == 3000);
	CHECK_STR(c.recs[0].path, "/healthz");
	CHECK(c.recs[0].restart_after_task);
	CHECK_STR(c.recs[0].cmd, "npm run dev -- --port \"$PORT\"");
	CHECK(c.recs[1].kind == CONF_WORKER);
	CHECK_STR(c.recs[1].name, "queue-1");
	CHECK(!c.recs[1].restart_after_task);
	CHECK(c.recs[1].path == NULL);
	CHECK_STR(c.recs[2].name, "mail_2");
	CHECK(c.recs[3].kind == CONF_BUILD);
	CHECK(c.recs[3].timeout_s == 120);
	CHECK_STR(c.recs[3].cmd, "npm run build");
	conf_free(&c);
	CHECK(c.n == 0);
}

static void
empty_and_comments_only(void)
{
	struct conf c;

	CHECK(parse("", &c) == 0 && c.n == 0);
	CHECK(parse("# nothing\n\n#\n", &c) == 0 && c.n == 0);
}

static void
command_keeps_tabs_and_text(void)
{
	struct conf c;

	CHECK(parse("worker\tw\t0\tprintf 'a\\tb'\tx\t\n", &c) == 0);
	CHECK_STR(c.recs[0].cmd, "printf 'a\\tb'\tx\t");
	conf_free(&c);
	CHECK(parse("worker\tw\t0\t  é ünïcode  \n", &c) == 0);
	CHECK_STR(c.recs[0].cmd, "  é ünïcode  ");
	conf_free(&c);
}

static void
bad_lines_name_their_line(void)
{
	refused("\n# c\nweb\t3000\t/\t0\n", "run.conf line 3: want web<TAB>");
	refused("worker\tw\t0\tok\nnope\tx\n", "run.conf line 2: unknown");
	refused("Web\t3000\t/\t0\tx\n", "line 1: unknown record type");
	refused(" web\t3000\t/\t0\tx\n", "line 1: unknown record type");
	refused("web 3000 / 0 x\n", "line 1: unknown record type");
	refused("worker\tw\t0\n", "line 1: want worker<TAB>name");
	refused("build\t10\n", "line 1: want build<TAB>timeout");
	refused("web\t3000\t/\t0\t\n", "line 1: empty command");
	refused("worker\tw\t0\t\n", "line 1: empty command");
	refused("web\t3000\t/\t2\tx\n", "restart_after_task must be 0 or 1");
	refused("worker\tw\tyes\tx\n", "restart_after_task must be 0 or 1");
	refused("build\t0\tx\n", "build timeout must be 1-86400");
	refused("build\t86401\tx\n", "build timeout");
	refused("build\t10\tx\nbuild\t10\ty\n", "line 2: more than one build");
}

static void
ports(void)
{
	struct conf c;

	refused("web\t0\t/\t0\tx\n", "port must be 1-65535, not \"0\"");
	refused("web\t65536\t/\t0\tx\n", "port must be 1-65535");
	refused("web\t-1\t/\t0\tx\n", "port must be");
	refused("web\t+80\t/\t0\tx\n", "port must be");
	refused("web\t080\t/\t0\tx\n", "port must be");
	refused("web\t80a\t/\t0\tx\n", "port must be");
	refused("web\t\t/\t0\tx\n", "port must be");
	refused("web\t99999999999999999999\t/\t0\tx\n", "port must be");
	CHECK(parse("web\t1\t/\t0\tx\n", NULL) == 0);
	CHECK(parse("web\t65535\t/\t0\tx\n", &c) == 0 &&
	      c.recs[0].port == 65535);
	conf_free(&c);
}

static void
health_paths(void)
{
	refused("web\t80\thealth\t0\tx\n", "health path must start with /");
	refused("web\t80\t\t0\tx\n", "health path must start with /");
	refused("web\t80\t/a b\t0\tx\n", "printable ASCII without spaces");
	refused("web\t80\t/\xc3\xa9\t0\tx\n", "printable ASCII");
	CHECK(parse("web\t80\t/api/health?full=1&x=%20\t0\tx\n", NULL) == 0);
}

static void
worker_names(void)
{
	char name[64], line[128];

	refused("worker\tWeb\t0\tx\n", "bad worker name \"Web\"");
	refused("worker\tweb\t0\tx\n", "bad worker name \"web\"");
	refused("worker\t-a\t0\tx\n", "bad worker name");
	refused("worker\t_a\t0\tx\n", "bad worker name");
	refused("worker\ta.b\t0\tx\n", "bad worker name");
	refused("worker\ta/b\t0\tx\n", "bad worker name");
	refused("worker\t\t0\tx\n", "bad worker name");
	memset(name, 'a', 33);
	name[33] = '\0';
	snprintf(line, sizeof(line), "worker\t%s\t0\tx\n", name);
	refused(line, "bad worker name");
	name[32] = '\0';
	snprintf(line, sizeof(line), "worker\t%s\t0\tx\n", name);
	CHECK(parse(line, NULL) == 0);
	CHECK(parse("worker\t0\t0\tx\nworker\tbuild\t0\tx\nbuild\t5\tx\n",
	            NULL) == 0);
}

static void
duplicates(void)
{
	refused("worker\ta\t0\tx\nworker\tb\t0\tx\nworker\ta\t1\ty\n",
	        "line 3: duplicate worker name \"a\"");
	refused("web\t80\t/\t0\tx\n#\nweb\t81\t/\t0\ty\n",
	        "line 3: more than one web record");
}

static void
at_most_16_records(void)
{
	char buf[2048];
	size_t n = 0;
	int i;

	for (i = 0; i < 16; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
		                      "worker\tw%d\t0\tsleep 1\n", i);
	CHECK(parse(buf, NULL) == 0);
	snprintf(buf + n, sizeof(buf) - n, "# fine\nworker\tw16\t0\tx\n");
	refused(buf, "line 18: more than 16 records");
}

static void
line_length_limit(void)
{
	size_t head = strlen("worker\tw\t0\t");
	char *buf = malloc(CONF_LINE_MAX + 16);

	memcpy(buf, "worker\tw\t0\t", head);
	memset(buf + head, 'x', CONF_LINE_MAX - head);
	buf[CONF_LINE_MAX] = '\n';
	buf[CONF_LINE_MAX + 1] = '\0';
	CHECK(parse(buf, NULL) == 0);
	buf[CONF_LINE_MAX] = 'x';
	buf[CONF_LINE_MAX + 1] = '\n';
	buf[CONF_LINE_MAX + 2] = '\0';
	refused(buf, "line 1: longer than 4096 bytes");
	free(buf);
}

static void
control_characters(void)
{
	struct conf c;

	refused("worker\tw\t0\tx\r\n", "line 1: control character 0x0d");
	refused("worker\tw\t0\ta\x1b[0m\n", "control character 0x1b");
	/* A NUL would cut the command short: refused too. */
	CHECK(conf_parse("worker\tw\t0\ta\0b\n", 15, &c, err, sizeof(err)) ==
	      -1);
	CHECK(strstr(err, "control character 0x00") != NULL);
}

static void
whole_file_limit(void)
{
	struct conf c;
	char *buf = calloc(1, CONF_FILE_MAX + 1);

	memset(buf, '#', CONF_FILE_MAX + 1);
	CHECK(conf_parse(buf, CONF_FILE_MAX + 1, &c, err, sizeof(err)) == -1);
	CHECK(strstr(err, "larger than") != NULL);
	free(buf);
}

static void
records_compare_every_field(void)
{
	struct conf a, b;

	CHECK(parse("web\t80\t/\t0\tx\nworker\tw\t0\ty\n", &a) == 0);
	CHECK(parse("web\t80\t/\t0\tx\nworker\tw\t1\ty\n", &b) == 0);
	CHECK(conf_rec_equal(&a.recs[0], &b.recs[0]));
	CHECK(!conf_rec_equal(&a.recs[1], &b.recs[1]));
	conf_free(&b);
	CHECK(parse("web\t81\t/\t0\tx\n", &b) == 0);
	CHECK(!conf_rec_equal(&a.recs[0], &b.recs[0]));
	conf_free(&b);
	CHECK(parse("web\t80\t/h\t0\tx\n", &b) == 0);
	CHECK(!conf_rec_equal(&a.recs[0], &b.recs[0]));
	conf_free(&b);
	CHECK(parse("web\t80\t/\t0\tx \n", &b) == 0);
	CHECK(!conf_rec_equal(&a.recs[0], &b.recs[0]));
	conf_free(&b);
	conf_free(&a);
}

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void
install_records(void)
{
	struct conf c, d;

	CHECK(parse("web\t3000\t/\t0\tnpm run dev\n"
	            "install\t900\t" KEY "\tnpm ci\t--no-audit\n",
	            &c) == 0);
	CHECK(c.n == 2 && c.recs[1].kind == CONF_INSTALL);
	CHECK_STR(c.recs[1].name, "install");
	CHECK(c.recs[1].timeout_s == 900);
	CHECK_STR(c.recs[1].key, KEY);
	CHECK_STR(c.recs[1].cmd, "npm ci\t--no-audit");
	CHECK_STR(conf_kind_name(CONF_INSTALL), "install");
	CHECK(parse("install\t900\t" KEY "\tnpm ci\n", &d) == 0);
	CHECK(conf_rec_equal(&c.recs[1], &d.recs[0]) == false);
	conf_free(&d);
	/* The same command with another key is another record. */
	CHECK(parse("install\t900\t"
	            "1123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	            "abcdef\tnpm ci\t--no-audit\n",
	            &d) == 0);
	CHECK(!conf_rec_equal(&c.recs[1], &d.recs[0]));
	conf_free(&d);
	conf_free(&c);

	refused("install\t900\t" KEY "\n", "want install<TAB>timeout");
	refused("install\t0\t" KEY "\tx\n", "install timeout must be 1-86400");
	refused("install\t86401\t" KEY "\tx\n", "install timeout");
	refused("install\t9\tabc\tx\n", "install key must be 64");
	refused("install\t9\t" KEY "0\tx\n", "install key must be 64");
	refused(
	    "install\t9\t"
	    "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	    "\tx\n",
	    "install key must be 64");
	refused("install\t9\t" KEY "\t\n", "empty command");
	refused("install\t9\t" KEY "\tx\ninstall\t9\t" KEY "\ty\n",
	        "line 2: more than one install");
}

static void
record_copy_is_deep(void)
{
	struct conf a;
	struct conf_rec r;

	CHECK(parse("web\t80\t/h\t1\tcmd\n", &a) == 0);
	CHECK(conf_rec_copy(&r, &a.recs[0]) == 0);
	CHECK(r.cmd != a.recs[0].cmd && r.path != a.recs[0].path);
	CHECK(conf_rec_equal(&r, &a.recs[0]));
	conf_free(&a);
	CHECK_STR(r.cmd, "cmd");
	conf_rec_free(&r);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"a good file", good_file},
	    {"empty and comment-only files", empty_and_comments_only},
	    {"the command keeps TABs and text", command_keeps_tabs_and_text},
	    {"bad lines are refused naming the line",
	     bad_lines_name_their_line},
	    {"ports", ports},
	    {"health paths", health_paths},
	    {"worker names", worker_names},
	    {"duplicate names", duplicates},
	    {"at most 16 records", at_most_16_records},
	    {"lines of at most 4096 bytes", line_length_limit},
	    {"control characters", control_characters},
	    {"whole file limit", whole_file_limit},
	    {"records compare every field", records_compare_every_field},
	    {"record copy is deep", record_copy_is_deep},
	    {"install records", install_records},
	};

	return UNIT_RUN("supervisor conf", tests);
}
