/*
 * A restore's and a move's halves on another node, against a real node
 * agent in this process (the control plane's nodelink credentials and
 * an enrolled agent's, mutual TLS on loopback, the agent's own op table
 * serving its own data directory; wsnode_fixture.h).
 *
 * wsnode_put_app replaces a remote app's tree with a local one (a stale
 * app.new gone first, a file only in the old tree gone, modes and links
 * as the tar reader keeps them, the old tree removed); app_in alone never
 * changes the app (app_swap does); a hostile archive, a tree past
 * bytes_max and a full disk on the node are refused with the old tree
 * untouched.  ws_rename moves a directory and a file in one rename,
 * never onto an existing path nor out of the workspace, answering as the
 * local move does.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/files_remote.h"
#include "tar_fixture.h"
#include "wsnode_fixture.h"

#define SB "01HWSNODERESTORE000000001"

static char agapp[256]; /* the node's workspace/ of SB */
static bool own_mounts; /* a private mount namespace: a tmpfs may be used */

/* Writes dir/rel (parents made) with text and mode. */
static void
put(const char *dir, const char *rel, const char *text, mode_t mode)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	for (char *s = strchr(p + strlen(dir) + 1, '/'); s;
	     s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f == NULL)
		return;
	fputs(text, f);
	fclose(f);
	CHECK(chmod(p, mode) == 0);
}

/* dir/rel's text ("" when it cannot be read, as a missing file). */
static const char *
text_of(const char *dir, const char *rel)
{
	static char got[256];
	char p[512];
	FILE *f;
	size_t n = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if ((f = fopen(p, "r")) != NULL) {
		n = fread(got, 1, sizeof(got) - 1, f);
		fclose(f);
	}
	got[n] = '\0';
	return got;
}

/* The node's app as a test starts it: old.txt, shared.txt "old". */
static void
old_app(void)
{
	char app[300];

	workspace_create(agcfg.data_dir, SB);
	snprintf(app, sizeof(app), "%s/app", agapp);
	put(app, "old.txt", "only in the old tree", 0644);
	put(app, "shared.txt", "old", 0644);
}

static bool
old_app_untouched(void)
{
	char app[300];

	snprintf(app, sizeof(app), "%s/app", agapp);
	return strcmp(text_of(app, "old.txt"), "only in the old tree") == 0 &&
	       strcmp(text_of(app, "shared.txt"), "old") == 0 &&
	       !exists(agapp, "app.new");
}

/* Whether the node's trash holds no tree of SB (the removal of the
 * old one runs on a worker: waited for up to ms). */
static bool
trash_empty_within(int ms)
{
	char dir[300];

	snprintf(dir, sizeof(dir), "%s/trash/nodes", agcfg.data_dir);
	for (int t = 0;; t += 20) {
		DIR *d = opendir(dir);
		struct dirent *de;
		bool found = false;
		while (d && (de = readdir(d)) != NULL)
			found |= strncmp(de->d_name, SB, strlen(SB)) == 0;
		if (d)
			closedir(d);
		if (!found)
			return true;
		if (t >= ms)
			return false;
		usleep(20 * 1000);
	}
}

/* A snapshot's app/ on the control plane, in a fresh directory. */
static void
new_tree(char *dir, size_t len)
{
	char p[512];

	snprintf(dir, len, "%s/snap-XXXXXX", root);
	CHECK(mkdtemp(dir) != NULL);
	put(dir, "shared.txt", "new", 0644);
	put(dir, "sub/deep/new.txt", "deep", 0600);
	put(dir, "run.sh", "#!/bin/sh\n", 0755);
	put(dir, "setid", "x", 04755);
	snprintf(p, sizeof(p), "%s/link", dir);
	CHECK(symlink("shared.txt", p) == 0);
	snprintf(p, sizeof(p), "%s/empty", dir);
	CHECK(mkdir(p, 0750) == 0);
	{
		char a[512], b[512];
		snprintf(a, sizeof(a), "%s/shared.txt", dir);
		snprintf(b, sizeof(b), "%s/hard.txt", dir);
		CHECK(link(a, b) == 0);
	}
}

