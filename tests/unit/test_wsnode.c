/*
 * wsnode: a local sandbox's workspace is read and written as wsfs does
 * it (same files, same confinement), a remote one is refused by the
 * guard and answered node_down when no channel or node is known, and a
 * copy checks its arguments before it touches anything.  The remote
 * paths over a real node channel are the two-node integration test's.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "lib/buf.h"
#include "lib/jv.h"
#include "wsnode/wsnode.h"
#include "ws/workspace.h"
#include "unit.h"

#define SB_ID "01JTESTWSNODE0000000000000" /* 26, a ULID's */

static char root[64];
static struct config cfg;

static void
setup(void)
{
	char p[256];

	snprintf(root, sizeof(root), "/tmp/sandboxd-wsnode-XXXXXX");
	if (mkdtemp(root) == NULL)
		abort();
	snprintf(cfg.data_dir, sizeof(cfg.data_dir), "%s", root);
	workspace_init_dirs(root);
	workspace_create(root, SB_ID);
	snprintf(p, sizeof(p), "%s/outside", root);
	FILE *f = fopen(p, "w");
	fputs("secret", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/workspaces/%s/leak", root, SB_ID);
	symlink("../../outside", p);
}

static struct sandbox
local_sb(void)
{
	struct sandbox sb = {0};

	snprintf(sb.id, sizeof(sb.id), "%s", SB_ID);
	return sb;
}

static void
local_write_read_at_offsets(void)
{
	struct wsnode *w;
	struct sandbox sb = local_sb();
	struct err e = {0};
	struct buf b;
	bool eof = false;
	char p[256];
	struct stat st;

	CHECK(wsnode_new(&w, &cfg, NULL) == 0);
	CHECK(wsnode_write(w, &sb, "workspace/app/a/b.txt", "hello world", 11,
	                   0644, &e) == 0);
	snprintf(p, sizeof(p), "%s/workspaces/%s/workspace/app/a/b.txt", root,
	         SB_ID);
	CHECK(stat(p, &st) == 0 && st.st_size == 11);
	CHECK(st.st_uid == WORKSPACE_UID);
	buf_init(&b, 1024);
	CHECK(wsnode_read(w, &sb, "workspace/app/a/b.txt", 6, 3, &b, &eof,
	                  &e) == 0);
	CHECK(b.len == 3 && memcmp(b.data, "wor", 3) == 0 && !eof);
	CHECK(wsnode_read(w, &sb, "workspace/app/a/b.txt", 9, 100, &b, &eof,
	                  &e) == 0);
	CHECK(b.len == 5 && memcmp(b.data, "world", 5) == 0 && eof);
	buf_reset(&b);
	CHECK(wsnode_read(w, &sb, "workspace/app/a/b.txt", 50, 100, &b, &eof,
	                  &e) == 0);
	CHECK(b.len == 0 && eof);
	CHECK(wsnode_read(w, &sb, "workspace/app/none", 0, 10, &b, &eof, &e) ==
	      -1);
	CHECK(e.status == 404);
	/* a secret is its owner's only */
	CHECK(wsnode_write(w, &sb, ".sandboxd/tasks/t/env", "K=v", 3, 0600,
	                   &e) == 0);
	snprintf(p, sizeof(p), "%s/workspaces/%s/.sandboxd/tasks/t/env", root,
	         SB_ID);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	buf_release(&b);
	wsnode_free(w);
}

static void
local_stays_confined(void)
{
	struct wsnode *w;
	struct sandbox sb = local_sb();
	struct err e = {0};
	struct buf b;
	bool eof;

	CHECK(wsnode_new(&w, &cfg, NULL) == 0);
	buf_init(&b, 1024);
	CHECK(wsnode_read(w, &sb, "leak", 0, 100, &b, &eof, &e) == -1);
	CHECK(wsnode_read(w, &sb, "../../outside", 0, 100, &b, &eof, &e) == -1);
	CHECK(b.len == 0);
	CHECK(wsnode_write(w, &sb, "leak", "x", 1, 0644, &e) == -1);
	e = (struct err){0};
	CHECK(wsnode_read(w, &sb, "x", -1, 1, &b, &eof, &e) == -1);
	CHECK(e.status == 400);
	buf_release(&b);
	wsnode_free(w);
}

static const struct jv *
entry(const struct jv *list, const char *name)
{
	for (size_t i = 0; i < jv_len(list); i++)
		if (strcmp(jv_str(jv_get(jv_at(list, i), "name")), name) == 0)
			return jv_at(list, i);
	return NULL;
}

static void
local_list_stat_mkdir_delete(void)
{
	struct wsnode *w;
	struct sandbox sb = local_sb();
	struct err e = {0};
	struct jv *list = NULL;
	char type[8];
	int64_t size, mtime;

	CHECK(wsnode_new(&w, &cfg, NULL) == 0);
	CHECK(wsnode_mkdir(w, &sb, "workspace/app/d/e", &e) == 0);
	CHECK(wsnode_mkdir(w, &sb, "workspace/app/d/e", &e) == 0);
	CHECK(wsnode_write(w, &sb, "workspace/app/f", "12345", 5, 0644, &e) ==
	      0);
	CHECK(wsnode_list(w, &sb, "workspace/app", &list, &e) == 0);
	CHECK(entry(list, "d") &&
	      strcmp(jv_str(jv_get(entry(list, "d"), "type")), "dir") == 0);
	CHECK(entry(list, "f") &&
	      jv_int(jv_get(entry(list, "f"), "size")) == 5);
	jv_free(list);
	CHECK(wsnode_list(w, &sb, "", &list, &e) == 0);
	CHECK(entry(list, "leak") &&
	      strcmp(jv_str(jv_get(entry(list, "leak"), "type")), "link") == 0);
	jv_free(list);
	CHECK(wsnode_stat(w, &sb, "workspace/app/f", type, &size, &mtime, &e) ==
	      0);
	CHECK_STR(type, "file");
	CHECK(size == 5 && mtime > 0);
	CHECK(wsnode_stat(w, &sb, "leak", type, &size, &mtime, &e) == 0);
	CHECK_STR(type, "link");
	CHECK(wsnode_delete(w, &sb, "workspace/app/d", &e) == 0);
	e = (struct err){0};
	CHECK(wsnode_stat(w, &sb, "workspace/app/d", type, &size, &mtime, &e) ==
	      -1);
	CHECK(e.status == 404);
	CHECK(wsnode_list(w, &sb, "workspace/app/f", &list, &e) == -1);
	wsnode_free(w);
}

static void
local_mirror_follows_growth(void)
{
	struct wsnode *w;
	struct sandbox sb = local_sb();
	struct err e = {0};
	char p[256], text[32] = {0};
	int dirfd, fd;

	CHECK(wsnode_new(&w, &cfg, NULL) == 0);
	snprintf(p, sizeof(p), "%s/state", root);
	dirfd = open(p, O_RDONLY | O_DIRECTORY);
	CHECK(wsnode_mirror(w, &sb, "log", dirfd, "m", 4, &e) == -1);
	CHECK(wsnode_write(w, &sb, "log", "abcdef", 6, 0644, &e) == 0);
	CHECK(wsnode_mirror(w, &sb, "log", dirfd, "m", 4, &e) == 1);
	CHECK(wsnode_mirror(w, &sb, "log", dirfd, "m", 4, &e) == 1);
	CHECK(wsnode_mirror(w, &sb, "log", dirfd, "m", 4, &e) == 0);
	fd = openat(dirfd, "m", O_RDONLY);
	CHECK(read(fd, text, sizeof(text) - 1) == 6);
	CHECK_STR(text, "abcdef");
	close(fd);
	close(dirfd);
	wsnode_free(w);
}

static void
remote_is_guarded(void)
{
	struct wsnode *w;
	struct sandbox sb = local_sb();
	struct err e = {0};
	struct buf b;
	bool eof;
	char addr[128];

	CHECK(wsnode_guard(&sb, "an export", &e) == 0 && e.status == 0);
	CHECK(!wsnode_remote(&sb));
	snprintf(sb.node, sizeof(sb.node), "node-2");
	CHECK(wsnode_remote(&sb));
	CHECK(wsnode_guard(&sb, "an export", &e) == -1);
	CHECK(e.status == 409);
	CHECK_STR(e.code, "sandbox_remote");
	CHECK(strstr(e.msg, "node-2") != NULL);
	/* no channel to nodes (docker mode): never a local read */
	CHECK(wsnode_new(&w, &cfg, NULL) == 0);
	buf_init(&b, 1024);
	e = (struct err){0};
	CHECK(wsnode_read(w, &sb, "workspace/app/f", 0, 10, &b, &eof, &e) ==
	      -1);
	CHECK(e.status == 503 && b.len == 0);
	CHECK_STR(e.code, "node_down");
	e = (struct err){0};
	CHECK(wsnode_addr(w, "node-2", addr, &e) == -1 && e.status == 503);
	e = (struct err){0};
	CHECK(wsnode_write(w, &sb, "workspace/app/f", "x", 1, 0644, &e) == -1);
	CHECK(e.status == 503);
	buf_release(&b);
	wsnode_free(w);
}

static void
copy_checks_its_arguments(void)
{
	struct wsnode *w;
	struct err e = {0};
	int64_t bytes = -1;
	char p[256];
	struct stat st;

	CHECK(wsnode_new(&w, &cfg, NULL) == 0);
	CHECK(wsnode_copy(w, "../etc", "", "n2", false, &bytes, &e) == -1);
	CHECK(e.status == 400 && bytes == 0);
	e = (struct err){0};
	CHECK(wsnode_copy(w, SB_ID, "n2", "n2", false, &bytes, &e) == -1);
	CHECK(e.status == 400);
	/* a target that cannot be reached leaves the source in place */
	e = (struct err){0};
	CHECK(wsnode_copy(w, SB_ID, "", "n2", false, &bytes, &e) == -1);
	CHECK(e.status == 503);
	snprintf(p, sizeof(p), "%s/workspaces/%s", root, SB_ID);
	CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	wsnode_free(w);
}

static const struct unit_test tests[] = {
    {"local: write, read at offsets, secrets", local_write_read_at_offsets},
    {"local: confined beneath the workspace", local_stays_confined},
    {"local: list, stat, mkdir, delete", local_list_stat_mkdir_delete},
    {"local: a mirror follows a growing file", local_mirror_follows_growth},
    {"remote: guarded, node_down without a channel", remote_is_guarded},
    {"copy: checks its arguments, keeps the source", copy_checks_its_arguments},
};

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

int
main(void)
{
	int rc;

	setup();
	rc = UNIT_RUN("wsnode", tests);
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
