/*
 * copytree: the cheapest honest copy of a directory tree on one
 * filesystem, for snapshots (snapshot/snapshot.c) and the dependency
 * cache (depcache/depcache.c).  Per regular file: a
 * copy-on-write clone (FICLONE) where the filesystem has them; else a
 * hard link when the file is an entry of the dependency store (root's,
 * read-only, shared already); else copy_file_range.  Directories,
 * symlinks, modes, owners and mtimes are kept; sockets, FIFOs and
 * devices are skipped.  The source is walked as hostile (the sandbox
 * wrote it): no symlink followed, no mount crossed, at most
 * COPYTREE_MAX_DEPTH directories deep and COPYTREE_MAX_FILES entries.
 * Any thread; the caller serializes writers of the source if it needs a
 * consistent copy.
 */
#ifndef DISK_COPYTREE_H
#define DISK_COPYTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "ws/usage.h"

#define COPYTREE_MAX_DEPTH 64
#define COPYTREE_MAX_FILES 1000000

struct copytree_stats {
	int64_t files;      /* regular files and symlinks */
	int64_t size_bytes; /* their logical size */
	int64_t own_bytes;  /* of those, not hard links of the store */
	int64_t skipped;    /* special files left out */
	bool reflinked;     /* every copied file was a clone */
	bool copied;        /* at least one file was copied byte by byte */
};

/*
 * Copies the tree at src to dst (which must not exist; made 0700, then
 * given src's mode).  store: the dependency store's inodes (may be
 * empty).  0, or -1 with errno (ENOSPC and EDQUOT for a full disk,
 * EMLINK for too deep, EFBIG for too many entries); dst is left partly
 * written then: the caller removes it.
 */
int copytree(const char *src, const char *dst, const struct ws_inoset *store,
             struct copytree_stats *st);
/*
 * The same with choices, from sdir/name to ddir/name (relative to two
 * directory descriptors: no path above them is resolved, so neither
 * end can be led elsewhere by a symlink).  max_entries (0: the default
 * COPYTREE_MAX_FILES) and max_own_bytes (0: none) bound the walk
 * (EFBIG past either).  uid >= 0: what is copied (not a store entry's
 * link) is given uid:gid, and its mode loses setuid and setgid.
 */
struct copytree_opts {
	const struct ws_inoset *store;
	int64_t max_entries;
	int64_t max_own_bytes;
	int uid, gid;
};
int copytree_at(int sdir, const char *name, int ddir,
                const struct copytree_opts *o, struct copytree_stats *st);
/* Removes a tree (no symlink followed, no mount crossed); missing is 0. */
int copytree_remove(const char *path);

#endif
