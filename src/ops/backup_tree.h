/*
 * backup_tree: a tree of workspaces (<data>/workspaces, the trash's kept
 * workspaces) copied into a backup with its list, and copied back out
 * of a backup, each entry checked against the list as it is copied.
 * Both walk through directory descriptors and follow no link; they are
 * called by backup.c and restore.c only.  The list's lines are parsed
 * and written by backup_manifest.c, which the fuzz target links alone.
 */
#ifndef OPS_BACKUP_TREE_H
#define OPS_BACKUP_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/buf.h"
#include "ops/treewalk.h"

#include "vault/vault.h"

/*
 * A line of a tree's list: "T MODE SIZE MTIME DATA PATH\n", T one of
 * d (directory), f (file, DATA its SHA-256), l (symbolic link, DATA its
 * target); DATA is "-" for a directory.  PATH (relative to the tree, '/'
 * between components) and a link's target are escaped: every byte under
 * 0x21 or over 0x7e, and '%', as %XX.  Lines come in the order of a walk
 * that visits each directory's entries sorted by name (backup_path_cmp).
 */
#define BACKUP_TREE_DEPTH 128 /* components of a path in a tree */
#define BACKUP_LINE_MAX   (6 * BACKUP_PATH_MAX + 256)

struct backup_entry {
	char type;     /* 'd', 'f' or 'l' */
	unsigned mode; /* permission bits only: never set-id or sticky */
	int64_t size;  /* f: bytes; l: bytes of the target; d: 0 */
	int64_t mtime; /* seconds */
	char sha256[VAULT_HASH_HEX + 1];  /* f only */
	char target[BACKUP_PATH_MAX + 1]; /* l only */
	char path[BACKUP_PATH_MAX + 1];
};

/* Parses a line (without its newline); 0 or -1 with err. */
int backup_entry_parse(const char *line, size_t len, struct backup_entry *e,
                       char *err, size_t errlen);
/* Appends e's line, newline included; -1 when out of room. */
int backup_entry_format(const struct backup_entry *e, struct buf *out);
/*
 * The order of a list: that of a walk visiting each directory's entries
 * sorted by strcmp, a directory before its entries ('/' sorts first).
 */
int backup_path_cmp(const char *a, const char *b);

struct backup_tree_count {
	int64_t top;      /* the tree's directories: workspaces */
	int64_t entries;  /* lines of the list */
	int64_t bytes;    /* bytes of the files */
	int64_t skipped;  /* sockets, FIFOs, devices, other filesystems */
	int64_t setid;    /* set-id and sticky bits dropped */
	int64_t too_deep; /* past BACKUP_TREE_DEPTH or BACKUP_PATH_MAX */
	int64_t too_big;  /* files over the size given to the backup */
};

/* Called around the copy of each workspace (backup pauses its sandbox). */
struct backup_tree_hooks {
	void (*before)(const char *name, void *arg);
	void (*after)(const char *name, void *arg);
	void *arg;
};

/*
 * Copies each directory of srcfd (a workspace; dot names and anything
 * else are left out) into the new directory bkfd/name, and lists every
 * entry copied in the new file bkfd/list.  Sockets, FIFOs and devices
 * are left out, set-id bits dropped, hard links copied as files, links
 * copied as links (never followed), files over max_file bytes (0: no
 * limit) and entries past the depth and path limits left out; n counts
 * each.  0, or -1 with err.
 */
int backup_tree_write(int srcfd, int bkfd, const char *name, const char *list,
                      int64_t max_file, const struct backup_tree_hooks *h,
                      struct backup_tree_count *n, char *err, size_t errlen);

/* Who owns a restored tree's entries (a list names no owner). */
enum backup_owner {
	BACKUP_OWN_SANDBOX, /* the sandbox user: workspaces */
	/* The caller (root), but for a server release's built app,
	 * <app id>/<release id>/app and below: the sandbox user's, as the
	 * build made it, since its production container runs as that user
	 * and must read what a mode of 0600 or 0700 keeps to its owner. */
	BACKUP_OWN_RELEASES,
};

/*
 * Copies bkfd/name into the new directory dstfd/dst (root_mode, owned by
 * the caller), every entry under it owned as own says.  With a
 * list (bkfd/list, whose SHA-256 is sha256), each entry must be the
 * next line of the list, of its type, mode, size, checksum or target:
 * any difference, an entry the list lacks or a line the tree lacks
 * fails the copy, naming the entry.  Without one (a format-1 backup)
 * sockets and FIFOs are left out and set-id bits dropped.  Either way a
 * device fails it, every entry of the tree's top must be a directory,
 * links are made as links, never followed, and a hard link becomes a
 * file of its own.  0, or -1 with err; the caller removes dst then.
 */
int backup_tree_restore(int bkfd, const char *name, const char *list,
                        const char *sha256, int dstfd, const char *dst,
                        mode_t root_mode, enum backup_owner own,
                        struct backup_tree_count *n, char *err, size_t errlen);

#endif
