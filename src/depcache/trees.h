/*
 * trees: which directories of a workspace are its dependency trees, and
 * the list of them an entry of the cache keeps (depcache.c).  Internal
 * to src/depcache/.  Every directory is opened relative to its parent
 * with O_NOFOLLOW and on the base's filesystem: the workspace is
 * hostile.
 */
#ifndef DEPCACHE_TREES_H
#define DEPCACHE_TREES_H

#include <stdbool.h>
#include <stdint.h>

#define TREES_SCAN_DEPTH 4       /* workspace/app/…/node_modules */
#define TREES_SCAN_DIRS  20000   /* directories looked into */
#define TREES_MAX        64      /* dependency trees per entry */
#define TREES_REL_MAX    512     /* bytes of a tree's relative path */
#define TREES_FILE       "trees" /* the list, in an entry */
#define TREES_FILE_MAX   (64 << 10)

struct depcache_trees {
	char (*rel)[TREES_REL_MAX]; /* "workspace/app/node_modules", … */
	int n;
};

/*
 * The trees of the workspace open at wsfd: each node_modules under
 * workspace/app/ at most TREES_SCAN_DEPTH directories down and not inside
 * another (a monorepo's too), .local/lib/python3* /site-packages and
 * .local/bin. At most TREES_MAX (more are left out, logged).  0 or -1.
 */
int trees_find(int wsfd, struct depcache_trees *t);
/* The list of an entry open at entryfd (its TREES_FILE).  0 or -1. */
int trees_read(int entryfd, struct depcache_trees *t);
/* The own bytes an entry's list records; 0 when unreadable. */
int64_t trees_own_bytes(int rootfd, const char *name);
void trees_release(struct depcache_trees *t);
/*
 * Opens the parent directory of rel beneath base, component by
 * component (no symlink, no other filesystem); with make, missing ones
 * are made (0755, given uid:gid when uid >= 0).  The fd, or -1.
 */
int trees_open_parent(int base, const char *rel, bool make, int uid, int gid);

#endif
