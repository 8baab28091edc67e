/*
 * wsnode_shadow: the control plane's local view of a remote app's root,
 * for the code that reads an app's small files through a directory fd
 * (the manifest, framework detection, the install key): the regular
 * files directly in the directory (and the extra paths asked for),
 * copied into a fresh private directory under <data>/state/wsshadow, so
 * that code runs unchanged on the copy.  Bounded: WSNODE_SHADOW_FILES
 * files of at most WSNODE_SHADOW_FILE_MAX bytes each (a larger one is
 * left out, as if absent).  The copy is the node's bytes, which are the
 * sandbox's: it is only ever read as the local workspace would be, and
 * it is dropped after use.  wsnode_fetch_tmp puts a whole remote
 * workspace in such a directory (an export's); wsnode_stage a bounded
 * one the git helper can enter (a publish's, a push's).  Rejected: a
 * network-backed directory fd (no such thing without FUSE) and porting every
 * reader to wsnode calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/limits.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "wsnode/internal.h"
#include "ws/wsfs.h"

static int
copy_file(struct wsnode *w, const struct sandbox *sb, const char *dir,
          const char *rel, int dirfd)
{
	char path[WSFS_MAX_PATH * 2 + 2], parent[WSFS_MAX_PATH + 1];
	struct err e = {0};
	struct buf b;
	bool eof = false;
	const char *slash = strrchr(rel, '/');
	int rc = -1;

	snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "", rel);
	buf_init(&b, WSNODE_SHADOW_FILE_MAX + 1);
	if (wsnode_read(w, sb, path, 0, WSNODE_SHADOW_FILE_MAX + 1, &b, &eof,
	                &e) < 0 ||
	    b.len > WSNODE_SHADOW_FILE_MAX)
		goto out;
	if (slash) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - rel),
		         rel);
		if (wsfs_mkdirs(dirfd, parent, (int)getuid(), (int)getgid(),
		                &e) < 0)
			goto out;
	}
	rc = wsfs_write(dirfd, rel, b.data ? b.data : "", b.len, (int)getuid(),
	                (int)getgid(), &e);
out:
	buf_release(&b);
	return rc;
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

void
wsnode_shadow_drop(int fd, const char *path)
{
	if (fd >= 0)
		close(fd);
	if (path && path[0])
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh private directory under <data>/state/wsshadow. */
static int
shadow_dir(struct wsnode *w, char *path, size_t len, struct err *e)
{
	char base[WORKSPACE_PATH_MAX];
	int fd;

	snprintf(base, sizeof(base), "%s/state/wsshadow", w->cfg->data_dir);
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return ERR_INTERNAL(e, "cannot make %s: %s", base,
		                    strerror(errno));
	snprintf(path, len, "%s/XXXXXX", base);
	if (mkdtemp(path) == NULL)
		return ERR_INTERNAL(e, "cannot make a directory in %s: %s",
		                    base, strerror(errno));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ERR_INTERNAL(e, "cannot open %s: %s", path,
		                    strerror(errno));
	return fd;
}

int
wsnode_shadow(struct wsnode *w, const struct sandbox *sb, const char *dir,
              const char *const *extra, size_t nextra, char *path, size_t len,
              struct err *e)
{
	struct jv *list = NULL;
	size_t copied = 0;
	int fd;

	path[0] = '\0';
	if (wsnode_list(w, sb, dir, &list, e) < 0)
		return -1;
	if ((fd = shadow_dir(w, path, len, e)) < 0) {
		jv_free(list);
		return -1;
	}
	for (size_t i = 0; i < jv_len(list) && copied < WSNODE_SHADOW_FILES;
	     i++) {
		const struct jv *o = jv_at(list, i);
		if (strcmp(jv_str(jv_get(o, "type")), "file") != 0 ||
		    jv_int(jv_get(o, "size")) > WSNODE_SHADOW_FILE_MAX)
			continue;
		if (copy_file(w, sb, dir, jv_str(jv_get(o, "name")), fd) == 0)
			copied++;
	}
	jv_free(list);
	for (size_t i = 0; i < nextra && copied < WSNODE_SHADOW_FILES; i++) {
		char clean[WSFS_MAX_PATH + 1];
		struct err ignored = {0};
		if (wsfs_clean(extra[i], strlen(extra[i]), clean, sizeof(clean),
		               false, &ignored) == 0 &&
		    !wsfs_exists(fd, clean) &&
		    copy_file(w, sb, dir, clean, fd) == 0)
			copied++;
	}
	return fd;
}

/* wsnode_fetch_max into a fresh private directory: its fd, or -1. */
static int
fetch_tmp(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
          int64_t max, char *path, size_t len, struct err *e)
{
	int64_t bytes;
	int fd;

	path[0] = '\0';
	if ((fd = shadow_dir(w, path, len, e)) < 0)
		return -1;
	if (wsnode_fetch_max(w, sb, exclude_deps, max, fd, &bytes, e) < 0) {
		wsnode_shadow_drop(fd, path);
		path[0] = '\0';
		return -1;
	}
	return fd;
}

int
wsnode_fetch_tmp(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
                 char *path, size_t len, struct err *e)
{
	return fetch_tmp(w, sb, exclude_deps, WSNODE_TAR_MAX, path, len, e);
}

/* What a stage may take: *room the data filesystem's bytes above its
 * reserve, *size the workspace's bound; the smaller in *max. */
static int
stage_bounds(struct wsnode *w, const struct sandbox *sb, int64_t *room,
             int64_t *size, int64_t *max, struct err *e)
{
	int64_t free_b = ws_free_bytes(w->cfg->data_dir), used = 0;

	*room = free_b < 0 ? WSNODE_TAR_MAX : free_b - WS_DATA_MIN_FREE_BYTES;
	if (*room <= 0)
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full (%lld bytes free)",
		               (long long)free_b);
	if (w->cfg->workspace_max_mb > 0) {
		*size = (w->cfg->workspace_max_mb << 20) +
		        (w->cfg->workspace_max_mb << 18) + (64ll << 20);
	} else {
		if (wsnode_usage(w, sb, &used, e) < 0)
			return -1;
		*size = 2 * used + (64ll << 20);
	}
	*max = *size < *room ? *size : *room;
	if (*max > WSNODE_TAR_MAX)
		*max = WSNODE_TAR_MAX;
	return 0;
}

int
wsnode_stage(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
             char *path, size_t len, struct err *e)
{
	int64_t room = 0, size = 0, max = 0;
	int fd;

	path[0] = '\0';
	if (stage_bounds(w, sb, &room, &size, &max, e) < 0)
		return -1;
	fd = fetch_tmp(w, sb, exclude_deps, max, path, len, e);
	if (fd < 0 && e->status == 413 && max == room)
		return err_set(e, 507, "insufficient_storage",
		               "the workspace's copy does not fit the data "
		               "filesystem (%lld bytes left above its reserve)",
		               (long long)room);
	if (fd < 0 && e->status == 413)
		return err_set(e, 413, "too_large",
		               "the workspace's copy is past %lld bytes, more "
		               "than the workspace holds",
		               (long long)max);
	if (fd < 0)
		return -1;
	/* A local workspace's root: the sandbox user's, 0700. */
	if (fchown(fd, WORKSPACE_UID, WORKSPACE_GID) < 0 ||
	    fchmod(fd, 0700) < 0) {
		err_set(e, 500, "internal", "cannot own %s: %s", path,
		        strerror(errno));
		wsnode_shadow_drop(fd, path);
		path[0] = '\0';
		return -1;
	}
	return fd;
}
