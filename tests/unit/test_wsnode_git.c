/*
 * git and recipes on a sandbox whose workspace is on another node,
 * against a real node agent in this process (wsnode_fixture.h: a CA by
 * nl_ca_init, mutual TLS on loopback, the agent's own op table serving
 * its own data directory, a real store holding the node's row).  The
 * agent's `git` op starts this binary's git helper (main below answers
 * `git-helper`), confined to the workspace as the sandbox user, so this
 * runs as root like test_git.
 *
 * Status, diff and commit through the node answer exactly what the
 * local path answers on the same repository; a commit's sha is the
 * repository's HEAD after; a workspace without a repository is
 * GITWS_NOT_REPO; a frame asking for a push is refused by the agent and
 * ends the stream; a node down is 503 node_down.  Recipes: inspect and
 * apply on a remote app detect what they detect on a local copy, and
 * apply writes sandbox.yaml on the node and commits it there.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "sandbox/recipeops.h"
#include "wsnode_fixture.h"

#define SB    "01HWSNODEGIT00000000000001"
#define SB2   "01HWSNODEGIT00000000000002" /* no repository */
#define SBLOC "01HWSNODEGIT00000000000003" /* local, for recipes */
#define APP   "01HWSNODEGITAPP00000000001"
#define APP2  "01HWSNODEGITAPP00000000002"
#define GIT                                                                    \
	"git -c user.name=t -c user.email=t@t -c init.defaultBranch=main "     \
	"-c safe.directory=* "

/* The workspace of id under data (made), its app dir in app. */
static void
workspace(const char *data, const char *id, char *ws, size_t wlen, char *app,
          size_t alen)
{
	workspace_create(data, id);
	snprintf(ws, wlen, "%s/workspaces/%s", data, id);
	snprintf(app, alen, "%s/workspace/app", ws);
	sh("mkdir -p %s", app);
}

/* The JSON text of v (for comparing answers), freed by the caller. */
static char *
dump(const struct jv *v)
{
	struct buf b;
	char *s;

	buf_init(&b, 0);
	if (v == NULL || jv_dump(v, &b) < 0) {
		buf_release(&b);
		return strdup("(none)");
	}
	s = strndup(b.data, b.len);
	buf_release(&b);
	return s;
}

/* One call both ways (remote through the agent, local on the agent's
 * own path): both succeed with the same answer. */
static void
same_both_ways(const char *op, const char *agws)
{
	struct sandbox sb = remote_sb(SB);
	struct wsnode_ref ref = {.ws = agws, .wn = wn, .sb = &sb};
	struct gitws_at at = {
	    .ws = agws, .dial = wsnode_git_dial_ref, .arg = &ref};
	struct jv *r = NULL, *l = NULL;
	struct err e = {0};
	char *rs, *ls;
	int rc;

	if (strcmp(op, "status") == 0)
		rc = gitws_status_at(APP, &at, &r, &e);
	else
		rc = gitws_diff_at(APP, &at, &r, &e);
	if (rc != 0)
		fprintf(stderr, "  remote %s: %d %s %s\n", op, rc, e.code,
		        e.msg);
	CHECK(rc == 0);
	rc = strcmp(op, "status") == 0 ? gitws_status("local", agws, &l, &e)
	                               : gitws_diff("local", agws, &l, &e);
	CHECK(rc == 0);
	rs = dump(r);
	ls = dump(l);
	if (strcmp(rs, ls) != 0)
		fprintf(stderr, "  %s differs:\n  remote %s\n  local  %s\n", op,
		        rs, ls);
	CHECK(strcmp(rs, ls) == 0);
	CHECK(strstr(rs, strcmp(op, "status") == 0 ? "b.txt" : "two") != NULL);
	free(rs);
	free(ls);
	jv_free(r);
	jv_free(l);
}

