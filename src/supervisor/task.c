/*
 * task.c - the formats of a task's files.
 *
 * The task directory lives in the sandbox user's workspace, so everything
 * read from it is untrusted input even though the control plane wrote it:
 * each parser checks every byte it relies on, enforces its limits and
 * reports the first problem in words the control plane can pass on.
 *
 * The argv and env files are NUL-terminated strings back to back, the
 * form execve() wants, so parsing them is pointing into the buffer.
 *
 * What the supervisor writes (steps records) must stay one record per
 * line for a reader that splits on '\n' and '\t': text fields lose their
 * control characters and are kept valid UTF-8 and short, so a git error
 * message or a health detail cannot break the framing.
 *
 * Rejected: argv as one shell string (quoting a prompt for sh is where
 * injection bugs live; the control plane builds an argv anyway); JSON
 * files (a parser in PID 1 for two flat lists).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jw.h"
#include "task.h"

static bool
task_crockford(char ch)
{
	return (ch >= '0' && ch <= '9') ||
	       (ch >= 'A' && ch <= 'Z' && ch != 'I' && ch != 'L' && ch != 'O' &&
	        ch != 'U');
}

bool
task_id_ok(const char *s, size_t len)
{
	size_t i;

	/* 26 characters hold 130 bits; a ULID has 128, so the first
	 * character is at most 7. */
	if (len != TASK_ID_LEN || s[0] < '0' || s[0] > '7')
		return false;
	for (i = 1; i < len; i++)
		if (!task_crockford(s[i]))
			return false;
	return true;
}

unsigned
task_timeout_parse(const char *s, size_t len)
{
	unsigned long v = 0;
	size_t i;

	if (len == 0 || len > 9 || s[0] == '0')
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	return v <= TASK_TIMEOUT_MAX_S ? (unsigned)v : 0;
}

/* A file of NUL-terminated strings, as its errors name it. */
struct task_list {
	const char *file, *one, *many; /* "argv", "argument", "arguments" */
	int max;
};

static const struct task_list task_argv_list = {
    .file = "argv",
    .one = "argument",
    .many = "arguments",
    .max = TASK_ARGV_MAX,
};
static const struct task_list task_env_list = {
    .file = "env",
    .one = "entry",
    .many = "entries",
    .max = TASK_ENV_MAX,
};

/*
 * Points list[] at the NUL-terminated strings of buf, at most l->max of
 * them, and a final NULL.  Returns the count, or -1 with err set when the
 * last one lacks its NUL or there are more.
 */