static void
put_app_replaces_the_tree(void)
{
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	char src[300], app[300], p[600], target[64] = "";
	struct stat st, st2;

	old_app();
	/* a restore that crashed left an app.new behind */
	put(agapp, "app.new/stale.txt", "stale", 0644);
	new_tree(src, sizeof(src));
	CHECK(wsnode_put_app(wn, &sb, src, 1 << 20, &e) == 0);
	if (e.status)
		fprintf(stderr, "  %s\n", e.msg);
	snprintf(app, sizeof(app), "%s/app", agapp);
	CHECK(!exists(app, "old.txt")); /* only in the old tree: gone */
	CHECK(!exists(app, "stale.txt"));
	CHECK(!exists(agapp, "app.new"));
	CHECK_STR(text_of(app, "shared.txt"), "new");
	CHECK_STR(text_of(app, "sub/deep/new.txt"), "deep");
	snprintf(p, sizeof(p), "%s/sub/deep/new.txt", app);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600);
	snprintf(p, sizeof(p), "%s/run.sh", app);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0755);
	snprintf(p, sizeof(p), "%s/setid", app); /* set-id bits dropped */
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0755);
	snprintf(p, sizeof(p), "%s/empty", app);
	CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
	snprintf(p, sizeof(p), "%s/link", app); /* a link stays a link */
	CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(readlink(p, target, sizeof(target) - 1) == 10);
	CHECK_STR(target, "shared.txt");
	snprintf(p, sizeof(p), "%s/hard.txt", app); /* one inode, twice */
	CHECK(stat(p, &st) == 0);
	snprintf(p, sizeof(p), "%s/shared.txt", app);
	CHECK(stat(p, &st2) == 0 && st.st_ino == st2.st_ino);
	CHECK(trash_empty_within(2000)); /* the old tree removed */
	/* a local sandbox is not the node's business */
	sb.node[0] = '\0';
	e = (struct err){0};
	CHECK(wsnode_put_app(wn, &sb, src, 1 << 20, &e) == -1);
	CHECK(e.status == 400);
}

/* Opens app_in on the agent for SB; the stream's fd. */
static int
app_in(int64_t max)
{
	struct jv *req = jv_obj();
	struct err e = {0};
	int fd = -1;

	jv_set_str(req, "op", "app_in");
	jv_set_str(req, "sandbox", SB);
	jv_set_int(req, "bytes_max", max);
	CHECK(nl_stream(cp, ag_addr, NL_ROLE_NODE, req, NULL, &fd, &e) == 0);
	jv_free(req);
	return fd;
}

/* Sends entries {name, type, link, data} as a tar, half-closes, and
 * reads the trailer: its status (0 when ok). */
static int
send_tar(int fd, const char *const (*v)[4], size_t n)
{
	unsigned char h[512], zero[1024] = {0};
	char line[4096] = "", perr[64];
	size_t got = 0;
	ssize_t k;
	struct jv *t;
	int st;

	for (size_t i = 0; i < n; i++) {
		size_t len = v[i][3] ? strlen(v[i][3]) : 0;
		unsigned char blk[512] = {0};
		tar_header(h, v[i][0], v[i][1][0], v[i][2], len);
		(void)!write(fd, h, 512);
		memcpy(blk, v[i][3] ? v[i][3] : "", len);
		if (len)
			(void)!write(fd, blk, 512);
	}
	(void)!write(fd, zero, sizeof(zero));
	shutdown(fd, SHUT_WR);
	while (got < sizeof(line) - 1 &&
	       (k = read(fd, line + got, sizeof(line) - 1 - got)) > 0)
		got += (size_t)k;
	close(fd);
	t = jv_parse(line, strcspn(line, "\n"), 4, perr, sizeof(perr));
	CHECK(t != NULL);
	st = jv_is_true(jv_get(t, "ok")) ? 0 : (int)jv_int(jv_get(t, "status"));
	jv_free(t);
	return st;
}

static int
app_swap(bool drop, struct err *e)
{
	struct jv *req = jv_obj(), *ans = NULL;
	int rc;

	jv_set_str(req, "op", "app_swap");
	jv_set_str(req, "sandbox", SB);
	jv_set_bool(req, "drop", drop);
	rc = nl_call(cp, ag_addr, NL_ROLE_NODE, req, &ans, NL_CALL_MS, e);
	jv_free(req);
	jv_free(ans);
	return rc;
}

