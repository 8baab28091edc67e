/*
 * Unit tests of the dependency store (disk/dedup.h): which names the walk
 * enters and takes, and a pass over two real workspaces in a temporary
 * data directory (same inode afterwards, read-only, leftovers removed,
 * source files and .git left alone, gc of unused entries).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/dedup.h"
#include "vault/vault.h"
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

static void
names(void)
{
	CHECK(dedup_dir_kind(".git", false) == DEDUP_DIR_SKIP);
	CHECK(dedup_dir_kind(".git", true) == DEDUP_DIR_SKIP);
	CHECK(dedup_dir_kind(".vite", true) == DEDUP_DIR_DEPS);
	CHECK(dedup_dir_kind(".cache", true) == DEDUP_DIR_SKIP);
	CHECK(dedup_dir_kind(".sandboxd", false) == DEDUP_DIR_SKIP);
	CHECK(dedup_dir_kind("src", false) == DEDUP_DIR_PLAIN);
	CHECK(dedup_dir_kind("node_modules", false) == DEDUP_DIR_DEPS);
	CHECK(dedup_dir_kind("site-packages", false) == DEDUP_DIR_DEPS);
	CHECK(dedup_dir_kind("dist-packages", false) == DEDUP_DIR_DEPS);
	CHECK(dedup_dir_kind("react", true) == DEDUP_DIR_DEPS);
	CHECK(dedup_file_wanted("index.js", 10));
	CHECK(!dedup_file_wanted("index.js", 0));
	CHECK(!dedup_file_wanted("big.bin", DEDUP_MAX_BYTES + 1));
	CHECK(!dedup_file_wanted(".package-lock.json", 100));
	CHECK(!dedup_file_wanted(DEDUP_TMP_PREFIX "1-2", 100));

	char out[80];
	dedup_store_name("ab", 0644, out);
	CHECK_STR(out, "ab");
	dedup_store_name("ab", 0755, out);
	CHECK_STR(out, "abx");
}

static void
inoset(void)
{
	struct ws_inoset s = {0};
	char p[128];

	put("set/a", "1", 0644);
	put("set/b", "2", 0644);
	snprintf(p, sizeof(p), "%s/set", root);
	CHECK(ws_inoset_load(p, &s) == 0);
	CHECK(s.n == 2);
	CHECK(ws_inoset_has(&s, st_of("set/a").st_dev, st_of("set/a").st_ino));
	CHECK(ws_inoset_has(&s, st_of("set/b").st_dev, st_of("set/b").st_ino));
	CHECK(!ws_inoset_has(&s, st_of("set").st_dev, st_of("set").st_ino));
	CHECK(!ws_inoset_has(NULL, 0, 1));
	ws_inoset_release(&s);
	snprintf(p, sizeof(p), "%s/missing", root);
	CHECK(ws_inoset_load(p, &s) == -1 && s.n == 0);
}

static void
pass(void)
{
	char data[128], ws[128], rel[128];
	struct dedup_stats st;
	int n;
	int64_t bytes;

	snprintf(data, sizeof(data), "%s/data", root);
	mkdir(data, 0755);
	for (int i = 1; i <= 2; i++) {
		snprintf(rel, sizeof(rel), "w%d/app/node_modules/pkg/index.js",
		         i);
		put(rel, "module.exports = 1;\n", 0644);
		snprintf(rel, sizeof(rel), "w%d/app/node_modules/.bin/tool", i);
		put(rel, "#!/bin/sh\n", 0755);
		snprintf(rel, sizeof(rel), "w%d/app/src/main.js", i);
		put(rel, "module.exports = 1;\n", 0644);
		snprintf(rel, sizeof(rel), "w%d/app/node_modules/.cache/x.js",
		         i);
		put(rel, "cached\n", 0644);
		snprintf(rel, sizeof(rel), "w%d/app/node_modules/pkg/.git/x",
		         i);
		put(rel, "module.exports = 1;\n", 0644);
	}
	put("w1/app/node_modules/pkg/other.js", "only here\n", 0644);
	/* A crashed pass left a temporary name. */
	put("w2/app/node_modules/pkg/" DEDUP_TMP_PREFIX "9-9", "x", 0644);

	snprintf(ws, sizeof(ws), "%s/w1", root);
	CHECK(dedup_tree(data, ws, &st) == 0);
	CHECK(st.linked == 3 && st.added == 3);
	snprintf(ws, sizeof(ws), "%s/w2", root);
	CHECK(dedup_tree(data, ws, &st) == 0);
	CHECK(st.linked == 2 && st.added == 0 && st.cleaned == 1);

	struct stat a = st_of("w1/app/node_modules/pkg/index.js"),
	            b = st_of("w2/app/node_modules/pkg/index.js");
	CHECK(a.st_ino == b.st_ino && a.st_nlink == 3);
	CHECK((a.st_mode & 07777) == 0444 && a.st_uid == 0);
	a = st_of("w1/app/node_modules/.bin/tool");
	CHECK((a.st_mode & 07777) == 0555);
	/* Not dependencies, caches and .git: left as they were. */
	CHECK(st_of("w1/app/src/main.js").st_nlink == 1);
	CHECK(st_of("w1/app/node_modules/.cache/x.js").st_nlink == 1);
	CHECK(st_of("w1/app/node_modules/pkg/.git/x").st_nlink == 1);
	CHECK(st_of("w2/app/node_modules/pkg/" DEDUP_TMP_PREFIX "9-9").st_ino ==
	      0);

	/* A second pass over a done tree links nothing new. */
	CHECK(dedup_tree(data, ws, &st) == 0);
	CHECK(st.linked == 0 && st.added == 0);

	/* gc: other.js's entry is used by w1; once w1's link goes, not. */
	CHECK(dedup_gc(data, false, &n, &bytes) == 0 && n == 0);
	snprintf(rel, sizeof(rel), "%s/w1/app/node_modules/pkg/other.js", root);
	unlink(rel);
	CHECK(dedup_gc(data, false, &n, &bytes) == 0 && n == 1);
	CHECK(dedup_gc(data, true, &n, &bytes) == 0 && n == 1);
	CHECK(dedup_gc(data, false, &n, &bytes) == 0 && n == 0);
	CHECK(st_of("w2/app/node_modules/pkg/index.js").st_nlink == 3);
}

