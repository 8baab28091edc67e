/*
 * Unit tests of the snapshot copy (snapshot/copytree.h): a tree copied
 * with its directories, symlinks, modes and times, a dependency-store
 * entry hard-linked instead of copied, special files left out, the
 * figures it reports, its depth bound, and the removal of a copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "ws/usage.h"
#include "unit.h"

static char root[64];

static void
put(const char *rel, const char *text, mode_t mode)
{
	char p[256], dir[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')) != NULL;
	     s++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(s - p), p);
		mkdir(dir, 0755);
	}
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(p, mode);
}

static struct stat
st_of(const char *rel)
{
	struct stat st = {0};
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	lstat(p, &st);
	return st;
}

static const char *
text_of(const char *rel, char *buf, size_t len)
{
	char p[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
copy(void)
{
	char src[128], dst[128], store[128], p[256], buf[64], target[64];
	struct timespec old[2] = {{.tv_sec = 1000000000},
	                          {.tv_sec = 1000000000}};
	struct copytree_stats st;
	struct ws_inoset set = {0};
	ssize_t n;

	put("src/a/b/c.txt", "hello", 0640);
	put("src/run.sh", "#!/bin/sh\n", 0755);
	put("src/node_modules/x/index.js", "shared", 0444);
	put("store/entry", "", 0444);
	snprintf(p, sizeof(p), "%s/src/a/b/c.txt", root);
	utimensat(AT_FDCWD, p, old, 0);
	/* the store entry is the workspace's file (as after a dedup pass) */
	snprintf(p, sizeof(p), "%s/store/entry", root);
	unlink(p);
	snprintf(buf, sizeof(buf), "%s/src/node_modules/x/index.js", root);
	CHECK(link(buf, p) == 0);
	snprintf(p, sizeof(p), "%s/src/link", root);
	CHECK(symlink("a/b/c.txt", p) == 0);
	snprintf(p, sizeof(p), "%s/src/fifo", root);
	CHECK(mkfifo(p, 0600) == 0);
	snprintf(store, sizeof(store), "%s/store", root);
	CHECK(ws_inoset_load(store, &set) == 0 && set.n == 1);

	snprintf(src, sizeof(src), "%s/src", root);
	snprintf(dst, sizeof(dst), "%s/dst", root);
	CHECK(copytree(src, dst, &set, &st) == 0);
	CHECK_STR(text_of("dst/a/b/c.txt", buf, sizeof(buf)), "hello");
	CHECK((st_of("dst/a/b/c.txt").st_mode & 07777) == 0640);
	CHECK((st_of("dst/run.sh").st_mode & 07777) == 0755);
	CHECK(st_of("dst/a/b/c.txt").st_mtim.tv_sec == 1000000000);
	CHECK(st_of("dst/a/b/c.txt").st_ino != st_of("src/a/b/c.txt").st_ino);
	/* the store's entry is linked, the others copied */
	CHECK(st_of("dst/node_modules/x/index.js").st_ino ==
	      st_of("store/entry").st_ino);
	snprintf(p, sizeof(p), "%s/dst/link", root);
	n = readlink(p, target, sizeof(target) - 1);
	CHECK(n == 9 && memcmp(target, "a/b/c.txt", 9) == 0);
	CHECK(S_ISLNK(st_of("dst/link").st_mode));
	CHECK(st_of("dst/fifo").st_mode == 0); /* left out */
	CHECK(st.skipped == 1);
	CHECK(st.files == 4); /* c.txt, run.sh, index.js, link */
	CHECK(st.size_bytes == 5 + 10 + 6 + 9);
	CHECK(st.own_bytes == st.size_bytes - 6);
	CHECK(!st.reflinked || !st.copied);
	/* the copy is its own: a later write to the source does not show */
	put("src/a/b/c.txt", "changed", 0640);
	CHECK_STR(text_of("dst/a/b/c.txt", buf, sizeof(buf)), "hello");
	/* dst must not exist */
	CHECK(copytree(src, dst, &set, &st) < 0 && errno == EEXIST);
	CHECK(copytree_remove(dst) == 0);
	CHECK(access(dst, F_OK) < 0);
	CHECK(copytree_remove(dst) == 0); /* missing is fine */
	ws_inoset_release(&set);
}

static void
depth(void)
{
	char p[2048], src[128], dst[128];
	struct copytree_stats st;
	struct ws_inoset none = {0};
	size_t len;

	snprintf(src, sizeof(src), "%s/deep", root);
	snprintf(p, sizeof(p), "%s", src);
	mkdir(p, 0755);
	for (int i = 0; i < COPYTREE_MAX_DEPTH + 2; i++) {
		len = strlen(p);
		snprintf(p + len, sizeof(p) - len, "/d");
		mkdir(p, 0755);
	}
	snprintf(dst, sizeof(dst), "%s/deep-copy", root);
	CHECK(copytree(src, dst, &none, &st) < 0 && errno == EMLINK);
	CHECK(copytree_remove(dst) == 0);
}

static const struct unit_test tests[] = {
    {"a tree is copied whole; store entries are linked, FIFOs left out", copy},
    {"a tree deeper than COPYTREE_MAX_DEPTH is refused", depth},
};

int
main(void)
{
	char cmd[128];
	int rc;

	snprintf(root, sizeof(root), "/tmp/sandboxd-snapshot-XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	rc = UNIT_RUN("snapshot", tests);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
