/*
 * The manifest of a backup and the lines of its trees' lists (backup.h):
 * written by backup_run, read by restore_run before anything else.  A
 * backup directory is input: the parser takes only the fields it knows,
 * each within its size, file names only from a fixed list (never a
 * path), SHA-256 only as 64 lower-case hex digits, and refuses a
 * manifest that lacks what the backup must hold.  A list's line gives a
 * path only as clean components ('.', '..', empty or NUL ones refused)
 * and a mode with no set-id or sticky bit: the writer never lists one,
 * so a line that has one was not written by a backup.  Kept apart from
 * backup.c so the fuzz target links it alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backup.h"
#include "ops/backup_tree.h"
#include "lib/buf.h"
#include "lib/jv.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		goto fail;                                                     \
	} while (0)

static const char *const names[] = {"sandboxd.db",     VAULT_KEY_FILE,
                                    VAULT_NEXT_FILE,   BACKUP_WS_LIST,
                                    BACKUP_TRASH_LIST, BACKUP_REL_LIST};

bool
backup_file_known(const char *name)
{
	for (size_t i = 0; i < BACKUP_FILES; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* --- the manifest -------------------------------------------------------- */

int
backup_manifest_dump(const struct backup_manifest *m, struct buf *out)
{
	struct jv *o = jv_obj(), *c = jv_obj(), *f = jv_arr(), *w = jv_obj();
	int rc;

	jv_set_int(o, "format", m->format);
	jv_set_str(o, "version", m->version);
	jv_set_int(o, "schema_version", m->schema_version);
	jv_set_str(o, "created_at", m->created_at);
	jv_set_str(o, "data_dir", m->data_dir);
	jv_set_int(c, "apps", m->counts.apps);
	jv_set_int(c, "sandboxes", m->counts.sandboxes);
	jv_set_int(c, "tasks", m->counts.tasks);
	jv_set_int(c, "secrets", m->counts.secrets);
	jv_set(o, "counts", c);
	jv_set_str(o, "secrets_key", m->key_external ? "external" : "file");
	for (size_t i = 0; i < m->nfiles; i++) {
		struct jv *e = jv_obj();
		jv_set_str(e, "name", m->files[i].name);
		jv_set_str(e, "sha256", m->files[i].sha256);
		jv_set_int(e, "bytes", m->files[i].bytes);
		jv_push(f, e);
	}
	jv_set(o, "files", f);
	jv_set_bool(w, "included", m->workspaces);
	jv_set_bool(w, "trash", m->trash);
	jv_set_int(w, "count", m->workspaces_count);
	jv_set_int(w, "bytes", m->workspaces_bytes);
	jv_set(o, "workspaces", w);
	if (m->releases) {
		struct jv *rl = jv_obj();
		jv_set_bool(rl, "included", true);
		jv_set_int(rl, "apps", m->releases_apps);
		jv_set_int(rl, "bytes", m->releases_bytes);
		jv_set(o, "releases", rl);
	}
	rc = jv_dump(o, out);
	jv_free(o);
	return rc < 0 || buf_append(out, "\n", 1) < 0 ? -1 : 0;
}

static int
get_str(const struct jv *o, const char *key, char *out, size_t len, char *err,
        size_t errlen)
{
	const char *s = jv_str(jv_get(o, key));

	if (s == NULL || strlen(s) >= len) {
		snprintf(err, errlen, "manifest: %s is missing or too long",
		         key);
		return -1;
	}
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static bool
is_hex64(const char *s)
{
	if (strlen(s) != VAULT_HASH_HEX)
		return false;
	for (; *s; s++)
		if (!strchr("0123456789abcdef", *s))
			return false;
	return true;
}

static int
parse_files(const struct jv *files, struct backup_manifest *m, char *err,
            size_t errlen)
{
	if (files == NULL || jv_type(files) != JV_ARRAY ||
	    jv_len(files) > BACKUP_FILES) {
		snprintf(err, errlen,
		         "manifest: files must be an array of at "
		         "most %d entries",
		         BACKUP_FILES);
		return -1;
	}
	for (size_t i = 0; i < jv_len(files); i++) {
		struct backup_file *f = &m->files[i];
		struct jv *e = jv_at(files, i);

		if (get_str(e, "name", f->name, sizeof(f->name), err, errlen) <
		        0 ||
		    get_str(e, "sha256", f->sha256, sizeof(f->sha256), err,
		            errlen) < 0)
			return -1;
		f->bytes = jv_int(jv_get(e, "bytes"));
		if (!backup_file_known(f->name) || !is_hex64(f->sha256) ||
		    f->bytes < 0) {
			snprintf(err, errlen,
			         "manifest: file entry %zu (%.32s) is not one "
			         "a backup holds",
			         i, f->name);
			return -1;
		}
		for (size_t k = 0; k < i; k++)
			if (strcmp(m->files[k].name, f->name) == 0) {
				snprintf(err, errlen,
				         "manifest: %s is listed twice",
				         f->name);
				return -1;
			}
		m->nfiles++;
	}
	return 0;
}

bool
backup_manifest_lists(const struct backup_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].name, name) == 0)
			return true;
	return false;
}

