/*
 * Unit tests of what releases count in (docs/publish.md, "Disk, backups,
 * the trash, the timeline and metrics"): the releases' figures the
 * metrics read, on a real database; the owners a restore of the
 * releases gives, on a real tree.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/backup_tree.h"
#include "store/store.h"
#include "ws/workspace.h"
#include "store_fixture.h"
#include "unit.h"

#define APP1 "01J0000000000000000000APP1"
#define APP2 "01J0000000000000000000APP2"

static void
insert(struct store *s, const char *app, int i, const char *status)
{
	struct release r;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "01J00000000000000000REL%03d", i);
	snprintf(r.owner, sizeof(r.owner), "t1");
	snprintf(r.app_id, sizeof(r.app_id), "%s", app);
	snprintf(r.source, sizeof(r.source), "files");
	r.created_at = 100 + i;
	CHECK(store_release_insert(s, &r) == 0);
	if (strcmp(status, "building") == 0)
		return;
	snprintf(r.status, sizeof(r.status), "%s", status);
	r.finished_at = 200 + i;
	CHECK(store_release_finish(s, &r) == 0);
}

static void
release_stats(void)
{
	struct store *s = store_fixture_open();
	struct release_stats st;
	struct publication p = {0};

	CHECK(store_release_stats(s, &st) == 0);
	CHECK(st.building == 0 && st.ready == 0 && st.failed == 0 &&
	      st.published == 0);
	insert(s, APP1, 1, "ready");
	insert(s, APP1, 2, "failed");
	insert(s, APP1, 3, "ready");
	insert(s, APP1, 4, "building");
	insert(s, APP2, 5, "failed");
	/* APP1 serves release 3; APP2 has a label but nothing serving. */
	snprintf(p.app_id, sizeof(p.app_id), APP1);
	snprintf(p.owner, sizeof(p.owner), "t1");
	snprintf(p.label, sizeof(p.label), "one");
	snprintf(p.release_id, sizeof(p.release_id),
	         "01J00000000000000000REL003");
	snprintf(p.visibility, sizeof(p.visibility), "public");
	CHECK(store_publication_put(s, &p) == 0);
	snprintf(p.app_id, sizeof(p.app_id), APP2);
	snprintf(p.label, sizeof(p.label), "two");
	p.release_id[0] = '\0';
	CHECK(store_publication_put(s, &p) == 0);
	CHECK(store_release_stats(s, &st) == 0);
	CHECK(st.building == 1);
	CHECK(st.ready == 2);
	CHECK(st.failed == 2);
	CHECK(st.published == 1);
	store_fixture_close(s);
}

static void
put(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
}

static uid_t
owner(const char *root, const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return lstat(p, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* A server release's app/ comes back the sandbox user's (its production
 * container runs as that user), everything else root's. */
static void
restore_release_owners(void)
{
	char tmp[] = "/tmp/sbx-rel-XXXXXX", p[512], err[256];
	struct backup_tree_count n = {0};
	int src, bk, dst;

	if (geteuid() != 0) {
		printf("# skipped: needs root to give files away\n");
		return;
	}
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(p, sizeof(p), "%s/src", tmp);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/bk", tmp);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/dst", tmp);
	CHECK(mkdir(p, 0700) == 0);
	static const char *const dirs[] = {
	    "A",    "A/R1",      "A/R1/app",   "A/R1/app/lib",
	    "A/R2", "A/R2/site", "A/R2/approx"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/src/%s", tmp, dirs[i]);
		CHECK(mkdir(p, 0700) == 0);
	}
	snprintf(p, sizeof(p), "%s/src/A/R1/app/lib/secret.js", tmp);
	put(p, 0600);
	snprintf(p, sizeof(p), "%s/src/A/R1/build.log", tmp);
	put(p, 0600);
	snprintf(p, sizeof(p), "%s/src/A/R2/site/index.html", tmp);
	put(p, 0644);
	snprintf(p, sizeof(p), "%s/src", tmp);
	src = open(p, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/bk", tmp);
	bk = open(p, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/dst", tmp);
	dst = open(p, O_RDONLY | O_DIRECTORY);
	CHECK(src >= 0 && bk >= 0 && dst >= 0);
	CHECK(backup_tree_write(src, bk, "releases", "releases.list", 0, NULL,
	                        &n, err, sizeof(err)) == 0);
	CHECK(backup_tree_restore(bk, "releases", NULL, NULL, dst, "releases",
	                          0700, BACKUP_OWN_RELEASES, &n, err,
	                          sizeof(err)) == 0);
	snprintf(p, sizeof(p), "%s/dst/releases", tmp);
	CHECK(owner(p, "A/R1/app") == WORKSPACE_UID);
	CHECK(owner(p, "A/R1/app/lib") == WORKSPACE_UID);
	CHECK(owner(p, "A/R1/app/lib/secret.js") == WORKSPACE_UID);
	CHECK(owner(p, "A") == 0);
	CHECK(owner(p, "A/R1") == 0);
	CHECK(owner(p, "A/R1/build.log") == 0);
	CHECK(owner(p, "A/R2/site/index.html") == 0);
	CHECK(owner(p, "A/R2/approx") == 0);
	close(src);
	close(bk);
	close(dst);
	snprintf(p, sizeof(p), "rm -rf -- '%s'", tmp);
	CHECK(system(p) == 0);
}

/* Where an app is, as publishing's recovery asks: live, in the trash
 * (its rows stay), or gone (its releases go). */
static void
app_where(void)
{
	struct store *s = store_fixture_open();
	struct app a;

	memset(&a, 0, sizeof(a));
	snprintf(a.id, sizeof(a.id), APP1);
	snprintf(a.owner, sizeof(a.owner), "t1");
	snprintf(a.name, sizeof(a.name), "pub");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	CHECK(store_app_insert(s, &a) == 0);
	CHECK(store_app_where(s, APP1) == 0);
	CHECK(store_trash_begin(s, "01J0000000000000000000TRSH", APP1, 10,
	                        20) == 0);
	CHECK(store_app_where(s, APP1) == STORE_TRASHED);
	CHECK(store_app_get(s, NULL, APP1, &a) == STORE_NOT_FOUND);
	CHECK(store_app_where(s, APP2) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"app where: live, in the trash, gone", app_where},
    {"release stats: by status, and the apps serving one", release_stats},
    {"restored releases: root's, but a server release's app/",
     restore_release_owners},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("publish_around", tests);
}
