/*
 * A snapshot of a sandbox whose workspace is on another node: its
 * node's tar_out stream (wsnode_fetch, dependency trees included, so a
 * restore or a fork needs no install) read into <id>.tmp/ws, then the
 * app's tree renamed to <id>.tmp/app, where a local snapshot's copy
 * goes; the rest of the workspace is dropped.  The caller pauses the
 * sandbox around it as for a local copy (orch_pause reaches the node).
 * Nothing of the node's is shared with the local dependency store, so
 * every byte is the snapshot's own.  Rejected: a remote copy kept on
 * the node (a snapshot must outlive its node: it is what a node_down
 * sandbox is restored from).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot/internal.h"
#include "wsnode/wsnode.h"

static _Thread_local struct copytree_stats *counting;

static int
count_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path, (void)ftw;
	if (flag == FTW_F || flag == FTW_SL) {
		counting->files++;
		counting->size_bytes += st->st_size;
	}
	return 0;
}

int
snap_fetch(struct core *c, const struct sandbox *sb, const char *tmp,
           const char *dst, struct copytree_stats *st, struct err *e)
{
	char ws[PATH_MAX], app[PATH_MAX + 32];
	int64_t bytes = 0;
	int fd, rc;

	*st = (struct copytree_stats){0};
	snprintf(ws, sizeof(ws), "%s/ws", tmp);
	if (mkdir(ws, 0700) < 0 ||
	    (fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0)
		return snap_copy_err(errno, "no snapshot was taken", e);
	rc = wsnode_fetch(c->wn, sb, false, fd, &bytes, e);
	close(fd);
	snprintf(app, sizeof(app), "%s/workspace/app", ws);
	if (rc == 0 && rename(app, dst) < 0)
		rc = errno == ENOENT
		         ? ERR_CONFLICT(e, "the app has no files yet")
		         : snap_copy_err(errno, "no snapshot was taken", e);
	copytree_remove(ws);
	if (rc < 0)
		return -1;
	counting = st;
	nftw(dst, count_entry, 16, FTW_PHYS);
	counting = NULL;
	st->own_bytes = st->size_bytes;
	st->copied = true;
	return 0;
}