/* What the files must be for what the manifest says the backup holds. */
static int
check_files(const struct backup_manifest *m, char *err, size_t errlen)
{
	bool lists = m->format != BACKUP_FORMAT_NOLIST;

	if (!backup_manifest_lists(m, "sandboxd.db"))
		FAIL("manifest: lists no sandboxd.db");
	if (!m->key_external && !backup_manifest_lists(m, VAULT_KEY_FILE))
		FAIL("manifest: secrets_key is file but it lists no "
		     "secret.key");
	if (m->trash && !m->workspaces)
		FAIL("manifest: the trash is included without the "
		     "workspaces");
	if (lists && m->workspaces != backup_manifest_lists(m, BACKUP_WS_LIST))
		FAIL("manifest: " BACKUP_WS_LIST " must be listed exactly "
		     "when the workspaces are included");
	if (lists && m->trash != backup_manifest_lists(m, BACKUP_TRASH_LIST))
		FAIL("manifest: " BACKUP_TRASH_LIST " must be listed exactly "
		     "when the trash is included");
	if (lists && m->releases != backup_manifest_lists(m, BACKUP_REL_LIST))
		FAIL("manifest: " BACKUP_REL_LIST " must be listed exactly "
		     "when the releases are included");
	if (!lists &&
	    (backup_manifest_lists(m, BACKUP_WS_LIST) ||
	     backup_manifest_lists(m, BACKUP_TRASH_LIST) ||
	     backup_manifest_lists(m, BACKUP_REL_LIST) || m->releases))
		FAIL("manifest: format %d has no lists", BACKUP_FORMAT_NOLIST);
	return 0;
fail:
	return -1;
}

int
backup_manifest_parse(const char *text, size_t len, struct backup_manifest *m,
                      char *err, size_t errlen)
{
	struct jv *o = jv_parse(text, len, 8, err, errlen), *c, *w;
	char key[16];
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (o == NULL)
		return -1;
	if (jv_type(o) != JV_OBJECT)
		FAIL("manifest: not a JSON object");
	m->format = (int)jv_int(jv_get(o, "format"));
	if (m->format != BACKUP_FORMAT && m->format != BACKUP_FORMAT_NOLIST)
		FAIL("manifest: format %d is not %d or %d (made by a newer "
		     "version?)",
		     m->format, BACKUP_FORMAT_NOLIST, BACKUP_FORMAT);
	if (get_str(o, "version", m->version, sizeof(m->version), err, errlen) <
	        0 ||
	    get_str(o, "created_at", m->created_at, sizeof(m->created_at), err,
	            errlen) < 0 ||
	    get_str(o, "data_dir", m->data_dir, sizeof(m->data_dir), err,
	            errlen) < 0 ||
	    get_str(o, "secrets_key", key, sizeof(key), err, errlen) < 0)
		goto fail;
	m->schema_version = (int)jv_int(jv_get(o, "schema_version"));
	if (m->schema_version <= 0)
		FAIL("manifest: schema_version is missing");
	if (strcmp(key, "file") != 0 && strcmp(key, "external") != 0)
		FAIL("manifest: secrets_key is \"%s\", not file or external",
		     key);
	m->key_external = strcmp(key, "external") == 0;
	c = jv_get(o, "counts");
	m->counts.apps = jv_int(jv_get(c, "apps"));
	m->counts.sandboxes = jv_int(jv_get(c, "sandboxes"));
	m->counts.tasks = jv_int(jv_get(c, "tasks"));
	m->counts.secrets = jv_int(jv_get(c, "secrets"));
	w = jv_get(o, "workspaces");
	m->workspaces = jv_is_true(jv_get(w, "included"));
	m->trash = jv_is_true(jv_get(w, "trash"));
	m->workspaces_count = jv_int(jv_get(w, "count"));
	m->workspaces_bytes = jv_int(jv_get(w, "bytes"));
	w = jv_get(o, "releases");
	m->releases = jv_is_true(jv_get(w, "included"));
	m->releases_apps = jv_int(jv_get(w, "apps"));
	m->releases_bytes = jv_int(jv_get(w, "bytes"));
	if (parse_files(jv_get(o, "files"), m, err, errlen) < 0 ||
	    check_files(m, err, errlen) < 0)
		goto fail;
	rc = 0;
fail:
	jv_free(o);
	return rc;
}

/* --- the lines of a tree's list ------------------------------------------ */

static bool
plain(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '%';
}

static int
escape(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;
	int rc = 0;

	for (; *p && rc == 0; p++) {
		char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
		rc = plain(*p) ? buf_append(out, (const char *)p, 1)
		               : buf_append(out, e, 3);
	}
	return rc;
}

