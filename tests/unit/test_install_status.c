/*
 * Unit tests of the install step as the control plane reports it: the
 * supervisor's "install" object copied field by field from a hostile
 * answer (sandbox/supanswer.c), and the problem it makes of a running or
 * failed install with install.log's last lines (applog/problem.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "applog/problem.h"
#include "sandbox/supanswer.h"
#include "unit.h"

#define KEY "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct jv *
status_of(const char *text)
{
	struct jv *ans = supanswer_parse(text, strlen(text)), *st;

	CHECK(ans != NULL);
	st = ans ? supanswer_status(ans) : NULL;
	jv_free(ans);
	return st;
}

static const char *
install_str(const struct jv *st, const char *key)
{
	return jv_str(jv_get(jv_get(st, "install"), key));
}

static bool
install_null(const struct jv *st, const char *key)
{
	const struct jv *v = jv_get(jv_get(st, "install"), key);

	return v != NULL && jv_type(v) == JV_NULL;
}

static void
install_is_copied_field_by_field(void)
{
	struct jv *st;

	st = status_of("{\"ok\":true,\"health\":\"starting\",\"processes\":[],"
	               "\"install\":{\"state\":\"running\",\"key\":\"" KEY
	               "\",\"exit_code\":null,\"started_at_ms\":17,"
	               "\"ended_at_ms\":null,\"extra\":\"x\"}}");
	CHECK_STR(install_str(st, "state"), "running");
	CHECK_STR(install_str(st, "key"), KEY);
	CHECK(install_null(st, "exit_code") && install_null(st, "ended_at_ms"));
	CHECK(jv_int(jv_get(jv_get(st, "install"), "started_at_ms")) == 17);
	CHECK(jv_get(jv_get(st, "install"), "extra") == NULL);
	jv_free(st);

	/* No install member (an older supervisor): none. */
	st = status_of("{\"ok\":true,\"health\":\"ready\",\"processes\":[]}");
	CHECK_STR(install_str(st, "state"), "none");
	CHECK(install_null(st, "key"));
	jv_free(st);

	/* Hostile values: unknown state, a key that is not 64 hex, a
	 * negative or non-integer exit code. */
	st = status_of("{\"install\":{\"state\":\"<script>\",\"key\":\"../x\","
	               "\"exit_code\":-4,\"started_at_ms\":\"soon\"}}");
	CHECK_STR(install_str(st, "state"), "unknown");
	CHECK(install_null(st, "key") && install_null(st, "exit_code") &&
	      install_null(st, "started_at_ms"));
	jv_free(st);
	st = status_of("{\"install\":{\"state\":\"done\",\"key\":\"" KEY
	               "0\"}}");
	CHECK(install_null(st, "key"));
	jv_free(st);
	st = status_of("{\"install\":\"failed\"}");
	CHECK_STR(install_str(st, "state"), "none");
	jv_free(st);
}

static struct jv *
obj(const char *text)
{
	char err[128];

	return jv_parse(text, strlen(text), 4, err, sizeof(err));
}

static void
problems_of_the_install(void)
{
	char ws[] = "/tmp/test_install_status.XXXXXX", p[256];
	struct jv *in, *pr;
	struct sandbox sb = {0};
	struct wsnode_ref src = {.ws = ws, .sb = &sb};
	FILE *f;

	CHECK(mkdtemp(ws) != NULL);
	snprintf(p, sizeof(p), "mkdir -p %s/.sandboxd/logs", ws);
	CHECK(system(p) == 0);
	snprintf(p, sizeof(p), "%s/.sandboxd/logs/install.log", ws);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("npm error code E404\n"
		      "npm error 404 Not Found - GET nope\n",
		      f);
		fclose(f);
	}

	in = obj("{\"state\":\"running\"}");
	pr = applog_install_problem(&src, "01ARZ3NDEKTSV4RRFFQ69G5FAV", in);
	CHECK(pr != NULL);
	CHECK_STR(jv_str(jv_get(pr, "kind")), "installing");
	CHECK_STR(jv_str(jv_get(pr, "summary")), "installing dependencies");
	CHECK_STR(jv_str(jv_get(pr, "process")), "install");
	jv_free(pr);
	jv_free(in);

	in = obj("{\"state\":\"failed\",\"exit_code\":1}");
	pr = applog_install_problem(&src, "01ARZ3NDEKTSV4RRFFQ69G5FAV", in);
	CHECK(pr != NULL);
	CHECK_STR(jv_str(jv_get(pr, "kind")), "install_failed");
	CHECK_STR(jv_str(jv_get(pr, "summary")),
	          "the install failed (exit 1): npm error 404 Not Found - GET "
	          "nope");
	CHECK(jv_len(jv_get(pr, "lines")) == 2);
	jv_free(pr);
	jv_free(in);

	in = obj("{\"state\":\"done\"}");
	CHECK(applog_install_problem(&src, "01ARZ3NDEKTSV4RRFFQ69G5FAV", in) ==
	      NULL);
	jv_free(in);
	CHECK(applog_install_problem(&src, "01ARZ3NDEKTSV4RRFFQ69G5FAV",
	                             NULL) == NULL);
	snprintf(p, sizeof(p), "rm -rf %s", ws);
	CHECK(system(p) == 0);
}

static const struct unit_test tests[] = {
    {"install is copied field by field", install_is_copied_field_by_field},
    {"the problems of the install", problems_of_the_install},
};

int
main(void)
{
	return UNIT_RUN("install status", tests);
}
