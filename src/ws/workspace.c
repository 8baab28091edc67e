/*
 * Workspace directories on the host.  The tree is written by code running
 * in the sandbox, so it is hostile: removal never follows symbolic links
 * (nftw with FTW_PHYS, unlink of the link itself) and never crosses into
 * another filesystem (FTW_MOUNT), and ownership changes use lchown.
 */
#include "ws/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/limits.h"
#include "lib/log.h"
#include "lib/ulid.h"

static int
mkdir_owned(const char *path, mode_t mode, bool sandbox_owned)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST) {
		log_error("workspace: mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	if (sandbox_owned && lchown(path, WORKSPACE_UID, WORKSPACE_GID) < 0) {
		log_error("workspace: chown %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Other host users may pass through workspaces/ (0711) but list nothing,
 * and a workspace is 0700 (its owner is the sandbox user, which its
 * container runs as; the daemon is root).  state/ is the daemon's alone.
 */
static mode_t
dir_mode(const char *sub)
{
	if (strcmp(sub, "state") == 0)
		return 0700;
	return strcmp(sub, "workspaces") == 0 ? 0711 : 0755;
}

int
workspace_init_dirs(const char *data_dir)
{
	static const char *const sub[] = {"state", "workspaces", "trash",
	                                  "log"};
	char path[WORKSPACE_PATH_MAX];

	if (mkdir_owned(data_dir, 0755, false) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", data_dir, sub[i]);
		if (mkdir_owned(path, dir_mode(sub[i]), false) < 0 ||
		    chmod(path, dir_mode(sub[i])) < 0)
			return -1;
	}
	return 0;
}

void
workspace_path(const char *data_dir, const char *id, char *out, size_t len)
{
	snprintf(out, len, "%s/workspaces/%s", data_dir, id);
}

int
workspace_create(const char *data_dir, const char *id)
{
	char root[WORKSPACE_PATH_MAX], path[WORKSPACE_PATH_MAX + 100];

	workspace_path(data_dir, id, root, sizeof(root));
	if (mkdir_owned(root, 0700, true) < 0 || chmod(root, 0700) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/workspace", root);
	if (mkdir_owned(path, 0755, true) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/workspace/app", root);
	return mkdir_owned(path, 0755, true);
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void
remove_tree(const char *path)
{
	nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int
workspace_remove(const char *data_dir, const char *id)
{
	char src[WORKSPACE_PATH_MAX], dst[WORKSPACE_PATH_MAX + 100],
	    tag[ULID_LEN + 1];

	workspace_path(data_dir, id, src, sizeof(src));
	ulid_new(tag);
	snprintf(dst, sizeof(dst), "%s/trash/%s-%s", data_dir, id, tag);
	if (rename(src, dst) < 0) {
		if (errno == ENOENT)
			return 0;
		log_error("workspace: move %s to trash: %s", src,
		          strerror(errno));
		return -1;
	}
	remove_tree(dst);
	return 0;
}

/*
 * Removes every entry of <data>/trash but kept/ (the trash of deleted
 * apps that may still be restored, trash/trash.c).
 */
void
workspace_empty_trash(const char *data_dir)
{
	char path[WORKSPACE_PATH_MAX], entry[WORKSPACE_PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/trash", data_dir);
	mkdir_owned(path, 0755, false);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, WORKSPACE_KEPT_DIR) == 0)
			continue;
		snprintf(entry, sizeof(entry), "%s/%s", path, de->d_name);
		remove_tree(entry);
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/trash/" WORKSPACE_KEPT_DIR, data_dir);
	mkdir_owned(path, 0700, false);
}

void
workspace_kept_path(const char *data_dir, const char *trash_id, char *out,
                    size_t len)
{
	snprintf(out, len, "%s/trash/" WORKSPACE_KEPT_DIR "/%s", data_dir,
	         trash_id);
}

static bool
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* rename(2) only: never a copy, so no step needs room on the disk. */
static int
move(const char *src, const char *dst)
{
	if (rename(src, dst) == 0)
		return 0;
	if (errno == ENOENT && !exists(src) && exists(dst))
		return 0; /* done before a crash */
	if (errno == ENOENT && !exists(src))
		return 1;
	log_error("workspace: move %s to %s: %s", src, dst, strerror(errno));
	return -1;
}

int
workspace_keep(const char *data_dir, const char *id, const char *trash_id)
{
	char src[WORKSPACE_PATH_MAX], dst[WORKSPACE_PATH_MAX + 100];

	workspace_path(data_dir, id, src, sizeof(src));
	workspace_kept_path(data_dir, trash_id, dst, sizeof(dst));
	return move(src, dst);
}

int
workspace_unkeep(const char *data_dir, const char *trash_id, const char *id)
{
	char src[WORKSPACE_PATH_MAX + 100], dst[WORKSPACE_PATH_MAX];

	workspace_kept_path(data_dir, trash_id, src, sizeof(src));
	workspace_path(data_dir, id, dst, sizeof(dst));
	return move(src, dst);
}

int
workspace_kept_remove(const char *data_dir, const char *trash_id)
{
	char src[WORKSPACE_PATH_MAX + 100], dst[WORKSPACE_PATH_MAX + 100],
	    tag[ULID_LEN + 1];

	workspace_kept_path(data_dir, trash_id, src, sizeof(src));
	ulid_new(tag);
	snprintf(dst, sizeof(dst), "%s/trash/%s-%s", data_dir, trash_id, tag);
	if (rename(src, dst) < 0) {
		if (errno == ENOENT)
			return 0;
		log_error("workspace: move %s out of the trash: %s", src,
		          strerror(errno));
		return -1;
	}
	remove_tree(dst);
	return 0;
}
