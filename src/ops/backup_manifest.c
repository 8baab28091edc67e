/*
 * The manifest of a backup (backup.h): written by backup_run, read by
 * restore_run before anything else.  A backup directory is input: the
 * parser takes only the fields it knows, each within its size, file
 * names only from a fixed list (never a path), SHA-256 only as 64
 * lower-case hex digits, and refuses a manifest that lacks what the
 * backup must hold.  Kept apart from backup.c so the fuzz target links
 * it alone.
 */
#include <stdio.h>
#include <string.h>

#include "ops/backup.h"
#include "lib/buf.h"
#include "lib/jv.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		goto fail;                                                     \
	} while (0)

static const char *const names[] = {"sandboxd.db", VAULT_KEY_FILE,
                                    VAULT_NEXT_FILE};

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
	jv_set_int(w, "count", m->workspaces_count);
	jv_set_int(w, "bytes", m->workspaces_bytes);
	jv_set(o, "workspaces", w);
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
	if (m->format != BACKUP_FORMAT)
		FAIL("manifest: format %d is not %d (made by another version?)",
		     m->format, BACKUP_FORMAT);
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
	m->workspaces_count = jv_int(jv_get(w, "count"));
	m->workspaces_bytes = jv_int(jv_get(w, "bytes"));
	if (parse_files(jv_get(o, "files"), m, err, errlen) < 0)
		goto fail;
	for (size_t i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].name, "sandboxd.db") == 0)
			rc = 0;
	if (rc < 0)
		FAIL("manifest: lists no sandboxd.db");
	if (!m->key_external) {
		rc = -1;
		for (size_t i = 0; i < m->nfiles; i++)
			if (strcmp(m->files[i].name, VAULT_KEY_FILE) == 0)
				rc = 0;
		if (rc < 0)
			FAIL("manifest: secrets_key is file but it lists no "
			     "secret.key");
	}
fail:
	jv_free(o);
	return rc;
}