static void
status_diff_commit_through_the_node(void)
{
	char ws[256], app[300], head[64] = "";
	struct sandbox sb = remote_sb(SB);
	struct wsnode_ref ref = {.ws = "/nonexistent", .wn = wn, .sb = &sb};
	struct gitws_at at = {
	    .ws = "/nonexistent", .dial = wsnode_git_dial_ref, .arg = &ref};
	struct jv *out = NULL, *paths = jv_arr();
	struct err e = {0};
	FILE *f;

	workspace(agcfg.data_dir, SB, ws, sizeof(ws), app, sizeof(app));
	sh("cd %s && " GIT "init -q . && echo one >a.txt && " GIT
	   "add -A && " GIT "commit -qm first && echo two >>a.txt && "
	   "echo new >b.txt && chown -R 1000:1000 %s",
	   app, ws);
	same_both_ways("status", ws);
	same_both_ways("diff", ws);
	/* a commit of a.txt alone, made on the node */
	jv_push(paths, jv_new_str("a.txt"));
	CHECK(gitws_commit_at(APP, &at, "remote commit", paths, &out, &e) == 0);
	jv_free(paths);
	CHECK(jv_is_true(jv_get(out, "committed")));
	sh("cd %s && " GIT "rev-parse HEAD >%s/head", app, root);
	snprintf(app, sizeof(app), "%s/head", root);
	if ((f = fopen(app, "r")) != NULL) {
		if (fgets(head, sizeof(head), f) == NULL)
			head[0] = '\0';
		fclose(f);
	}
	head[strcspn(head, "\n")] = '\0';
	CHECK(jv_str(jv_get(out, "sha")) != NULL);
	CHECK_STR(jv_str(jv_get(out, "sha")), head);
	jv_free(out);
	/* b.txt is still untracked: the same both ways after the commit */
	same_both_ways("status", ws);
}

static void
no_repository_and_node_down(void)
{
	char ws[256], app[300];
	struct sandbox sb = remote_sb(SB2);
	struct wsnode_ref ref = {.ws = "", .wn = wn, .sb = &sb};
	struct gitws_at at = {
	    .ws = "", .dial = wsnode_git_dial_ref, .arg = &ref};
	struct jv *out = NULL;
	struct err e = {0};

	workspace(agcfg.data_dir, SB2, ws, sizeof(ws), app, sizeof(app));
	sh("echo x >%s/x.txt && chown -R 1000:1000 %s", app, ws);
	CHECK(gitws_status_at(APP, &at, &out, &e) == GITWS_NOT_REPO);
	CHECK(out == NULL);
	/* a sandbox the node has no workspace of */
	sb = remote_sb("01HNOSUCHSANDBOX0000000000");
	e = (struct err){0};
	CHECK(gitws_diff_at(APP, &at, &out, &e) == -1);
	CHECK(e.status == 404);
	sb = remote_sb(SB2);
	node_row("down");
	e = (struct err){0};
	CHECK(gitws_status_at(APP, &at, &out, &e) == -1);
	CHECK(e.status == 503);
	CHECK_STR(e.code, "node_down");
	node_row("ready");
}

/* One frame of the helper's protocol: a u32 length (network order). */
static int
frame_send(int fd, const char *p)
{
	uint32_t n = htonl((uint32_t)strlen(p));

	return write(fd, &n, 4) == 4 &&
	               write(fd, p, strlen(p)) == (ssize_t)strlen(p)
	           ? 0
	           : -1;
}

/* Reads everything until EOF (20 s at most) into b; its length. */
static size_t
read_to_end(int fd, char *b, size_t cap)
{
	size_t len = 0;

	for (;;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&pf, 1, 20000) != 1)
			break;
		r = read(fd, b + len, cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == cap)
			break;
	}
	return len;
}

/* A frame the control plane would never send: the agent refuses it with
 * an error frame and ends the stream; nothing is pushed. */