/* app_in stages only: the app changes at app_swap, never before. */
static void
app_in_then_swap(void)
{
	static const char *const tree[][4] = {
	    {"fresh.txt", "0", NULL, "fresh"},
	};
	struct err e = {0};
	char app[300];

	old_app();
	CHECK(send_tar(app_in(1 << 20), tree, 1) == 0);
	CHECK(strcmp(text_of(agapp, "app.new/fresh.txt"), "fresh") == 0);
	snprintf(app, sizeof(app), "%s/app", agapp);
	CHECK_STR(text_of(app, "shared.txt"), "old"); /* not yet */
	CHECK(app_swap(false, &e) == 0);
	CHECK_STR(text_of(app, "fresh.txt"), "fresh");
	CHECK(!exists(app, "old.txt"));
	CHECK(!exists(agapp, "app.new"));
	/* nothing staged: nothing to swap */
	CHECK(app_swap(false, &e) == -1);
	CHECK(e.status == 409);
	/* a copy staged, then dropped: the app as it was */
	e = (struct err){0};
	CHECK(send_tar(app_in(1 << 20), tree, 1) == 0);
	CHECK(app_swap(true, &e) == 0);
	CHECK(!exists(agapp, "app.new"));
	CHECK_STR(text_of(app, "fresh.txt"), "fresh");
	CHECK(trash_empty_within(2000));
}

/* Archives made to attack the reader: refused, the app untouched. */
static void
hostile_archive_refused(void)
{
	static const char *const up[][4] = {
	    {"ok.txt", "0", NULL, "fine"},
	    {"../escape.txt", "0", NULL, "out"},
	};
	static const char *const through[][4] = {
	    {"out", "2", "/tmp", NULL},
	    {"out/escape.txt", "0", NULL, "out"},
	};
	static const char *const absolute[][4] = {
	    {"/tmp/escape.txt", "0", NULL, "out"},
	};
	struct err e = {0};

	old_app();
	CHECK(send_tar(app_in(1 << 20), up, 2) == 400);
	CHECK(old_app_untouched());
	CHECK(!exists(agapp, "escape.txt"));
	CHECK(send_tar(app_in(1 << 20), through, 2) == 400);
	CHECK(old_app_untouched());
	CHECK(send_tar(app_in(1 << 20), absolute, 1) == 400);
	CHECK(old_app_untouched());
	/* and nothing was staged for a swap */
	CHECK(app_swap(false, &e) == -1);
	CHECK(e.status == 409);
	CHECK(old_app_untouched());
}

/* A tree past bytes_max: 413 from the node, the app untouched. */
static void
too_large_refused(void)
{
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	char src[300], *big = malloc(200001);

	old_app();
	new_tree(src, sizeof(src));
	memset(big, 'x', 200000);
	big[200000] = '\0';
	put(src, "big.bin", big, 0644);
	free(big);
	CHECK(wsnode_put_app(wn, &sb, src, 100000, &e) == -1);
	CHECK(e.status == 413);
	CHECK_STR(e.code, "too_large");
	CHECK(old_app_untouched());
}

/* The node's data filesystem full (a small tmpfs over its data
 * directory): 507 insufficient_storage, the app untouched. */
static void
full_disk_refused(void)
{
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	char src[300], *big = malloc((2 << 20) + 1);

	if (!own_mounts ||
	    mount("tmpfs", agcfg.data_dir, "tmpfs", 0, "size=1m") < 0) {
		printf("# skipped: a full disk needs a tmpfs (root)\n");
		free(big);
		return;
	}
	CHECK(workspace_init_dirs(agcfg.data_dir) == 0);
	old_app();
	new_tree(src, sizeof(src));
	memset(big, 'x', 2 << 20);
	big[2 << 20] = '\0';
	put(src, "big.bin", big, 0644);
	free(big);
	CHECK(wsnode_put_app(wn, &sb, src, 8 << 20, &e) == -1);
	CHECK(e.status == 507);
	CHECK_STR(e.code, "insufficient_storage");
	CHECK(old_app_untouched());
	CHECK(trash_empty_within(2000)); /* the partial copy is gone too */
	CHECK(umount2(agcfg.data_dir, MNT_DETACH) == 0);
}