static int
unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The escaped field [s, s+n) into out (outlen with the NUL); -1 if bad. */
static int
unescape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int hi = i + 2 < n ? unhex(s[i + 1]) : -1,
			    lo = i + 2 < n ? unhex(s[i + 2]) : -1;
			if (hi < 0 || lo < 0 || (c = hi * 16 + lo) == 0 ||
			    plain((unsigned char)c))
				return -1; /* one spelling per byte, no NUL */
			i += 2;
		} else if (!plain((unsigned char)c))
			return -1;
		if (k + 1 >= outlen)
			return -1;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return k > 0 ? 0 : -1;
}

/* Relative, clean, at most BACKUP_TREE_DEPTH components of NAME_MAX. */
static bool
clean_path(const char *p)
{
	int depth = 0;

	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 0 || n > 255 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.') ||
		    ++depth > BACKUP_TREE_DEPTH)
			return false;
		p += n;
		if (*p == '/' && *++p == '\0')
			return false; /* a trailing slash */
	}
	return depth > 0;
}

/* A decimal field into *v (>= min); -1 if it is not one. */
static int
number(const char *s, size_t n, int base, int64_t min, int64_t *v)
{
	char tmp[24], *end;
	long long x;

	if (n == 0 || n >= sizeof(tmp) || (s[0] == '-' && min >= 0))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	x = strtoll(tmp, &end, base);
	if (errno || *end || x < min)
		return -1;
	*v = x;
	return 0;
}

/* The DATA field of e's type; -1 if it is not one. */
static int
entry_data(struct backup_entry *e, const char *s, size_t n)
{
	if (e->type == 'f') {
		if (n != VAULT_HASH_HEX)
			return -1;
		memcpy(e->sha256, s, n);
		e->sha256[n] = '\0';
		return is_hex64(e->sha256) ? 0 : -1;
	}
	if (e->type == 'l')
		return unescape(s, n, e->target, sizeof(e->target)) < 0 ||
		               (int64_t)strlen(e->target) != e->size
		           ? -1
		           : 0;
	return n == 1 && s[0] == '-' && e->size == 0 ? 0 : -1;
}

int
backup_entry_parse(const char *line, size_t len, struct backup_entry *e,
                   char *err, size_t errlen)
{
	const char *f[6];
	size_t n[6], at = 0;
	int64_t mode = 0;

	memset(e, 0, sizeof(*e));
	for (int i = 0; i < 6; i++) {
		const char *sp =
		    i < 5 ? memchr(line + at, ' ', len - at) : NULL;
		f[i] = line + at;
		n[i] = (sp ? (size_t)(sp - line) : len) - at;
		at += n[i] + 1;
		if (n[i] == 0 || (i < 5 && sp == NULL))
			FAIL("not six fields");
	}
	if (n[0] != 1 || !strchr("dfl", f[0][0]))
		FAIL("type %.*s is not d, f or l", (int)(n[0] > 8 ? 8 : n[0]),
		     f[0]);
	e->type = f[0][0];
	if (number(f[1], n[1], 8, 0, &mode) < 0 || mode > 07777)
		FAIL("bad mode");
	if (mode & ~0777)
		FAIL("mode %04o has a set-id or sticky bit, which a backup "
		     "never lists",
		     (unsigned)mode);
	e->mode = (unsigned)mode;
	if (number(f[2], n[2], 10, 0, &e->size) < 0 ||
	    number(f[3], n[3], 10, INT64_MIN, &e->mtime) < 0)
		FAIL("bad size or time");
	if (unescape(f[5], n[5], e->path, sizeof(e->path)) < 0 ||
	    !clean_path(e->path))
		FAIL("bad path");
	if (entry_data(e, f[4], n[4]) < 0)
		FAIL("%s: bad %s", e->path,
		     e->type == 'f'   ? "sha256"
		     : e->type == 'l' ? "link target"
		                      : "data (a directory has none)");
	return 0;
fail:
	return -1;
}

int
backup_entry_format(const struct backup_entry *e, struct buf *out)
{
	int rc = buf_appendf(out, "%c %04o %" PRId64 " %" PRId64 " ", e->type,
	                     e->mode & 0777u, e->size, e->mtime);

	if (rc == 0 && e->type == 'f')
		rc = buf_append(out, e->sha256, strlen(e->sha256));
	else if (rc == 0 && e->type == 'l')
		rc = escape(out, e->target);
	else if (rc == 0)
		rc = buf_append(out, "-", 1);
	if (rc == 0)
		rc = buf_append(out, " ", 1);
	if (rc == 0)
		rc = escape(out, e->path);
	return rc == 0 ? buf_append(out, "\n", 1) : -1;
}

/* A path's byte for ordering: '/' first, the end before anything. */
static int
rank(const char *p)
{
	return *p == '\0' ? -1 : *p == '/' ? 0 : (unsigned char)*p + 1;
}

int
backup_path_cmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return rank(a) - rank(b);
}
