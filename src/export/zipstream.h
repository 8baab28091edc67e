/*
 * zipstream: an app directory as a zip archive, made while it is read
 * (the only module that includes libarchive).  The directory is a tree
 * the sandbox wrote, so the walk follows no symlink (a symlink is left
 * out, not stored), crosses no mount, leaves out FIFOs, sockets and
 * devices, and leaves out a path longer than ZIPSTREAM_MAX_PATH or
 * deeper than ZIPSTREAM_MAX_DEPTH.  Left out by name at every level:
 * dependency folders and build caches (node_modules, .venv, venv,
 * __pycache__, .vite, .pytest_cache, .mypy_cache, .next/cache), the
 * daemon's own .sandboxd, and .git unless with_git.
 *
 * The caller pulls the archive a piece at a time (zipstream_read); each
 * pull does a bounded amount of work (one directory entry, or at most
 * ZIPSTREAM_CHUNK bytes of one file), so nothing holds the whole zip,
 * and a slow reader costs memory of one chunk, not a thread.  Any one
 * object is used by one thread at a time.
 */
#ifndef EXPORT_ZIPSTREAM_H
#define EXPORT_ZIPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define ZIPSTREAM_CHUNK     (64u << 10) /* bytes of a file read a step */
#define ZIPSTREAM_MAX_PATH  1024        /* bytes of an entry's path */
#define ZIPSTREAM_MAX_DEPTH 64          /* directories deep */
#define ZIPSTREAM_MAX_FILES 100000      /* files of one archive */
#define ZIPSTREAM_OUT_MAX   (4u << 20)  /* output waiting to be read */

struct zipstream;

/*
 * Starts an archive of the directory open at dirfd (taken: closed by
 * zipstream_free, or here on failure).  0, or -1 when out of memory.
 */
int zipstream_open(int dirfd, bool with_git, struct zipstream **out);
/*
 * Up to max bytes of the archive into buf: their count, 0 at its end,
 * -1 when it cannot go on (a file that cannot be read, or that shrank
 * while read; more than ZIPSTREAM_MAX_FILES files): what was handed out
 * so far is then not a whole archive, and the reason is logged.
 */
ssize_t zipstream_read(struct zipstream *z, char *buf, size_t max);
/* Files stored and entries left out so far. */
void zipstream_counts(const struct zipstream *z, size_t *files,
                      size_t *left_out);
void zipstream_free(struct zipstream *z);

#endif
