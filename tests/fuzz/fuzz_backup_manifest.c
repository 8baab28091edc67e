/*
 * libFuzzer target: a backup's manifest.json as restore reads it
 * (ops/backup_manifest.c, jansson), at most BACKUP_MANIFEST_BYTES.  The
 * directory is input like any other: a parse either fails with a
 * message or gives a manifest that names only files a backup holds
 * (never a path) with well-formed checksums, and that dumps and parses
 * back to the same files.  Nothing may crash, leak or read out of
 * bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backup.h"
#include "lib/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct backup_manifest m, again;
	char err[256];
	struct buf b;

	if (size > BACKUP_MANIFEST_BYTES)
		return 0;
	if (backup_manifest_parse((const char *)data, size, &m, err,
	                          sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort(); /* a refusal always says why */
		return 0;
	}
	if (m.nfiles == 0 || m.nfiles > BACKUP_FILES)
		abort();
	for (size_t i = 0; i < m.nfiles; i++)
		if (!backup_file_known(m.files[i].name) ||
		    strchr(m.files[i].name, '/') ||
		    strlen(m.files[i].sha256) != VAULT_HASH_HEX)
			abort();
	buf_init(&b, BACKUP_MANIFEST_BYTES);
	if (backup_manifest_dump(&m, &b) < 0 ||
	    backup_manifest_parse(b.data, b.len, &again, err, sizeof(err)) <
	        0 ||
	    again.nfiles != m.nfiles)
		abort();
	for (size_t i = 0; i < m.nfiles; i++)
		if (strcmp(again.files[i].name, m.files[i].name) != 0 ||
		    strcmp(again.files[i].sha256, m.files[i].sha256) != 0)
			abort();
	buf_release(&b);
	return 0;
}
