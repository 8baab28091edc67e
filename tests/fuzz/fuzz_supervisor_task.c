/*
 * libFuzzer target: the supervisor's agent-task formats (task.c).  Any
 * bytes as an argv or env file are refused or give entries inside the
 * buffer that obey the rules (argv[0] not empty, NAME=value names); as a
 * steps record's text they give at most TASK_TEXT_MAX bytes of valid UTF-8
 * without control characters (and text that was already fine comes back
 * unchanged); as a steps file, a checkpoint's output or a log they give
 * commit ids and lines inside the buffer; as git's path list they give
 * the same lines however the bytes are split.  The supervisor's sources
 * are included directly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/supervisor/jw.c"
#include "../../src/supervisor/task.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A private copy, exactly size bytes, so ASan sees overreads. */
static char *
dup_exact(const uint8_t *data, size_t size)
{
	char *p = malloc(size ? size : 1);

	memcpy(p, data, size);
	return p;
}

static void
check_list(const uint8_t *data, size_t size, bool env)
{
	char *list[TASK_ARGV_MAX + TASK_ENV_MAX + 1], err[256];
	char *buf = dup_exact(data, size);
	size_t total = 0;
	int n, i;

	n = env ? task_env_parse(buf, size, list, err, sizeof(err))
	        : task_argv_parse(buf, size, list, err, sizeof(err));
	if (n == -1) {
		if (strncmp(err, env ? "env" : "argv", env ? 3 : 4) != 0)
			__builtin_trap();
		free(buf);
		return;
	}
	if (n > (env ? TASK_ENV_MAX : TASK_ARGV_MAX) || list[n] != NULL ||
	    (!env && (n == 0 || list[0][0] == '\0')))
		__builtin_trap();
	for (i = 0; i < n; i++) {
		if (list[i] != buf + total)
			__builtin_trap();
		total += strlen(list[i]) + 1;
		if (env && (strchr(list[i], '=') == NULL ||
		            !task_env_same(list[i], list[i])))
			__builtin_trap();
		task_env_withheld(list[i]);
	}
	if (total != size)
		__builtin_trap();
	free(buf);
}

/* Whether s is valid UTF-8 without any control character. */
static bool
clean_text(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		if (u[i] < 0x20 || u[i] == 0x7f)
			return false;
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		k = jw_utf8_len(u + i, n - i);
		if (k == 0 || (u[i] == 0xc2 && u[i + 1] < 0xa0))
			return false;
		i += k;
	}
	return true;
}

static void
check_text(const uint8_t *data, size_t size)
{
	char out[TASK_TEXT_MAX + 1];
	char *in = dup_exact(data, size);
	size_t n = task_text(out, in, size);

	if (n > TASK_TEXT_MAX || out[n] != '\0' || strlen(out) != n ||
	    !clean_text(out, n))
		__builtin_trap();
	if (size <= TASK_TEXT_MAX && clean_text(in, size) &&
	    (n != size || memcmp(out, in, size) != 0))
		__builtin_trap();
	free(in);
}

static void
check_reads(const uint8_t *data, size_t size)
{
	char *buf = dup_exact(data, size), sha[TASK_SHA_MAX + 1];
	struct task_steps st;
	const char *line;
	size_t n;

	task_steps_scan(buf, size, &st);
	if (st.sha[0] != '\0' && !task_sha_ok(st.sha, strlen(st.sha)))
		__builtin_trap();
	if (task_sha_parse(buf, size, sha) && !task_sha_ok(sha, strlen(sha)))
		__builtin_trap();
	n = task_last_line(buf, size, &line);
	if (n > 0 && (line < buf || line + n > buf + size ||
	              memchr(line, '\n', n) != NULL || line[n - 1] == ' ' ||
	              line[n - 1] == '\r'))
		__builtin_trap();
	if (task_oom_parse(buf, size) < -1)
		__builtin_trap();
	if (task_id_ok(buf, size) && size != TASK_ID_LEN)
		__builtin_trap();
	if (task_timeout_parse(buf, size) > TASK_TIMEOUT_MAX_S)
		__builtin_trap();
	free(buf);
}

struct names_out {
	char *p;
	size_t len;
};

static void
names_emit(void *ctx, const char *line, size_t len)
{
	struct names_out *o = ctx;

	if (len < 2 || len > TASK_NAME_MAX + 1 || line[len - 1] != '\n' ||
	    memchr(line, '\n', len - 1) != NULL ||
	    memchr(line, '\0', len) != NULL)
		__builtin_trap();
	o->p = realloc(o->p, o->len + len);
	memcpy(o->p + o->len, line, len);
	o->len += len;
}

static void
check_names(const uint8_t *data, size_t size)
{
	static struct task_names s;
	struct names_out whole = {0}, split = {0};
	size_t half = size ? data[0] % (size + 1) : 0;

	task_names_init(&s);
	task_names_feed(&s, (const char *)data, size, names_emit, &whole);
	task_names_init(&s);
	task_names_feed(&s, (const char *)data, half, names_emit, &split);
	task_names_feed(&s, (const char *)data + half, size - half, names_emit,
	                &split);
	if (whole.len != split.len ||
	    (whole.len > 0 && memcmp(whole.p, split.p, whole.len) != 0))
		__builtin_trap();
	free(whole.p);
	free(split.p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_list(data, size, false);
	check_list(data, size, true);
	check_text(data, size);
	check_reads(data, size);
	check_names(data, size);
	return 0;
}