/* A file some process has open for writing is never replaced. */
static void
writer(void)
{
	char data[128], ws[128], path[192];
	struct dedup_stats st;
	struct stat a;
	int fd;

	snprintf(data, sizeof(data), "%s/data", root);
	mkdir(data, 0755);
	put("w3/app/node_modules/pkg/index.js", "module.exports = 1;\n", 0644);
	put("w3/app/node_modules/pkg/busy.js", "module.exports = 1;\n", 0644);
	snprintf(path, sizeof(path), "%s/w3/app/node_modules/pkg/busy.js",
	         root);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	snprintf(ws, sizeof(ws), "%s/w3", root);
	CHECK(dedup_tree(data, ws, &st) == 0);
	CHECK(st.linked == 1 && st.skipped == 1);
	CHECK(write(fd, "x", 1) == 1);
	close(fd);
	a = st_of("w3/app/node_modules/pkg/busy.js");
	CHECK(a.st_nlink == 1 && a.st_size == 21 && a.st_uid == getuid());
	CHECK(st_of("w3/app/node_modules/pkg/index.js").st_uid == 0);
	/* Closed, it is taken by the next pass. */
	CHECK(dedup_tree(data, ws, &st) == 0);
	CHECK(st.linked == 1);
}

static const struct unit_test tests[] = {
    {"which directories and files a pass takes", names},
    {"the store's inode set", inoset},
    {"a pass links equal files of two workspaces to one read-only entry", pass},
    {"a file open for writing is left alone", writer},
};

int
main(void)
{
	char cmd[128];
	int rc;

	snprintf(root, sizeof(root), "/tmp/sandboxd-dedup-XXXXXX");
	if (vault_init() < 0 || mkdtemp(root) == NULL)
		return 1;
	rc = UNIT_RUN("dedup", tests);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
