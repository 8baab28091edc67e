/*
 * tar: a whole workspace as a tar stream, both ways (libarchive), for
 * moving a sandbox's files between nodes.  The tree is hostile: the
 * writer opens everything beneath dirfd without following links (a link
 * is stored as a link), skips what is not a file, directory or link, and
 * never leaves dirfd; the reader writes only beneath dirfd (no absolute
 * names, no "..", no links followed, no device nodes, no set-id bits),
 * and stops past bytes_max.  Hard links inside the tree are kept.
 */
#ifndef EXPORT_TAR_H
#define EXPORT_TAR_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"

/* Writes the tree under dirfd to fd; exclude_deps leaves out dependency
 * trees (node_modules, .venv, __pycache__).  *bytes the stream's size. */
int tar_write_tree(int dirfd, int fd, bool exclude_deps, int64_t *bytes,
                   struct err *e);
/* Reads a tar from fd into the (empty) directory dirfd; -1 with e (413
 * too_large past bytes_max, 400 invalid_request for a bad entry). */
int tar_read_tree(int fd, int dirfd, int64_t bytes_max, int64_t *bytes,
                  struct err *e);

#endif
