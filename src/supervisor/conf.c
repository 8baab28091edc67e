/*
 * conf.c - the run.conf parser.
 *
 * run.conf is written by the control plane, but it lives in the sandbox
 * user's workspace, so it is parsed as untrusted input: a pure function
 * over a buffer, every field checked, every limit enforced, the first
 * problem reported with its line number, and all or nothing (a bad file
 * leaves the caller's configuration as it was).
 *
 * A line is split on TABs into exactly as many fields as its record type
 * has; the last field, the command, runs to the end of the line and may
 * itself contain TABs.  Control characters other than TAB are refused
 * anywhere (a CR from a CRLF file would otherwise end up in the command).
 *
 * Strings are copied out of the buffer, so a parsed conf does not pin the
 * file's bytes; it is small (16 records) and lives as long as the
 * processes it describes.
 *
 * Rejected: a general key=value or YAML syntax here (the control plane
 * parses sandbox.yaml; this side only needs a format that a few dozen
 * lines of C can check completely).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define CONF_MAX_FIELDS 5

/* A borrowed view of part of the buffer. */
struct conf_field {
	const char *p;
	size_t len;
};

/* Where the parser is, for error messages. */
struct conf_ctx {
	struct conf *c;
	unsigned line;
	char *err;
	size_t errlen;
};

struct conf_kind_spec {
	const char *word;
	enum conf_kind kind;
	size_t fields; /* including the type word */
	const char *usage;
	int (*parse)(struct conf_ctx *, const struct conf_field *,
	             struct conf_rec *);
};

static int conf_parse_web(struct conf_ctx *, const struct conf_field *,
                          struct conf_rec *);
static int conf_parse_worker(struct conf_ctx *, const struct conf_field *,
                             struct conf_rec *);
static int conf_parse_build(struct conf_ctx *, const struct conf_field *,
                            struct conf_rec *);
static int conf_parse_install(struct conf_ctx *, const struct conf_field *,
                              struct conf_rec *);

static const struct conf_kind_spec conf_kinds[] = {
    {.word = "web",
     .kind = CONF_WEB,
     .fields = 5,
     .usage = "web<TAB>port<TAB>health_path<TAB>0|1<TAB>command",
     .parse = conf_parse_web},
    {.word = "worker",
     .kind = CONF_WORKER,
     .fields = 4,
     .usage = "worker<TAB>name<TAB>0|1<TAB>command",
     .parse = conf_parse_worker},
    {.word = "build",
     .kind = CONF_BUILD,
     .fields = 3,
     .usage = "build<TAB>timeout_seconds<TAB>command",
     .parse = conf_parse_build},
    {.word = "install",
     .kind = CONF_INSTALL,
     .fields = 4,
     .usage = "install<TAB>timeout_seconds<TAB>key<TAB>command",
     .parse = conf_parse_install},
};