static void
a_push_frame_is_refused(void)
{
	struct sandbox sb = remote_sb(SB);
	const char *bad[] = {
	    "{\"op\":\"push\",\"url\":\"https://example.com/x.git\"}",
	    "{\"op\":\"clone\",\"url\":\"https://example.com/x.git\"}",
	    "{\"op\":\"session\",\"key\":\"x\",\"ws\":\"/\"}", "not json"};
	struct err e = {0};
	char b[4096], perr[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jv *out;
		uint32_t n = 0;
		size_t len;
		int fd = -1;

		CHECK(wsnode_git_dial(wn, &sb, &fd, &e) == 0);
		CHECK(frame_send(fd, bad[i]) == 0);
		/* one error frame, then the end of the stream (a status
		 * sent after it is never read) */
		(void)frame_send(fd, "{\"op\":\"status\"}");
		len = read_to_end(fd, b, sizeof(b));
		CHECK(len > 4);
		if (len > 4)
			memcpy(&n, b, 4);
		CHECK(ntohl(n) == len - 4);
		out = jv_parse(b + 4, len > 4 ? len - 4 : 0, 8, perr,
		               sizeof(perr));
		CHECK(jv_int(jv_get(jv_get(out, "error"), "status")) == 400);
		CHECK(strstr(jv_str(jv_get(jv_get(out, "error"), "message"))
		                 ?: "",
		             "status, diff and commit only") != NULL);
		close(fd);
		jv_free(out);
	}
}

static void
rows(void)
{
	struct app a = {0};
	struct sandbox row = {0};

	snprintf(a.id, sizeof(a.id), "%s", APP);
	snprintf(a.owner, sizeof(a.owner), "alice");
	snprintf(a.name, sizeof(a.name), "g");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	CHECK(store_app_insert(store, &a) == 0);
	snprintf(row.app_id, sizeof(row.app_id), "%s", APP);
	snprintf(row.image, sizeof(row.image), "img:1");
	snprintf(row.idle_policy, sizeof(row.idle_policy), "sleep");
	row.status = SANDBOX_RUNNING;
	snprintf(row.id, sizeof(row.id), "%s", SB);
	CHECK(store_sandbox_insert(store, &row) == 0);
	CHECK(store_sandbox_set_node(store, SB, "n1") == 0);
	/* the local copy's app and sandbox */
	snprintf(a.id, sizeof(a.id), "%s", APP2);
	snprintf(a.name, sizeof(a.name), "g2");
	CHECK(store_app_insert(store, &a) == 0);
	snprintf(row.app_id, sizeof(row.app_id), "%s", APP2);
	snprintf(row.id, sizeof(row.id), "%s", SBLOC);
	CHECK(store_sandbox_insert(store, &row) == 0);
}

#define PKG                                                                    \
	"{\"scripts\":{\"dev\":\"next dev\",\"build\":\"next build\"},"        \
	"\"dependencies\":{\"next\":\"14.2.0\",\"react\":\"18.2.0\"}}"

