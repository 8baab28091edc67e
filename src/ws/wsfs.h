/*
 * wsfs: file access inside a workspace, which code in the sandbox writes
 * and so must be treated as hostile.  Every path is resolved with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV) from a directory descriptor, so no symlink, "..", or
 * mount point can lead outside, whatever the sandbox did to the tree.
 * Functions return 0 or -1 with struct err filled for the API.
 */
#ifndef WS_WSFS_H
#define WS_WSFS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"

#define WSFS_MAX_PATH  1024 /* bytes of a relative path */
#define WSFS_MAX_DEPTH 64   /* components of a relative path */
#define WSFS_MAX_LIST  10000
#define WSFS_MAX_READ  (8u << 20)  /* GET …/files/content */
#define WSFS_MAX_WRITE (16u << 20) /* PUT …/files */
/* The time a whole read may take: a regular file on a local disk takes
 * milliseconds; anything slower is not a file we should be reading. */
#define WSFS_READ_MS 2000

/*
 * Checks and normalizes an app-relative path: no NUL, not absolute, no
 * "..", at most WSFS_MAX_PATH bytes and WSFS_MAX_DEPTH components; "./"
 * and "a/./b" and repeated slashes are cleaned.  "" (or ".") means the
 * app directory itself when allow_root.
 */
int wsfs_clean(const char *in, size_t len, char *out, size_t outlen,
               bool allow_root, struct err *e);

/* Opens <ws>/<sub> (a directory) safely; -1 with e when impossible. */
int wsfs_open_dir(const char *ws, const char *sub, struct err *e);
/* Opens rel (beneath dirfd) with flags; follows nothing. */
int wsfs_openat(int dirfd, const char *rel, int flags, int mode);
/* Whether rel exists beneath dirfd as anything but a link (followed by
 * nothing; opened O_PATH, so a FIFO cannot block). */
bool wsfs_exists(int dirfd, const char *rel);

/*
 * Opens rel beneath dirfd for reading: O_NONBLOCK (a FIFO or a device
 * planted by the sandbox cannot block the open), and only a regular file
 * (a FIFO, socket, device or directory is refused with 400).  The fd, or
 * -1 with e (404 when it does not exist).
 */
int wsfs_open_file(int dirfd, const char *rel, struct err *e);
/*
 * Reads a regular file beneath dirfd into out (wsfs_open_file), at most
 * max bytes (413 past it, also when it grows while read) and within
 * timeout_ms (502 sandbox_unavailable past it).  out is initialized
 * either way and holds the text only on 0; the caller releases it.
 */
int wsfs_read_within(int dirfd, const char *rel, size_t max, int timeout_ms,
                     struct buf *out, struct err *e);
/* wsfs_read_within with WSFS_READ_MS. */
int wsfs_read(int dirfd, const char *rel, size_t max, struct buf *out,
              struct err *e);
/*
 * Writes a regular file atomically (temp file + rename) beneath dirfd,
 * creating parent directories, all owned by uid:gid.  Refuses to replace
 * a directory or a symbolic link.
 */
int wsfs_write(int dirfd, const char *rel, const void *data, size_t len,
               int uid, int gid, struct err *e);
/*
 * A conditional write (the files API's If-Match and If-None-Match).  The
 * new content is written to a temporary file first; then, with mu held
 * until the rename is done, check(fd, arg, e) is called with the file
 * as it is at that moment (fd open for reading, -1 when there is none):
 * 0 goes on, -1 (e filled) refuses and nothing changes.  Before the
 * rename the file at rel must still be the one checked (same inode,
 * size and times; or still absent), else the check runs again (three
 * times at most, then 409).  With create_only the rename never replaces
 * a file (RENAME_NOREPLACE): one created meanwhile, even by the sandbox,
 * is given to check.  Every write through the API holds mu, so two of
 * them never interleave a check and a rename; a writer inside the
 * sandbox does not take it (see docs/api.md, "Files").
 */
struct wsfs_cond {
	pthread_mutex_t *mu;
	bool create_only;
	int (*check)(int fd, void *arg, struct err *e); /* NULL: none */
	void *arg;
};
int wsfs_write_cond(int dirfd, const char *rel, const void *data, size_t len,
                    int uid, int gid, const struct wsfs_cond *c, struct err *e);
/*
 * Reads the regular file open at fd from its start, handing each piece
 * to fn: at most max bytes (413 past it) within timeout_ms (502
 * sandbox_unavailable past it).
 */
int wsfs_fd_each(int fd, size_t max, int timeout_ms,
                 void (*fn)(const void *p, size_t n, void *arg), void *arg,
                 struct err *e);
/*
 * Renames from to to (both app-relative, checked by wsfs_clean), a
 * regular file or a directory; to's parents are created (owned by
 * uid:gid).  Never replaces anything (409 when to exists), never follows
 * a symbolic link (a symlink, FIFO, socket or device as from: 400), 404
 * when from does not exist, 400 for a directory moved into itself.
 */
int wsfs_move(int dirfd, const char *from, const char *to, int uid, int gid,
              struct err *e);
/* The same beneath dir (beneath rootfd, no link followed): 404 when dir
 * does not exist, 400 when it is not a directory. */
int wsfs_move_in(int rootfd, const char *dir, const char *from, const char *to,
                 int uid, int gid, struct err *e);
/* The same, readable by its owner only (0600): for files that carry a
 * credential, such as a task's env file with the sandbox's proxy token. */
int wsfs_write_secret(int dirfd, const char *rel, const void *data, size_t len,
                      int uid, int gid, struct err *e);
/* Creates the directory rel and its parents beneath dirfd (existing
 * ones are fine), owned by uid:gid; follows nothing. */
int wsfs_mkdirs(int dirfd, const char *rel, int uid, int gid, struct err *e);
/* Removes a file, or a directory (its whole tree when recursive). */
int wsfs_remove(int dirfd, const char *rel, bool recursive, struct err *e);
/*
 * Lists a directory beneath dirfd as [{path, type, size}] sorted by path;
 * symlinks and the heavy directories (node_modules, .git, dist, .vite,
 * __pycache__, .venv) are left out.  *truncated is set past WSFS_MAX_LIST.
 */
int wsfs_list(int dirfd, const char *rel, bool recursive, struct jv **out,
              bool *truncated, struct err *e);

#endif