static int __attribute__((format(printf, 2, 3)))
conf_fail(struct conf_ctx *x, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(x->err, x->errlen, "run.conf line %u: ", x->line);
	if (n < 0 || (size_t)n >= x->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool
conf_field_is(const struct conf_field *f, const char *word)
{
	return f->len == strlen(word) && memcmp(f->p, word, f->len) == 0;
}

/* Decimal in [min, max], no sign, no leading zero. */
static bool
conf_number(const struct conf_field *f, unsigned min, unsigned max,
            unsigned *out)
{
	unsigned long v = 0;
	size_t i;

	if (f->len == 0 || f->len > 9 || f->p[0] == '0')
		return false;
	for (i = 0; i < f->len; i++) {
		if (f->p[i] < '0' || f->p[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(f->p[i] - '0');
	}
	if (v < min || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

static int
conf_flag(struct conf_ctx *x, const struct conf_field *f, bool *out)
{
	if (conf_field_is(f, "0") || conf_field_is(f, "1")) {
		*out = f->p[0] == '1';
		return 0;
	}
	return conf_fail(x, "restart_after_task must be 0 or 1, not \"%.*s\"",
	                 f->len > 40 ? 40 : (int)f->len, f->p);
}

static int
conf_command(struct conf_ctx *x, const struct conf_field *f, struct conf_rec *r)
{
	if (f->len == 0)
		return conf_fail(x, "empty command");
	r->cmd = strndup(f->p, f->len);
	if (r->cmd == NULL)
		return conf_fail(x, "out of memory");
	return 0;
}

/* Printable ASCII without spaces: it goes into an HTTP request line. */
static int
conf_health_path(struct conf_ctx *x, const struct conf_field *f,
                 struct conf_rec *r)
{
	size_t i;

	if (f->len == 0 || f->p[0] != '/')
		return conf_fail(x, "health path must start with /");
	if (f->len > CONF_PATH_MAX)
		return conf_fail(x, "health path longer than %d bytes",
		                 CONF_PATH_MAX);
	for (i = 0; i < f->len; i++)
		if (f->p[i] <= ' ' || f->p[i] >= 0x7f)
			return conf_fail(x, "health path must be printable "
			                    "ASCII without spaces");
	r->path = strndup(f->p, f->len);
	if (r->path == NULL)
		return conf_fail(x, "out of memory");
	return 0;
}

static int
conf_parse_web(struct conf_ctx *x, const struct conf_field *f,
               struct conf_rec *r)
{
	snprintf(r->name, sizeof(r->name), "web");
	if (!conf_number(&f[1], 1, 65535, &r->port))
		return conf_fail(x, "port must be 1-65535, not \"%.*s\"",
		                 f[1].len > 40 ? 40 : (int)f[1].len, f[1].p);
	if (conf_health_path(x, &f[2], r) == -1 ||
	    conf_flag(x, &f[3], &r->restart_after_task) == -1)
		return -1;
	return conf_command(x, &f[4], r);
}

/* [a-z0-9][a-z0-9_-]{0,31}, and not "web" */
static bool
conf_name_ok(const struct conf_field *f)
{
	size_t i;
	char ch;

	if (f->len == 0 || f->len > CONF_NAME_MAX || f->p[0] == '_' ||
	    f->p[0] == '-' || conf_field_is(f, "web"))
		return false;
	for (i = 0; i < f->len; i++) {
		ch = f->p[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

static int
conf_parse_worker(struct conf_ctx *x, const struct conf_field *f,
                  struct conf_rec *r)
{
	if (!conf_name_ok(&f[1]))
		return conf_fail(x,
		                 "bad worker name \"%.*s\" (want "
		                 "[a-z0-9][a-z0-9_-]{0,31}, not web)",
		                 f[1].len > 40 ? 40 : (int)f[1].len, f[1].p);
	memcpy(r->name, f[1].p, f[1].len);
	r->name[f[1].len] = '\0';
	if (conf_flag(x, &f[2], &r->restart_after_task) == -1)
		return -1;
	return conf_command(x, &f[3], r);
}

static int
conf_parse_build(struct conf_ctx *x, const struct conf_field *f,
                 struct conf_rec *r)
{
	snprintf(r->name, sizeof(r->name), "build");
	if (!conf_number(&f[1], 1, CONF_BUILD_MAX_S, &r->timeout_s))
		return conf_fail(x,
		                 "build timeout must be 1-%d seconds, not "
		                 "\"%.*s\"",
		                 CONF_BUILD_MAX_S,
		                 f[1].len > 40 ? 40 : (int)f[1].len, f[1].p);
	return conf_command(x, &f[2], r);
}

static int
conf_parse_install(struct conf_ctx *x, const struct conf_field *f,
                   struct conf_rec *r)
{
	size_t i;

	snprintf(r->name, sizeof(r->name), "install");
	if (!conf_number(&f[1], 1, CONF_INSTALL_MAX_S, &r->timeout_s))
		return conf_fail(x,
		                 "install timeout must be 1-%d seconds, not "
		                 "\"%.*s\"",
		                 CONF_INSTALL_MAX_S,
		                 f[1].len > 40 ? 40 : (int)f[1].len, f[1].p);
	for (i = 0; i < f[2].len; i++)
		if (!((f[2].p[i] >= '0' && f[2].p[i] <= '9') ||
		      (f[2].p[i] >= 'a' && f[2].p[i] <= 'f')))
			break;
	if (f[2].len != CONF_KEY_LEN || i != f[2].len)
		return conf_fail(x,
		                 "install key must be %d lower-case hex "
		                 "digits",
		                 CONF_KEY_LEN);
	memcpy(r->key, f[2].p, CONF_KEY_LEN);
	r->key[CONF_KEY_LEN] = '\0';
	return conf_command(x, &f[3], r);
}

/*
 * Splits a line into n fields on TABs, the last taking the rest.
 * Returns false when there are fewer than n.
 */
static bool
conf_split(const char *p, size_t len, struct conf_field *f, size_t n)
{
	const char *end = p + len, *tab;
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		tab = memchr(p, '\t', (size_t)(end - p));
		if (tab == NULL)
			return false;
		f[i].p = p;
		f[i].len = (size_t)(tab - p);
		p = tab + 1;
	}
	f[i].p = p;
	f[i].len = (size_t)(end - p);
	return true;
}

static const struct conf_kind_spec *
conf_kind_find(const char *p, size_t len)
{
	const char *tab = memchr(p, '\t', len);
	struct conf_field word = {p, tab ? (size_t)(tab - p) : len};
	size_t i;

	for (i = 0; i < sizeof(conf_kinds) / sizeof(conf_kinds[0]); i++)
		if (conf_field_is(&word, conf_kinds[i].word))
			return &conf_kinds[i];
	return NULL;
}

static int
conf_check_unique(struct conf_ctx *x, const struct conf_rec *r)
{
	size_t i;

	for (i = 0; i < x->c->n; i++) {
		if (x->c->recs[i].kind != r->kind ||
		    strcmp(x->c->recs[i].name, r->name) != 0)
			continue;
		if (r->kind == CONF_WORKER)
			return conf_fail(x, "duplicate worker name \"%s\"",
			                 r->name);
		return conf_fail(x, "more than one %s record",
		                 conf_kind_name(r->kind));
	}
	return 0;
}

static int
conf_check_chars(struct conf_ctx *x, const char *p, size_t len)
{
	size_t i;
	unsigned char ch;

	if (len > CONF_LINE_MAX)
		return conf_fail(x, "longer than %d bytes", CONF_LINE_MAX);
	for (i = 0; i < len; i++) {
		ch = (unsigned char)p[i];
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return conf_fail(x, "control character 0x%02x", ch);
	}
	return 0;
}

static int
conf_parse_line(struct conf_ctx *x, const char *p, size_t len)
{
	const struct conf_kind_spec *k;
	struct conf_field f[CONF_MAX_FIELDS];
	struct conf_rec r = {0};

	if (len == 0 || p[0] == '#')
		return 0;
	if (conf_check_chars(x, p, len) == -1)
		return -1;
	k = conf_kind_find(p, len);
	if (k == NULL)
		return conf_fail(x, "unknown record type (want web, worker, "
		                    "build or install)");
	if (!conf_split(p, len, f, k->fields))
		return conf_fail(x, "want %s", k->usage);
	if (x->c->n == CONF_MAX_RECORDS)
		return conf_fail(x, "more than %d records", CONF_MAX_RECORDS);
	r.kind = k->kind;
	if (k->parse(x, f, &r) == -1 || conf_check_unique(x, &r) == -1) {
		conf_rec_free(&r);
		return -1;
	}
	x->c->recs[x->c->n++] = r;
	return 0;
}

int
conf_parse(const char *buf, size_t len, struct conf *c, char *err,
           size_t errlen)
{
	struct conf_ctx x = {.c = c, .err = err, .errlen = errlen};
	const char *p = buf, *end = buf + len, *nl;

	memset(c, 0, sizeof(*c));
	if (len > CONF_FILE_MAX) {
		snprintf(err, errlen, "run.conf: larger than %d bytes",
		         CONF_FILE_MAX);
		return -1;
	}
	while (p < end) {
		x.line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (conf_parse_line(&x, p, (size_t)(nl - p)) == -1) {
			conf_free(c);
			return -1;
		}
		p = nl + 1;
	}
	return 0;
}

void
conf_rec_free(struct conf_rec *r)
{
	free(r->path);
	free(r->cmd);
	r->path = NULL;
	r->cmd = NULL;
}

void
conf_free(struct conf *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		conf_rec_free(&c->recs[i]);
	c->n = 0;
}

int
conf_rec_copy(struct conf_rec *dst, const struct conf_rec *src)
{
	*dst = *src;
	dst->path = NULL;
	dst->cmd = strdup(src->cmd);
	if (src->path != NULL)
		dst->path = strdup(src->path);
	if (dst->cmd == NULL || (src->path != NULL && dst->path == NULL)) {
		conf_rec_free(dst);
		return -1;
	}
	return 0;
}

static bool
conf_str_equal(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

bool
conf_rec_equal(const struct conf_rec *a, const struct conf_rec *b)
{
	return a->kind == b->kind && strcmp(a->name, b->name) == 0 &&
	       a->port == b->port && conf_str_equal(a->path, b->path) &&
	       a->restart_after_task == b->restart_after_task &&
	       a->timeout_s == b->timeout_s && strcmp(a->key, b->key) == 0 &&
	       conf_str_equal(a->cmd, b->cmd);
}

const char *
conf_kind_name(enum conf_kind kind)
{
	switch (kind) {
	case CONF_WEB:
		return "web";
	case CONF_WORKER:
		return "worker";
	case CONF_BUILD:
		return "build";
	case CONF_INSTALL:
		return "install";
	}
	return "?";
}