static int
task_split(const struct task_list *l, char *buf, size_t len, char **list,
           char *err, size_t errlen)
{
	size_t off = 0;
	int n = 0;

	if (len > 0 && buf[len - 1] != '\0') {
		snprintf(err, errlen, "%s: the last %s is not NUL-terminated",
		         l->file, l->one);
		return -1;
	}
	while (off < len) {
		if (n == l->max) {
			snprintf(err, errlen, "%s: more than %d %s", l->file,
			         l->max, l->many);
			return -1;
		}
		list[n++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	list[n] = NULL;
	return n;
}

int
task_argv_parse(char *buf, size_t len, char **argv, char *err, size_t errlen)
{
	int n = task_split(&task_argv_list, buf, len, argv, err, errlen);

	if (n == -1)
		return -1;
	if (n == 0) {
		snprintf(err, errlen, "argv is empty");
		return -1;
	}
	if (argv[0][0] == '\0') {
		snprintf(err, errlen,
		         "argv: the program (argument 0) is empty");
		return -1;
	}
	return n;
}

/* The length of the NAME in "NAME=value", 0 when it is not one. */
static size_t
task_env_name(const char *kv)
{
	size_t i;

	if (!((kv[0] >= 'A' && kv[0] <= 'Z') ||
	      (kv[0] >= 'a' && kv[0] <= 'z') || kv[0] == '_'))
		return 0;
	for (i = 1; kv[i] != '=' && kv[i] != '\0'; i++)
		if (!((kv[i] >= 'A' && kv[i] <= 'Z') ||
		      (kv[i] >= 'a' && kv[i] <= 'z') ||
		      (kv[i] >= '0' && kv[i] <= '9') || kv[i] == '_'))
			return 0;
	return kv[i] == '=' ? i : 0;
}

int
task_env_parse(char *buf, size_t len, char **env, char *err, size_t errlen)
{
	int n = task_split(&task_env_list, buf, len, env, err, errlen), i;

	for (i = 0; i < n; i++) {
		if (task_env_name(env[i]) == 0) {
			snprintf(err, errlen,
			         "env: entry %d is not NAME=value with NAME "
			         "[A-Za-z_][A-Za-z0-9_]*",
			         i + 1);
			return -1;
		}
	}
	return n;
}

static bool
task_ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && strncasecmp(s + len - n, suffix, n) == 0;
}

bool
task_env_withheld(const char *kv)
{
	static const char *const secret[] = {
	    "_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS", "_APIKEY",
	};
	const char *eq = strchr(kv, '=');
	size_t len, i;

	if (eq == NULL)
		return true;
	len = (size_t)(eq - kv);
	if (strncmp(kv, "SANDBOXD_INIT_", 14) == 0)
		return true;
	for (i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		if (task_ends_with(kv, len, secret[i]))
			return true;
	return false;
}

bool
task_env_same(const char *a, const char *b)
{
	const char *ea = strchr(a, '='), *eb = strchr(b, '=');

	return ea != NULL && eb != NULL && ea - a == eb - b &&
	       memcmp(a, b, (size_t)(ea - a)) == 0;
}

/* --- what the supervisor writes ------------------------------------------ */

size_t
task_text(char *dst, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, out = 0, k;

	while (i < n) {
		if (u[i] < 0x20 || u[i] == 0x7f) {
			k = 1;
			if (out + 1 > TASK_TEXT_MAX)
				break;
			dst[out++] = ' ';
		} else if (u[i] < 0x80) {
			k = 1;
			if (out + 1 > TASK_TEXT_MAX)
				break;
			dst[out++] = s[i];
		} else if ((k = jw_utf8_len(u + i, n - i)) > 0) {
			/* C1 controls are U+0080-U+009F: 0xc2 0x80-0x9f. */
			if (u[i] == 0xc2 && u[i + 1] < 0xa0) {
				if (out + 1 > TASK_TEXT_MAX)
					break;
				dst[out++] = ' ';
			} else {
				if (out + k > TASK_TEXT_MAX)
					break;
				memcpy(dst + out, s + i, k);
				out += k;
			}
		} else {
			k = 1;
			if (out + 3 > TASK_TEXT_MAX)
				break;
			memcpy(dst + out, "\xef\xbf\xbd", 3);
			out += 3;
		}
		i += k;
	}
	dst[out] = '\0';
	return out;
}

/* --- what the supervisor reads back -------------------------------------- */

bool
task_sha_ok(const char *s, size_t len)
{
	size_t i;

	if (len != 40 && len != TASK_SHA_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Whether the line (len bytes) is the record word followed by a TAB. */
static bool
task_is_record(const char *line, size_t len, const char *word)
{
	size_t n = strlen(word);

	return len > n && memcmp(line, word, n) == 0 && line[n] == '\t';
}

static void
task_steps_line(const char *line, size_t len, struct task_steps *st)
{
	const char *sha, *tab;
	size_t n;

	if (task_is_record(line, len, "start"))
		st->start = true;
	else if (task_is_record(line, len, "end"))
		st->end = true;
	else if (task_is_record(line, len, "checkpoint")) {
		sha = line + 11;
		tab = memchr(sha, '\t', len - 11);
		n = tab != NULL ? (size_t)(tab - sha) : len - 11;
		if (task_sha_ok(sha, n)) {
			memcpy(st->sha, sha, n);
			st->sha[n] = '\0';
		}
	}
}

void
task_steps_scan(const char *buf, size_t len, struct task_steps *st)
{
	const char *p = buf, *nl;
	size_t left = len;

	memset(st, 0, sizeof(*st));
	while (left > 0) {
		nl = memchr(p, '\n', left);
		if (nl == NULL) {
			task_steps_line(p, left, st);
			break;
		}
		task_steps_line(p, (size_t)(nl - p), st);
		left -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
}

bool
task_sha_parse(const char *buf, size_t len, char *sha)
{
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	if (!task_sha_ok(buf, len))
		return false;
	memcpy(sha, buf, len);
	sha[len] = '\0';
	return true;
}

size_t
task_last_line(const char *buf, size_t len, const char **line)
{
	size_t end = len, start, i;

	*line = NULL;
	while (end > 0) {
		start = end;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		i = end;
		while (i > start && (buf[i - 1] == '\r' || buf[i - 1] == ' ' ||
		                     buf[i - 1] == '\t'))
			i--;
		if (i > start) {
			*line = buf + start;
			return i - start;
		}
		end = start > 0 ? start - 1 : 0;
	}
	return 0;
}

long long
task_oom_parse(const char *buf, size_t len)
{
	static const char key[] = "oom_kill ";
	const size_t kl = sizeof(key) - 1;
	long long v;
	size_t i = 0, j;

	while (i < len) {
		if (len - i > kl && memcmp(buf + i, key, kl) == 0) {
			v = 0;
			for (j = i + kl; j < len && buf[j] >= '0' &&
			                 buf[j] <= '9' && v < (1LL << 50);
			     j++)
				v = v * 10 + (buf[j] - '0');
			if (j > i + kl && (j == len || buf[j] == '\n'))
				return v;
			return -1;
		}
		while (i < len && buf[i] != '\n')
			i++;
		i++;
	}
	return -1;
}

/* --- the files list ------------------------------------------------------ */

void
task_names_init(struct task_names *s)
{
	s->len = 0;
	s->skip = false;
}

void
task_names_feed(struct task_names *s, const char *buf, size_t n,
                task_names_fn *emit, void *ctx)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] == '\0') {
			if (!s->skip && s->len > 0) {
				s->name[s->len] = '\n';
				emit(ctx, s->name, s->len + 1);
			}
			task_names_init(s);
		} else if (s->skip) {
			continue;
		} else if (buf[i] == '\n' || s->len == TASK_NAME_MAX) {
			s->skip = true;
		} else {
			s->name[s->len++] = buf[i];
		}
	}
}
