/*
 * libFuzzer target: a backup's manifest.json as restore reads it, and the
 * lines of a tree's list (ops/backup_manifest.c), at most
 * BACKUP_MANIFEST_BYTES.  The directory is input like any other: a parse
 * either fails with a message or gives a manifest that names only files
 * a backup holds (never a path) with well-formed checksums, and that
 * dumps and parses back to the same files.  Each line of the input is
 * also parsed as a list's line: one that parses has a clean relative
 * path (no "..", ".", empty component or leading '/'), a mode without
 * set-id bits, and formats and parses back to the same entry.  Nothing
 * may crash, leak or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backup.h"
#include "ops/backup_tree.h"
#include "lib/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_manifest(const uint8_t *data, size_t size)
{
	static struct backup_manifest m, again;
	char err[256];
	struct buf b;

	if (backup_manifest_parse((const char *)data, size, &m, err,
	                          sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort(); /* a refusal always says why */
		return;
	}
	if (m.nfiles == 0 || m.nfiles > BACKUP_FILES)
		abort();
	for (size_t i = 0; i < m.nfiles; i++)
		if (!backup_file_known(m.files[i].name) ||
		    strchr(m.files[i].name, '/') ||
		    strlen(m.files[i].sha256) != VAULT_HASH_HEX)
			abort();
	if (m.format == BACKUP_FORMAT &&
	    m.workspaces != backup_manifest_lists(&m, BACKUP_WS_LIST))
		abort();
	buf_init(&b, BACKUP_MANIFEST_BYTES);
	if (backup_manifest_dump(&m, &b) < 0 ||
	    backup_manifest_parse(b.data, b.len, &again, err, sizeof(err)) <
	        0 ||
	    again.nfiles != m.nfiles || again.trash != m.trash)
		abort();
	for (size_t i = 0; i < m.nfiles; i++)
		if (strcmp(again.files[i].name, m.files[i].name) != 0 ||
		    strcmp(again.files[i].sha256, m.files[i].sha256) != 0)
			abort();
	buf_release(&b);
}

static bool
clean(const char *p)
{
	return p[0] != '\0' && p[0] != '/' && !strstr(p, "//") &&
	       strcmp(p, ".") != 0 && strncmp(p, "./", 2) != 0 &&
	       strcmp(p, "..") != 0 && strncmp(p, "../", 3) != 0 &&
	       !strstr(p, "/../") && !strstr(p, "/./") &&
	       p[strlen(p) - 1] != '/';
}

static void
check_line(const char *line, size_t len)
{
	static struct backup_entry e, again;
	char err[256];
	struct buf b;

	if (backup_entry_parse(line, len, &e, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort();
		return;
	}
	if (!strchr("dfl", e.type) || e.mode > 0777 || !clean(e.path) ||
	    (e.type == 'l' && (int64_t)strlen(e.target) != e.size))
		abort();
	buf_init(&b, BACKUP_LINE_MAX + 1);
	if (backup_entry_format(&e, &b) < 0 || b.len == 0 ||
	    b.data[b.len - 1] != '\n' ||
	    backup_entry_parse(b.data, b.len - 1, &again, err, sizeof(err)) <
	        0 ||
	    again.type != e.type || again.mode != e.mode ||
	    again.size != e.size || again.mtime != e.mtime ||
	    strcmp(again.path, e.path) != 0 ||
	    strcmp(again.target, e.target) != 0 ||
	    strcmp(again.sha256, e.sha256) != 0 ||
	    backup_path_cmp(e.path, again.path) != 0)
		abort();
	buf_release(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	if (size > BACKUP_MANIFEST_BYTES)
		return 0;
	check_manifest(data, size);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		check_line(p, n);
		p += n + 1;
	}
	return 0;
}
