/*
 * treewalk: what the backup's two walks of a workspace tree share
 * (backup_tree.c writes one, restore_tree.c reads one back): a
 * directory's names read through its descriptor and sorted, the path
 * being walked, within BACKUP_PATH_MAX, and the names of entry types.
 */
#ifndef OPS_TREEWALK_H
#define OPS_TREEWALK_H

#include <stddef.h>
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

/* 'd', 'f', 'l', or '?' for anything else; and its name for messages. */
char treewalk_type(mode_t m);
const char *treewalk_type_name(mode_t m);

#endif