static void
recipes_on_a_remote_app(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	char ws[256], app[300], lws[256], lapp[300];
	struct detection d;
	struct app a = {0};
	struct err e = {0};
	struct jv *r, *l;
	char sha[41] = "", *rs, *ls;
	bool written = false;
	struct buf b;
	bool eof;

	rows();
	snprintf(a.id, sizeof(a.id), "%s", APP);
	snprintf(ws, sizeof(ws), "%s/workspaces/%s", agcfg.data_dir, SB);
	snprintf(app, sizeof(app), "%s/workspace/app", ws);
	workspace(cpcfg.data_dir, SBLOC, lws, sizeof(lws), lapp, sizeof(lapp));
	sh("cd %s && echo '%s' >package.json && touch package-lock.json && "
	   "mkdir -p src/app && echo x >src/app/page.tsx && " GIT
	   "add -A && " GIT "commit -qm app && chown -R 1000:1000 %s",
	   app, PKG, ws);
	sh("cp -a %s/. %s/ && chown -R 1000:1000 %s", app, lapp, lws);
	r = recipeops_inspect(&c, SB, &e);
	l = recipeops_inspect(&c, SBLOC, &e);
	CHECK(r != NULL && l != NULL);
	rs = dump(jv_get(r, "detection"));
	ls = dump(jv_get(l, "detection"));
	if (strcmp(rs, ls) != 0)
		fprintf(stderr, "  remote %s\n  local  %s\n", rs, ls);
	CHECK(strcmp(rs, ls) == 0);
	CHECK(strstr(rs, "\"nextjs\"") != NULL);
	free(rs);
	free(ls);
	jv_free(r);
	jv_free(l);
	CHECK(recipeops_apply(&c, &a, SB, NULL, false, &d, &written, sha, &e) ==
	      0);
	if (e.status)
		fprintf(stderr, "  apply: %s\n", e.msg);
	CHECK(written);
	CHECK(strlen(sha) == 40);
	/* the manifest is on the node, committed there */
	struct sandbox sb = remote_sb(SB);
	buf_init(&b, 1u << 16);
	CHECK(wsnode_read(wn, &sb, "workspace/app/sandbox.yaml", 0, 1u << 16,
	                  &b, &eof, &e) == 0);
	CHECK(b.len > strlen(RECIPE_MANIFEST_MARK) &&
	      memcmp(b.data, RECIPE_MANIFEST_MARK,
	             strlen(RECIPE_MANIFEST_MARK)) == 0);
	buf_release(&b);
	CHECK(sh("cd %s && test \"$(" GIT "rev-parse HEAD)\" = %s && " GIT
	         "diff --quiet HEAD -- sandbox.yaml",
	         app, sha) == 0);
	snprintf(lapp, sizeof(lapp), "%s/workspace/app/sandbox.yaml", lws);
	CHECK(access(lapp, F_OK) != 0); /* nothing written here */
	/* the user's own manifest, past the shadow's 64 files: still seen,
	 * so a detection refuses to replace it */
	sh("cd %s && for i in $(seq 10 80); do echo $i >f$i.txt; done && "
	   "printf 'web:\n  command: node s.js\n' >sandbox.yaml && "
	   "chown -R 1000:1000 %s",
	   app, ws);
	e = (struct err){0};
	CHECK(recipeops_apply(&c, &a, SB, NULL, false, &d, &written, sha, &e) ==
	      -1);
	CHECK_STR(e.code, "manifest_is_users");
	e = (struct err){0};
	r = recipeops_inspect(&c, SB, &e);
	CHECK(jv_is_true(jv_get(jv_get(r, "existing_manifest"), "present")));
	jv_free(r);
	/* one larger than the shadow takes: refused as locally, kept */
	sh("cd %s && head -c 300000 /dev/zero | tr '\\0' '#' >sandbox.yaml && "
	   "chown 1000:1000 sandbox.yaml",
	   app);
	e = (struct err){0};
	CHECK(recipeops_apply(&c, &a, SB, NULL, false, &d, &written, sha, &e) ==
	      -1);
	CHECK(e.status == 413);
	CHECK(sh("test $(stat -c %%s %s/sandbox.yaml) = 300000", app) == 0);
}

static const struct unit_test tests[] = {
    {"status, diff, commit through the node, as locally",
     status_diff_commit_through_the_node},
    {"no repository, no workspace, a node down", no_repository_and_node_down},
    {"a push, a clone or a second session frame is refused by the agent",
     a_push_frame_is_refused},
    {"recipes: inspect and apply on a remote app", recipes_on_a_remote_app},
};

int
main(int argc, char **argv)
{
	int rc;

	/* The agent's git helper is this binary (/proc/self/exe). */
	if (argc == 2 && strcmp(argv[1], "git-helper") == 0)
		return gitws_helper_main();
	if (geteuid() != 0) {
		printf(
		    "ok - wsnode git: skipped (the git helper needs root)\n");
		return 0;
	}
	wsnode_fixture_setup("/tmp/sbx-wsgit-XXXXXX");
	/* the helper, as the sandbox user, passes through root */
	if (chmod(root, 0755) < 0)
		abort();
	rc = UNIT_RUN("wsnode git", tests);
	wsnode_fixture_teardown();
	return rc;
}