static void
rename_dir_and_file(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	char app[300];

	old_app();
	snprintf(app, sizeof(app), "%s/app", agapp);
	put(app, "src/lib/a.js", "a", 0644);
	/* a directory, into a directory that is made */
	CHECK(wsnode_rename(wn, &sb, "workspace/app", "src", "moved/src", &e) ==
	      0);
	CHECK(!exists(app, "src"));
	CHECK_STR(text_of(app, "moved/src/lib/a.js"), "a");
	/* a file, through the files API's half */
	CHECK(files_remote_move(&c, &sb, "moved/src/lib/a.js", "b.js", &e) ==
	      0);
	CHECK_STR(text_of(app, "b.js"), "a");
	CHECK(!exists(app, "moved/src/lib/a.js"));
	/* a directory through it too (it used to answer sandbox_remote) */
	CHECK(files_remote_move(&c, &sb, "moved", "again", &e) == 0);
	CHECK(exists(app, "again/src/lib"));
}

static void
rename_refusals(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	struct sandbox sb = remote_sb(SB), here = {0};
	struct err e = {0}, le = {0};
	char app[300], p[600];

	old_app();
	snprintf(app, sizeof(app), "%s/app", agapp);
	/* onto an existing path: 409, both as they were */
	CHECK(files_remote_move(&c, &sb, "old.txt", "shared.txt", &e) == -1);
	CHECK(e.status == 409);
	CHECK_STR(text_of(app, "old.txt"), "only in the old tree");
	CHECK_STR(text_of(app, "shared.txt"), "old");
	/* the same answer as the local move gives, word for word */
	snprintf(here.id, sizeof(here.id), "%s", SB);
	workspace_create(cpcfg.data_dir, SB);
	{
		char lapp[300];
		snprintf(lapp, sizeof(lapp), "%s/workspaces/%s/workspace/app",
		         cpcfg.data_dir, SB);
		put(lapp, "old.txt", "x", 0644);
		put(lapp, "shared.txt", "y", 0644);
	}
	CHECK(wsnode_rename(wn, &here, "workspace/app", "old.txt", "shared.txt",
	                    &le) == -1);
	CHECK(le.status == e.status);
	CHECK_STR(le.msg, e.msg);
	/* missing: 404 */
	e = (struct err){0};
	CHECK(files_remote_move(&c, &sb, "nope.txt", "n.txt", &e) == -1);
	CHECK(e.status == 404);
	/* a directory into itself: 400 */
	put(app, "d/f", "f", 0644);
	e = (struct err){0};
	CHECK(files_remote_move(&c, &sb, "d", "d/e", &e) == -1);
	CHECK(e.status == 400);
	/* a symbolic link is not moved */
	snprintf(p, sizeof(p), "%s/ln", app);
	CHECK(symlink("/etc", p) == 0);
	e = (struct err){0};
	CHECK(files_remote_move(&c, &sb, "ln", "ln2", &e) == -1);
	CHECK(e.status == 400);
	/* ".." in either path or in dir: refused on the node */
	e = (struct err){0};
	CHECK(wsnode_rename(wn, &sb, "workspace/app", "../app/old.txt", "x",
	                    &e) == -1);
	CHECK(e.status == 400);
	e = (struct err){0};
	CHECK(wsnode_rename(wn, &sb, "workspace/app", "old.txt",
	                    "../../../../escape.txt", &e) == -1);
	CHECK(e.status == 400);
	e = (struct err){0};
	CHECK(wsnode_rename(wn, &sb, "../..", "x", "y", &e) == -1);
	CHECK(e.status == 400);
	CHECK_STR(text_of(app, "old.txt"), "only in the old tree");
	CHECK(!exists(agcfg.data_dir, "escape.txt"));
}

static const struct unit_test tests[] = {
    {"put_app replaces a remote app's tree", put_app_replaces_the_tree},
    {"app_in stages, app_swap puts in place", app_in_then_swap},
    {"a hostile archive is refused, the app untouched",
     hostile_archive_refused},
    {"a tree past bytes_max is refused", too_large_refused},
    {"a full disk on the node: 507, the app untouched", full_disk_refused},
    {"a remote rename of a directory and of a file", rename_dir_and_file},
    {"a remote rename refused as a local move is", rename_refusals},
};

int
main(void)
{
	int rc;

	/* before any thread: a tmpfs mounted here is this process's only */
	own_mounts = unshare(CLONE_NEWNS) == 0 &&
	             mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
	wsnode_fixture_setup("/tmp/sbx-wsrestore-XXXXXX");
	snprintf(agapp, sizeof(agapp), "%s/workspaces/%s/workspace",
	         agcfg.data_dir, SB);
	rc = UNIT_RUN("wsnode restore", tests);
	wsnode_fixture_teardown();
	return rc;
}
