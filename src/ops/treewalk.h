/*
 * treewalk: what the backup's two walks of a workspace tree share
 * (backup_tree.c writes one, restore_tree.c reads one back): a
 * directory's names read through its descriptor and sorted, the path
 * being walked, within BACKUP_PATH_MAX, and the names of entry types.
 */
#ifndef OPS_TREEWALK_H
#define OPS_TREEWALK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#define BACKUP_PATH_MAX 4096 /* bytes of a path in a tree, or a target */
/* Entries of one directory a walk sorts: past it the copy fails. */
#define BACKUP_DIR_ENTRIES (1 << 20)

/* A directory's entries but . and .., sorted by strcmp; the caller frees. */
struct treewalk_names {
	char **v;
	size_t n;
};

/* The path being walked: components joined by '/'. */
struct treewalk_path {
	char s[BACKUP_PATH_MAX + 1];
	size_t len;
};

/* Reads dirfd's names (at most BACKUP_DIR_ENTRIES); 0, or -1 with errno. */
int treewalk_names_read(int dirfd, struct treewalk_names *s);
void treewalk_names_free(struct treewalk_names *s);

/* Appends name; the old length, or -1 (unchanged) when too long. */
ssize_t treewalk_path_push(struct treewalk_path *p, const char *name);
void treewalk_path_pop(struct treewalk_path *p, ssize_t old);
/* path fit for a message: bytes a terminal would act on as '?'. */
const char *treewalk_shown(const char *path, char *out, size_t len);

/*
 * Both walks' error exit: the message into the walk's c->err, then its
 * cleanup (a "fail:" label of the function).
 */
#define TREEWALK_FAIL(...)                                                     \
	do {                                                                   \
		snprintf(c->err, c->errlen, __VA_ARGS__);                      \
		goto fail;                                                     \
	} while (0)

/* The buffer a walk copies a file's bytes through. */
#define TREEWALK_CHUNK 65536

enum treewalk_copied {
	TREEWALK_COPIED, /* to the end, *total bytes */
	TREEWALK_OVER,   /* more than limit bytes: stopped there */
	TREEWALK_READ,   /* reading failed (errno) */
	TREEWALK_WRITE,  /* writing failed (errno) */
};

/*
 * Copies in to out through chunk (TREEWALK_CHUNK bytes), at most limit
 * bytes (< 0: no limit), and writes the SHA-256 of what was copied, in
 * hex, to hex (VAULT_HASH_HEX + 1 bytes; "" when it cannot hash).
 */
enum treewalk_copied treewalk_copy(int in, int out, char *chunk, int64_t limit,
                                   int64_t *total, char *hex);

/* 'd', 'f', 'l', or '?' for anything else; and its name for messages. */
char treewalk_type(mode_t m);
const char *treewalk_type_name(mode_t m);

#endif
