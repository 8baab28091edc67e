/*
 * wsnode's remote paths against a real node agent in this process: the
 * control plane's nodelink credentials and an enrolled agent's (a CA by
 * nl_ca_init, mutual TLS on loopback), the agent's own op table serving
 * its own data directory, and a real store holding the node's row.  A
 * remote sandbox's files are written in pieces, read at offsets, listed,
 * stat'ed, mirrored and shadowed; a whole workspace goes to the node and
 * back (tar streams relayed here, the source to its trash); a node whose
 * row says down answers node_down; and the files API, the problem and a
 * task's images read and write a remote sandbox's files over the same
 * agent (their remote halves, called directly).  The set-up is
 * wsnode_fixture.h's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/files_remote.h"
#include "applog/problem.h"
#include "task/attach.h"
#include "snapshot/internal.h"
#include "task/internal.h"
#include "wsnode_fixture.h"

#define SB "01HWSNODEREMOTE00000000001"

/* Bytes of a file under root. */
static long
file_size(const char *dir, const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void
remote_files_in_pieces(void)
{
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	unsigned char *big = malloc(100000);
	struct buf b;
	struct jv *list = NULL;
	char ws[512], type[8];
	int64_t size, mtime;
	bool eof = false, ok;

	workspace_create(agcfg.data_dir, SB);
	for (int i = 0; i < 100000; i++)
		big[i] = (unsigned char)(i * 7);
	/* 100,000 bytes: four ws_write pieces of 32 KiB at most */
	CHECK(wsnode_write(wn, &sb, "workspace/app/big.bin", big, 100000, 0644,
	                   &e) == 0);
	snprintf(ws, sizeof(ws), "%s/workspaces/%s", agcfg.data_dir, SB);
	CHECK(file_size(ws, "workspace/app/big.bin") == 100000);
	/* nothing of it on the control plane's disk */
	snprintf(ws, sizeof(ws), "%s/workspaces/%s", cpcfg.data_dir, SB);
	CHECK(file_size(ws, "workspace/app/big.bin") == -1);
	buf_init(&b, 200000);
	CHECK(wsnode_read(wn, &sb, "workspace/app/big.bin", 99990, 100, &b,
	                  &eof, &e) == 0);
	CHECK(b.len == 10 && eof && memcmp(b.data, big + 99990, 10) == 0);
	buf_reset(&b);
	CHECK(wsnode_read(wn, &sb, "workspace/app/big.bin", 0, 200000, &b, &eof,
	                  &e) == 0);
	CHECK(b.len == 100000 && memcmp(b.data, big, 100000) == 0);
	buf_release(&b);
	CHECK(wsnode_mkdir(wn, &sb, "workspace/app/src/lib", &e) == 0);
	CHECK(wsnode_list(wn, &sb, "workspace/app", &list, &e) == 0);
	ok = false;
	for (size_t i = 0; i < jv_len(list); i++)
		ok |=
		    strcmp(jv_str(jv_get(jv_at(list, i), "name")), "src") ==
		        0 &&
		    strcmp(jv_str(jv_get(jv_at(list, i), "type")), "dir") == 0;
	CHECK(ok);
	jv_free(list);
	CHECK(wsnode_stat(wn, &sb, "workspace/app/big.bin", type, &size, &mtime,
	                  &e) == 0);
	CHECK_STR(type, "file");
	CHECK(size == 100000);
	/* confined on the node as locally */
	e = (struct err){0};
	buf_init(&b, 100);
	CHECK(wsnode_read(wn, &sb, "../../../etc/passwd", 0, 10, &b, &eof,
	                  &e) == -1);
	CHECK(e.status >= 400 && b.len == 0);
	buf_release(&b);
	CHECK(wsnode_delete(wn, &sb, "workspace/app/big.bin", &e) == 0);
	e = (struct err){0};
	CHECK(wsnode_stat(wn, &sb, "workspace/app/big.bin", type, &size, &mtime,
	                  &e) == -1);
	CHECK(e.status == 404);
	free(big);
}

static void
remote_mirror_and_shadow(void)
{
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	char dir[256], path[512], text[64] = {0};
	int dirfd, fd;

	snprintf(dir, sizeof(dir), "%s/state", cpcfg.data_dir);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(wsnode_mirror(wn, &sb, ".sandboxd/log", dirfd, "m", 1024, &e) ==
	      -1);
	CHECK(e.status == 404);
	CHECK(faccessat(dirfd, "m", F_OK, 0) != 0); /* not made yet */
	CHECK(wsnode_write(wn, &sb, ".sandboxd/log", "one\n", 4, 0644, &e) ==
	      0);
	CHECK(wsnode_mirror(wn, &sb, ".sandboxd/log", dirfd, "m", 1024, &e) ==
	      1);
	CHECK(wsnode_mirror(wn, &sb, ".sandboxd/log", dirfd, "m", 1024, &e) ==
	      0);
	/* rewritten shorter on the node: the copy starts again */
	CHECK(wsnode_write(wn, &sb, ".sandboxd/log", "2\n", 2, 0644, &e) == 0);
	CHECK(wsnode_mirror(wn, &sb, ".sandboxd/log", dirfd, "m", 1024, &e) ==
	      1);
	CHECK(wsnode_mirror(wn, &sb, ".sandboxd/log", dirfd, "m", 1024, &e) ==
	      1);
	fd = openat(dirfd, "m", O_RDONLY);
	CHECK(read(fd, text, sizeof(text) - 1) == 2);
	CHECK_STR(text, "2\n");
	close(fd);
	close(dirfd);
	CHECK(wsnode_write(wn, &sb, "workspace/app/package.json", "{}", 2, 0644,
	                   &e) == 0);
	CHECK(wsnode_write(wn, &sb, "workspace/app/sub/deep.txt", "x", 1, 0644,
	                   &e) == 0);
	dirfd = wsnode_shadow(wn, &sb, "workspace/app",
	                      (const char *const[]){"sub/deep.txt"}, 1, path,
	                      sizeof(path), &e);
	CHECK(dirfd >= 0);
	CHECK(file_size(path, "package.json") == 2);
	CHECK(file_size(path, "sub/deep.txt") == 1);
	wsnode_shadow_drop(dirfd, path);
	CHECK(access(path, F_OK) != 0);
}

static void
workspace_there_and_back(void)
{
	char cpws[256], agws[256];
	struct err e = {0};
	struct sandbox sb = remote_sb(SB);
	int64_t bytes = 0;
	struct stat st;

	snprintf(cpws, sizeof(cpws), "%s/workspaces/%s", cpcfg.data_dir, SB);
	snprintf(agws, sizeof(agws), "%s/workspaces/%s", agcfg.data_dir, SB);
	/* the node's copy is gone first; the control plane's goes there */
	CHECK(wsnode_copy(wn, SB, "n1", "", false, &bytes, &e) == 0);
	if (e.status)
		fprintf(stderr, "  %s\n", e.msg);
	CHECK(bytes > 0);
	CHECK(file_size(cpws, "workspace/app/package.json") == 2);
	CHECK(stat(agws, &st) != 0); /* the node's went to its trash */
	sb.node[0] = '\0';
	CHECK(wsnode_write(wn, &sb, "workspace/app/added.txt", "abc", 3, 0644,
	                   &e) == 0);
	bytes = 0;
	CHECK(wsnode_copy(wn, SB, "", "n1", false, &bytes, &e) == 0);
	if (e.status)
		fprintf(stderr, "  %s\n", e.msg);
	CHECK(bytes > 0);
	CHECK(file_size(agws, "workspace/app/added.txt") == 3);
	CHECK(file_size(agws, "workspace/app/sub/deep.txt") == 1);
	CHECK(stat(cpws, &st) != 0); /* ours went to the trash */
}

static void
node_down_answers_so(void)
{
	struct sandbox sb = remote_sb(SB);
	struct err e = {0};
	struct buf b;
	bool eof;

	node_row("down");
	buf_init(&b, 100);
	CHECK(wsnode_read(wn, &sb, "workspace/app/added.txt", 0, 10, &b, &eof,
	                  &e) == -1);
	CHECK(e.status == 503);
	CHECK_STR(e.code, "node_down");
	buf_release(&b);
	node_row("ready");
}

/* What the files API, the problem and a task's attachments make of a
 * remote sandbox (their remote halves, over the same agent). */
static void
ports_over_the_node(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	struct sandbox sb = remote_sb(SB);
	struct wsnode_ref at = {.ws = "/nonexistent", .wn = wn, .sb = &sb};
	struct task_image im = {"shot.png", (const unsigned char *)"PNG", 3};
	struct err e = {0};
	struct jv *list = NULL, *pr, *in;
	struct buf b;
	char perr[64];
	bool trunc = true;

	CHECK(wsnode_write(wn, &sb, "workspace/app/a/b/c.txt", "hi", 2, 0644,
	                   &e) == 0);
	CHECK(files_remote_list(&c, &sb, "", true, &list, &trunc, &e) == 0);
	CHECK(!trunc && list != NULL);
	for (size_t i = 1; i < jv_len(list); i++) /* sorted by path */
		CHECK(strcmp(jv_str(jv_get(jv_at(list, i - 1), "path")),
		             jv_str(jv_get(jv_at(list, i), "path"))) < 0);
	trunc = false;
	for (size_t i = 0; i < jv_len(list); i++)
		trunc |= strcmp(jv_str(jv_get(jv_at(list, i), "path")),
		                "a/b/c.txt") == 0;
	CHECK(trunc);
	jv_free(list);
	CHECK(files_remote_read(&c, &sb, "a/b/c.txt", 100, &b, &e) == 0);
	CHECK(b.len == 2 && memcmp(b.data, "hi", 2) == 0);
	buf_release(&b);
	CHECK(files_remote_read(&c, &sb, "a/b/c.txt", 1, &b, &e) == -1);
	CHECK(e.status == 413 && b.len == 0);
	buf_release(&b);
	{
		int64_t used = -1;
		CHECK(wsnode_usage(wn, &sb, &used, &e) == 0 && used > 0);
		CHECK(core_workspace_room(&c, &sb, &e) == 0); /* no cap set */
	}
	/* a move: never over another */
	CHECK(files_remote_move(&c, &sb, "a/b/c.txt", "a/d.txt", &e) == 0);
	CHECK(files_remote_read(&c, &sb, "a/d.txt", 100, &b, &e) == 0);
	CHECK(b.len == 2);
	buf_release(&b);
	CHECK(files_remote_read(&c, &sb, "a/b/c.txt", 100, &b, &e) == -1);
	CHECK(e.status == 404);
	buf_release(&b);
	CHECK(wsnode_write(wn, &sb, "workspace/app/a/e.txt", "e", 1, 0644,
	                   &e) == 0);
	e = (struct err){0};
	CHECK(files_remote_move(&c, &sb, "a/e.txt", "a/d.txt", &e) == -1);
	CHECK(e.status == 409);
	e = (struct err){0};
	CHECK(files_remote_move(&c, &sb, "a/b", "z", &e) == 0);
	e = (struct err){0};
	CHECK(files_remote_delete(&c, &sb, "a", false, &e) == -1);
	CHECK(e.status == 409);
	e = (struct err){0};
	CHECK(files_remote_delete(&c, &sb, "a", true, &e) == 0);
	/* the install's problem from the node's install.log */
	CHECK(wsnode_write(wn, &sb, ".sandboxd/logs/install.log",
	                   "npm error code E404\n", 20, 0644, &e) == 0);
	in = jv_parse("{\"state\":\"failed\",\"exit_code\":1}", 32, 4, perr,
	              sizeof(perr));
	pr = applog_install_problem(&at, SB, in);
	CHECK(pr != NULL);
	CHECK(pr && strstr(jv_str(jv_get(pr, "summary")), "E404") != NULL);
	jv_free(pr);
	jv_free(in);
	/* a task's images, written to the node and listed from there */
	CHECK(task_attach_write(&at, "01HTASK0000000000000000001", &im, 1,
	                        &e) == 0);
	list = task_attach_list(&at, "01HTASK0000000000000000001");
	CHECK(jv_len(list) == 1);
	CHECK_STR(jv_str(jv_get(jv_at(list, 0), "name")), "1-shot.png");
	CHECK(jv_int(jv_get(jv_at(list, 0), "bytes")) == 3);
	jv_free(list);
	task_attach_remove(&at, "01HTASK0000000000000000001");
	list = task_attach_list(&at, "01HTASK0000000000000000001");
	CHECK(jv_len(list) == 0);
	jv_free(list);
}

/* A snapshot's copy of a remote app: the node's tar, the app's tree
 * kept, the rest of the workspace dropped; the node's untouched. */
static void
snapshot_of_a_remote_app(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	struct sandbox sb = remote_sb(SB);
	struct copytree_stats st;
	struct err e = {0};
	char tmp[256], dst[300], agws[256];

	CHECK(wsnode_write(wn, &sb, "workspace/app/index.html", "<p>", 3, 0644,
	                   &e) == 0);
	snprintf(tmp, sizeof(tmp), "%s/snap.tmp", cpcfg.data_dir);
	snprintf(dst, sizeof(dst), "%s/app", tmp);
	CHECK(mkdir(tmp, 0700) == 0);
	CHECK(snap_fetch(&c, &sb, tmp, dst, &st, &e) == 0);
	if (e.status)
		fprintf(stderr, "  %s\n", e.msg);
	CHECK(file_size(dst, "index.html") == 3);
	CHECK(file_size(tmp, "ws") == -1); /* the rest dropped */
	CHECK(st.files >= 1 && st.size_bytes >= 3 &&
	      st.own_bytes == st.size_bytes);
	snprintf(agws, sizeof(agws), "%s/workspaces/%s", agcfg.data_dir, SB);
	CHECK(file_size(agws, "workspace/app/index.html") == 3);
	/* an export's copy: the whole workspace, here, until dropped */
	{
		char path[512], app[600];
		int fd =
		    wsnode_fetch_tmp(wn, &sb, true, path, sizeof(path), &e);
		CHECK(fd >= 0);
		snprintf(app, sizeof(app), "%s/workspace/app", path);
		CHECK(file_size(app, "index.html") == 3);
		wsnode_shadow_drop(fd, path);
		CHECK(access(path, F_OK) != 0);
	}
	/* a local sandbox is not fetched */
	sb.node[0] = '\0';
	e = (struct err){0};
	CHECK(wsnode_fetch(wn, &sb, false, -1, &(int64_t){0}, &e) == -1);
	CHECK(e.status == 400);
}

/* Waits up to ms for the local file to hold want. */
static bool
file_is(const char *dir, const char *name, const char *want, int ms)
{
	char p[512], got[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	for (int t = 0; t < ms; t += 50) {
		FILE *f = fopen(p, "r");
		size_t n = f ? fread(got, 1, sizeof(got) - 1, f) : 0;
		if (f)
			fclose(f);
		got[n] = '\0';
		if (f && strcmp(got, want) == 0)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* A remote task's files reach a local mirror within about a second, by
 * the mirror's own thread; stopping it removes the copy. */
static void
task_mirror_follows(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	struct sandbox sb = remote_sb(SB), row = {0};
	struct task t = {0};
	struct app a = {0};
	struct err e = {0};
	char ws[4200] = "", dir[4400];
	struct stat st;

	snprintf(a.id, sizeof(a.id), "01HAPP00000000000000000001");
	snprintf(a.owner, sizeof(a.owner), "alice");
	snprintf(a.name, sizeof(a.name), "m");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	CHECK(store_app_insert(store, &a) == 0);
	snprintf(row.id, sizeof(row.id), "%s", SB);
	snprintf(row.app_id, sizeof(row.app_id), "%s", a.id);
	snprintf(row.image, sizeof(row.image), "img:1");
	snprintf(row.idle_policy, sizeof(row.idle_policy), "sleep");
	row.status = SANDBOX_RUNNING;
	CHECK(store_sandbox_insert(store, &row) == 0);
	CHECK(store_sandbox_set_node(store, SB, "n1") == 0);
	snprintf(t.id, sizeof(t.id), "01HTASK0000000000000000002");
	snprintf(t.sandbox_id, sizeof(t.sandbox_id), "%s", SB);
	CHECK(task_mirror_start(&c, &t, ws, sizeof(ws)) == 1);
	CHECK(strstr(ws, "/state/taskmirror/" SB) != NULL);
	snprintf(dir, sizeof(dir), "%s/.sandboxd/tasks/%s", ws, t.id);
	usleep(400 * 1000);
	CHECK(stat(dir, &st) != 0); /* not before the node has it */
	CHECK(wsnode_write(wn, &sb,
	                   ".sandboxd/tasks/01HTASK0000000000000000002/"
	                   "agent.out",
	                   "{\"a\":1}\n", 8, 0644, &e) == 0);
	CHECK(wsnode_write(wn, &sb,
	                   ".sandboxd/tasks/01HTASK0000000000000000002/"
	                   "steps",
	                   "agent_running\n", 14, 0644, &e) == 0);
	CHECK(file_is(dir, "steps", "agent_running\n", 1500));
	CHECK(file_is(dir, "agent.out", "{\"a\":1}\n", 100));
	task_mirror_stop(t.id);
	task_mirror_wait();
	CHECK(stat(dir, &st) != 0);
}

static const struct unit_test tests[] = {
    {"remote files: pieces, offsets, list, stat, confined, delete",
     remote_files_in_pieces},
    {"remote: a mirror follows, a shadow copies", remote_mirror_and_shadow},
    {"a workspace to the node and back", workspace_there_and_back},
    {"a node down answers node_down", node_down_answers_so},
    {"the files API, the problem, a task's images over the node",
     ports_over_the_node},
    {"a remote task's files mirrored here", task_mirror_follows},
    {"a snapshot's and an export's copies of a remote app",
     snapshot_of_a_remote_app},
};

int
main(void)
{
	int rc;

	wsnode_fixture_setup("/tmp/sbx-wsnode-XXXXXX");
	rc = UNIT_RUN("wsnode remote", tests);
	wsnode_fixture_teardown();
	return rc;
}
