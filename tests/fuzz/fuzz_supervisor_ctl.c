/*
 * libFuzzer target: the supervisor's control-request parser, the app's
 * environment parser and the JSON writer.  Any bytes parse without reading
 * past the buffer, request arguments lie inside the line and fit their
 * request (task start: an id word and a timeout, neither empty), env's
 * body is exactly the length its line gives, right after the line (or the
 * parser asks for exactly that many bytes); an environment that parses has
 * only valid, unreserved, unique names in order and equals itself parsed
 * again; and any bytes written as a JSON string give JSON the control
 * plane's parser accepts, with valid UTF-8 coming back unchanged.  The
 * supervisor's sources are included directly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/supervisor/appenv.c"
#include "../../src/supervisor/ctl.c"
#include "../../src/supervisor/jw.c"
#include "../../src/supervisor/log.c"
#include "lib/jv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Task requests: the id is one word, the timeout the rest of the line,
 * neither empty, both inside the line, in order. */
static void
check_args(const char *copy, size_t size, const struct ctl_req *r)
{
	const char *end = copy + size;

	if (r->op == CTL_UNKNOWN || r->op == CTL_TOO_LONG ||
	    r->op == CTL_SHORT) {
		if (r->arg != NULL || r->arg2 != NULL || r->body != NULL)
			__builtin_trap();
		return;
	}
	if (r->op != CTL_ENV && (r->body != NULL || r->body_len != 0))
		__builtin_trap();
	if (r->op == CTL_TASK_START &&
	    (r->arg < copy || r->arg_len == 0 || r->arg2 == NULL ||
	     r->arg2_len == 0 || memchr(r->arg, ' ', r->arg_len) != NULL ||
	     r->arg2 != r->arg + r->arg_len + 1 || r->arg2 + r->arg2_len > end))
		__builtin_trap();
	if ((r->op == CTL_TASK_CANCEL || r->op == CTL_TASK_REVERT) &&
	    (r->arg < copy || r->arg_len == 0 || r->arg + r->arg_len > end ||
	     r->arg2 != NULL))
		__builtin_trap();
	if ((r->op == CTL_PING || r->op == CTL_STATUS || r->op == CTL_RELOAD) &&
	    (r->arg != NULL || r->arg2 != NULL))
		__builtin_trap();
	/* Arguments are never part of a line's '\n' or beyond it. */
	if (r->arg != NULL && memchr(r->arg, '\n', r->arg_len) != NULL)
		__builtin_trap();
	if (r->arg2 != NULL && memchr(r->arg2, '\n', r->arg2_len) != NULL)
		__builtin_trap();
}

/* The length env's line gives. */
static size_t
env_length(const struct ctl_req *r)
{
	size_t n = 0, i;

	for (i = 0; i < r->arg_len; i++) {
		if (r->arg[i] < '0' || r->arg[i] > '9')
			__builtin_trap();
		n = n * 10 + (size_t)(r->arg[i] - '0');
	}
	return n;
}

/* env: the body is as long as the line says and starts right after it. */
static void
check_env(const char *copy, size_t size, const struct ctl_req *r)
{
	const char *nl = memchr(copy, '\n', size);
	const char *start = nl != NULL ? nl + 1 : copy + size;

	if (r->op != CTL_ENV)
		return;
	if (r->arg_len == 0 || r->arg_len > 7 || r->arg2 != NULL ||
	    r->body != start || r->body_len != env_length(r) ||
	    r->body_len > CTL_BODY_MAX || r->body + r->body_len > copy + size)
		__builtin_trap();
}

/* A set that parses keeps the rules; parsing it again gives it again. */
static void
check_appenv(const char *s, size_t size)
{
	struct appenv e, again;
	char err[256];
	size_t i, len;
	const char *eq;

	if (appenv_parse(s, size, &e, err, sizeof(err)) == -1) {
		if (e.n != 0 || e.buf != NULL || err[0] == '\0')
			__builtin_trap();
		return;
	}
	if (e.n > APPENV_MAX)
		__builtin_trap();
	for (i = 0; i < e.n; i++) {
		eq = strchr(e.list[i], '=');
		len = eq != NULL ? (size_t)(eq - e.list[i]) : 0;
		if (!appenv_name_ok(e.list[i], len) ||
		    appenv_reserved(e.list[i], len) ||
		    !appenv_has(&e, e.list[i]) ||
		    (i > 0 && appenv_cmp(&e.list[i - 1], &e.list[i]) >= 0))
			__builtin_trap();
	}
	if (appenv_parse(e.buf, e.len, &again, err, sizeof(err)) == -1 ||
	    !appenv_equal(&e, &again))
		__builtin_trap();
	appenv_free(&again);
	appenv_free(&e);
}

static void
check_request(const char *s, size_t size)
{
	/* A private copy, exactly size bytes, so ASan sees overreads. */
	char *copy = malloc(size ? size : 1);
	struct ctl_req r;

	memcpy(copy, s, size);
	if (!ctl_parse(copy, size, true, &r))
		__builtin_trap();
	if (r.op == CTL_RESTART &&
	    (r.arg < copy || r.arg_len == 0 || r.arg + r.arg_len > copy + size))
		__builtin_trap();
	check_args(copy, size, &r);
	check_env(copy, size, &r);
	if (r.op == CTL_ENV)
		check_appenv(r.body, r.body_len);
	/* Without EOF it may wait for more, but once it has a line only for
	 * the rest of env's body, and it says how much that is. */
	if (!ctl_parse(copy, size, false, &r) && memchr(copy, '\n', size) &&
	    (r.want <= size || r.want > CTL_LINE_MAX + 2 + CTL_BODY_MAX))
		__builtin_trap();
	free(copy);
}

static bool
valid_utf8_no_nul(const char *s, size_t n)
{
	struct jw w;
	bool same;

	/* jw passes valid UTF-8 through: escaping must not touch it. */
	if (memchr(s, '\0', n) != NULL)
		return false;
	jw_init(&w, 8 * n + 16);
	jw_str(&w, s, n);
	same = strstr(w.p, "\\ufffd") == NULL;
	jw_release(&w);
	return same;
}

static void
check_json(const char *s, size_t size)
{
	char perr[128];
	struct jv *v;
	struct jw w;

	jw_init(&w, CTL_ANSWER_MAX);
	jw_raw(&w, "{\"ok\":false,\"error\":");
	jw_str(&w, s, size);
	jw_raw(&w, "}");
	if (!jw_ok(&w))
		__builtin_trap();
	v = jv_parse(w.p, w.len, 4, perr, sizeof(perr));
	if (v == NULL || jv_str(jv_get(v, "error")) == NULL)
		__builtin_trap();
	if (valid_utf8_no_nul(s, size) &&
	    (jv_str_len(jv_get(v, "error")) != size ||
	     memcmp(jv_str(jv_get(v, "error")), s, size) != 0))
		__builtin_trap();
	jv_free(v);
	jw_release(&w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_request((const char *)data, size);
	check_appenv((const char *)data, size);
	if (size <= 4096)
		check_json((const char *)data, size);
	return 0;
}
