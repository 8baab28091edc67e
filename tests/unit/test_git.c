/*
 * Unit tests of the git module on temporary repositories made with the
 * git CLI: status, diff and commit, and the tricks a hostile workspace
 * would play (a hook, a filter, a .git file, a symlink out, unsafe
 * config).  Run as root, the workspace belongs to uid 1000 like a real
 * one, and what the module writes must too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"
#include "unit.h"

static char ws[64];
static char app[128];

#define GIT "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main "

/* A fresh workspace whose app dir is a repository with one commit. */
static void
fresh(bool with_commit)
{
	if (ws[0])
		sh("rm -rf %s", ws);
	snprintf(ws, sizeof(ws), "/tmp/sandboxd-git-XXXXXX");
	if (mkdtemp(ws) == NULL)
		abort();
	snprintf(app, sizeof(app), "%s/workspace/app", ws);
	sh("mkdir -p %s && cd %s && " GIT "init -q . && echo one >a.txt", app,
	   app);
	if (with_commit)
		sh("cd %s && " GIT "add -A && " GIT "commit -qm first", app);
	sh("chmod 755 %s && chown -R 1000:1000 %s 2>/dev/null", ws, ws);
}

static struct jv *
call(int (*fn)(const char *, const char *, struct jv **, struct err *),
     int want)
{
	struct jv *out = NULL;
	struct err e = {0};
	int rc = fn("app", ws, &out, &e);

	if (rc != want)
		fprintf(stderr, "  rc %d (want %d): %s %s\n", rc, want, e.code,
		        e.msg);
	CHECK(rc == want);
	return out;
}

static struct jv *
commit_paths(const char *msg, const char *paths_json, int want, struct err *e)
{
	char perr[64];
	struct jv *out = NULL,
	          *paths = paths_json ? jv_parse(paths_json, strlen(paths_json),
	                                         4, perr, sizeof(perr))
	                              : NULL;
	int rc = gitws_commit("app", ws, msg, paths, &out, e);

	jv_free(paths);
	if (rc != want)
		fprintf(stderr, "  commit rc %d (want %d): %s %s\n", rc, want,
		        e->code, e->msg);
	CHECK(rc == want);
	return out;
}

static struct jv *
commit(const char *msg, int want, struct err *e)
{
	struct jv *out = NULL;
	int rc = gitws_commit("app", ws, msg, NULL, &out, e);

	if (rc != want)
		fprintf(stderr, "  commit rc %d (want %d): %s %s\n", rc, want,
		        e->code, e->msg);
	CHECK(rc == want);
	return out;
}

static const char *
str(struct jv *o, const char *k)
{
	return jv_str(jv_get(o, k));
}

static char *
dump(struct jv *o)
{
	struct buf b;

	buf_init(&b, 0);
	jv_dump(o, &b);
	return b.data;
}

static void
no_repo_is_not_an_error(void)
{
	fresh(false);
	sh("rm -rf %s/.git", app);
	jv_free(call(gitws_status, GITWS_NOT_REPO));
	sh("rm -rf %s/workspace", ws);
	jv_free(call(gitws_diff, GITWS_NOT_REPO));
}

static void
status_lists_changes(void)
{
	struct jv *o;
	char *t;

	fresh(true);
	o = call(gitws_status, 0);
	CHECK(jv_is_true(jv_get(o, "clean")));
	CHECK_STR(str(o, "branch"), "main");
	CHECK(strlen(str(o, "head_sha")) == 40);
	jv_free(o);
	sh("cd %s && echo two >>a.txt && mkdir -p d && echo n >d/new.txt", app);
	o = call(gitws_status, 0);
	t = dump(o);
	CHECK(!jv_is_true(jv_get(o, "clean")));
	CHECK(strstr(t, "{\"path\":\"a.txt\",\"status\":\"modified\","
	                "\"staged\":false}") != NULL);
	CHECK(strstr(t, "{\"path\":\"d/new.txt\",\"status\":\"untracked\","
	                "\"staged\":false}") != NULL);
	CHECK(strstr(t, "\"truncated\":false") != NULL);
	free(t);
	jv_free(o);
}

static void
diff_includes_untracked(void)
{
	struct jv *o;
	char *t;

	fresh(true);
	sh("cd %s && echo two >>a.txt && echo fresh >new.txt && "
	   "printf '\\0\\1' >bin.dat",
	   app);
	o = call(gitws_diff, 0);
	CHECK(strstr(str(o, "diff"), "+two") != NULL);
	CHECK(strstr(str(o, "diff"), "+fresh") != NULL);
	t = dump(o);
	CHECK(strstr(t, "{\"path\":\"a.txt\",\"additions\":1,\"deletions\":0,"
	                "\"binary\":false}") != NULL);
	CHECK(strstr(t, "{\"path\":\"bin.dat\",\"additions\":0,"
	                "\"deletions\":0,\"binary\":true}") != NULL);
	free(t);
	jv_free(o);
}

static void
commit_then_nothing_to_commit(void)
{
	struct err e = {0};
	struct jv *o;
	char *t;

	fresh(true);
	sh("cd %s && echo two >>a.txt && echo x >n.txt && echo ign >.gitignore "
	   "&& echo i >ign",
	   app);
	o = commit("second", 0, &e);
	CHECK(jv_is_true(jv_get(o, "committed")));
	CHECK_STR(str(o, "branch"), "main");
	t = dump(o);
	CHECK(strstr(t, "\"files_committed\":[\".gitignore\",\"a.txt\","
	                "\"n.txt\"]") != NULL);
	free(t);
	jv_free(o);
	o = commit("again", 0, &e);
	CHECK(!jv_is_true(jv_get(o, "committed")));
	CHECK_STR(str(o, "reason"), "no_changes");
	jv_free(o);
	CHECK(sh("cd %s && git fsck >/dev/null && test \"$(git log "
	         "--format=%%an:%%s -1)\" = sandboxd:second && "
	         "! git ls-files | grep -qx ign",
	         app) == 0);
	if (geteuid() == 0)
		CHECK(sh("find %s/.git ! -uid 1000 | grep . && exit 1; exit 0",
		         app) == 0);
}

/*
 * Only the named paths (a file, a directory, a deletion) are committed;
 * what was staged for another path stays staged and out of the commit;
 * a path with no change, outside, or in .git is refused naming it.
 */
static void
commit_of_chosen_paths(void)
{
	struct err e = {0};
	struct jv *o;
	char *t;

	fresh(true);
	sh("cd %s && echo b >b.txt && " GIT "add b.txt && " GIT "commit -qm b "
	   "&& mkdir -p d/e && echo x >d/e/x.txt && echo y >y.txt && "
	   "echo s >s.txt && " GIT "add s.txt && rm b.txt && echo two >>a.txt "
	   "&& echo ign >.gitignore && echo i >ign && chown -R 1000:1000 %s",
	   app, ws);
	o = commit_paths("chosen", "[\"d\",\"b.txt\",\"a.txt\"]", 0, &e);
	CHECK(jv_is_true(jv_get(o, "committed")));
	t = dump(o);
	CHECK(strstr(t, "\"files_committed\":[\"a.txt\",\"b.txt\","
	                "\"d/e/x.txt\"]") != NULL);
	free(t);
	jv_free(o);
	CHECK(sh("cd %s && test \"$(git show --format= --name-only HEAD | "
	         "sort | tr '\\n' ' ')\" = 'a.txt b.txt d/e/x.txt ' && "
	         "git diff --cached --name-only | grep -qx s.txt && "
	         "git status --porcelain | grep -q '^?? y.txt' && "
	         "! git status --porcelain | grep -q 'a.txt\\|b.txt\\|d/'",
	         app) == 0);
	e = (struct err){0};
	jv_free(commit_paths("none", "[\"a.txt\"]", -1, &e));
	CHECK(e.status == 400 && strstr(e.msg, "a.txt") != NULL);
	e = (struct err){0};
	jv_free(commit_paths("ign", "[\"ign\"]", -1, &e));
	CHECK(e.status == 400 && strstr(e.msg, "ign") != NULL);
	e = (struct err){0};
	jv_free(commit_paths("git", "[\".git/config\"]", -1, &e));
	CHECK(e.status == 400 && strstr(e.msg, ".git") != NULL);
	e = (struct err){0};
	jv_free(commit_paths("up", "[\"y.txt\",\"../etc\"]", -1, &e));
	CHECK(e.status == 400 && strstr(e.msg, "../etc") != NULL);
	/* a refused commit commits nothing and stages nothing */
	CHECK(sh("cd %s && test \"$(git log --format=%%s -1)\" = chosen && "
	         "git status --porcelain | grep -q '^?? y.txt'",
	         app) == 0);
}

static void
first_commit_has_no_parent(void)
{
	struct err e = {0};
	struct jv *o;

	fresh(false);
	o = call(gitws_status, 0);
	CHECK(jv_type(jv_get(o, "head_sha")) == JV_NULL);
	CHECK_STR(str(o, "branch"), "main");
	jv_free(o);
	o = commit("first", 0, &e);
	CHECK(jv_is_true(jv_get(o, "committed")));
	jv_free(o);
	CHECK(sh("cd %s && test \"$(git rev-list --count HEAD)\" = 1 && "
	         "git show HEAD:a.txt | grep -qx one",
	         app) == 0);
}

static void
hooks_and_filters_never_run(void)
{
	struct err e = {0};
	struct jv *o;

	fresh(true);
	sh("cd %s && printf '#!/bin/sh\\ntouch %s/hooked\\n' "
	   ">.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && "
	   "cp .git/hooks/pre-commit .git/hooks/post-commit && "
	   "echo '*.txt filter=x diff=x' >.gitattributes && echo b >>a.txt",
	   app, ws);
	o = commit("hooked?", 0, &e);
	CHECK(jv_is_true(jv_get(o, "committed")));
	jv_free(o);
	CHECK(access("/tmp/sandboxd-git-hooked", F_OK) != 0);
	CHECK(sh("test ! -e %s/hooked", ws) == 0);
	/* A filter or diff driver in the config refuses the repository. */
	sh("cd %s && git config filter.x.clean 'touch %s/filtered'", app, ws);
	jv_free(commit("filtered?", -1, &e));
	CHECK_STR(e.code, "unsafe_repo_config");
	CHECK(e.status == 409);
	CHECK(strstr(e.msg, "filter.x.clean") != NULL);
	CHECK(sh("test ! -e %s/filtered", ws) == 0);
	sh("cd %s && git config --unset filter.x.clean && "
	   "git config diff.x.command 'touch %s/filtered'",
	   app, ws);
	jv_free(call(gitws_diff, -1));
	CHECK(sh("test ! -e %s/filtered", ws) == 0);
}

static void
unsafe_config_is_refused(void)
{
	static const char *const keys[] = {
	    "core.worktree /etc",        "core.sshCommand evil",
	    "core.hooksPath /tmp",       "core.fsmonitor evil",
	    "include.path /etc/passwd",  "includeIf.gitdir:/.path /x",
	    "url.evil.insteadOf https:", "url.evil.pushInsteadOf https:",
	    "http.proxy http://x",       "http.https://h.proxy http://x"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct err e = {0};
		struct jv *out = NULL;

		fresh(true);
		sh("cd %s && git config %s", app, keys[i]);
		CHECK(gitws_status("app", ws, &out, &e) == -1);
		if (strcmp(e.code, "unsafe_repo_config") != 0)
			fprintf(stderr, "  %s: %s %s\n", keys[i], e.code,
			        e.msg);
		CHECK_STR(e.code, "unsafe_repo_config");
		jv_free(out);
	}
}

static void
git_file_pointing_elsewhere_is_refused(void)
{
	struct err e = {0};
	struct jv *out = NULL;

	fresh(true);
	sh("mv %s/.git %s/elsewhere && echo 'gitdir: %s/elsewhere' "
	   ">%s/.git",
	   app, ws, ws, app);
	CHECK(gitws_status("app", ws, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo");
	CHECK(e.status == 409);
	CHECK(strstr(e.msg, ".git file") != NULL);
	sh("rm %s/.git && ln -s %s/elsewhere %s/.git", app, ws, app);
	e = (struct err){0};
	CHECK(gitws_commit("app", ws, "x", NULL, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo");
	/* Nor may the app dir itself be a link. */
	sh("mv %s %s/real && ln -s %s/real %s", app, ws, ws, app);
	e = (struct err){0};
	CHECK(gitws_status("app", ws, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo");
}

static void
symlink_is_committed_as_a_link(void)
{
	struct err e = {0};
	struct jv *o;

	fresh(true);
	sh("cd %s && ln -s /etc/passwd pw && ln -s /etc etcdir", app);
	o = call(gitws_diff, 0);
	CHECK(strstr(str(o, "diff"), "root:") == NULL);
	CHECK(strstr(str(o, "diff"), "+/etc/passwd") != NULL);
	jv_free(o);
	o = commit("links", 0, &e);
	CHECK(jv_is_true(jv_get(o, "committed")));
	jv_free(o);
	CHECK(sh("cd %s && git ls-tree HEAD pw | grep -q '^120000' && "
	         "test \"$(git cat-file -p HEAD:pw)\" = /etc/passwd && "
	         "git ls-tree HEAD etcdir | grep -q '^120000' && "
	         "! git ls-tree -r HEAD | grep -q etcdir/",
	         app) == 0);
}

static void
host_check_refuses_non_public(void)
{
	static const char *const blocked[] = {
	    "127.0.0.1",         "10.1.2.3",
	    "169.254.169.254",   "172.16.0.1",
	    "172.31.255.255",    "192.168.1.1",
	    "100.64.0.1",        "0.0.0.0",
	    "224.0.0.1",         "[::1]",
	    "[fe80::1]",         "[fc00::1]",
	    "[::ffff:10.0.0.1]", "[64:ff9b::7f00:1]",
	    "127.0.0.1:8443"};
	static const char *const public[] = {"8.8.8.8", "1.1.1.1:443",
	                                     "172.32.0.1", "[2606:4700::1]"};
	char url[128];
	struct jv *out;

	for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++) {
		snprintf(url, sizeof(url), "https://%s/r.git", blocked[i]);
		out = NULL;
		CHECK(gitws_host_check("pushed", url, false, false, &out) == 0);
		CHECK_STR(str(out, "reason"), "blocked_host");
		CHECK(strstr(str(out, "message"),
		             "SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS") != NULL);
		jv_free(out);
		out = NULL;
		CHECK(gitws_host_check("pushed", url, true, false, &out) == 1);
		CHECK(out == NULL);
	}
	for (size_t i = 0; i < sizeof(public) / sizeof(public[0]); i++) {
		snprintf(url, sizeof(url), "https://%s/r.git", public[i]);
		out = NULL;
		CHECK(gitws_host_check("pushed", url, false, false, &out) == 1);
	}
	/* the tests' knob lets loopback through, nothing else */
	out = NULL;
	CHECK(gitws_host_check("pushed", "http://127.0.0.1:9/r", false, true,
	                       &out) == 1);
	CHECK(gitws_host_check("pushed", "http://[::1]:9/r", false, true,
	                       &out) == 1);
	CHECK(gitws_host_check("pushed", "http://10.0.0.1/r", false, true,
	                       &out) == 0);
	jv_free(out);
	out = NULL;
	CHECK(gitws_host_check("imported", "file:///etc", false, false, &out) ==
	      0);
	CHECK(!jv_is_true(jv_get(out, "imported")));
	jv_free(out);
}

static void
failures_never_hold_the_token(void)
{
	char out[128];
	struct jv *o;

	gitws_redact("user:tok@h tok tok!", "tok", out, sizeof(out));
	CHECK_STR(out, "user:[redacted]@h [redacted] [redacted]!");
	o = gitws_failure("imported", "auth_failed", "bad tok", "tok");
	CHECK_STR(str(o, "message"), "bad [redacted]");
	CHECK(jv_get(o, "imported") && !jv_is_true(jv_get(o, "imported")));
	jv_free(o);
}

/* A clone of a local bare repository into a fresh empty dir. */
static struct jv *
clone_local(const char *bare, const char *branch, uint64_t max)
{
	struct gitws_clone c = {.branch = branch, .max_bytes = max};
	char url[256], dir[128];
	struct err e = {0};
	struct jv *out = NULL;

	snprintf(url, sizeof(url), "file://%s", bare);
	c.r.url = url;
	snprintf(dir, sizeof(dir), "%s/clone", ws);
	sh("rm -rf %s && mkdir -p %s", dir, dir);
	CHECK(gitws_clone_here(dir, &c, &out, &e) == 0);
	return out;
}

static void
clone_is_bounded_and_branch_checked(void)
{
	char bare[128];
	struct jv *o;

	fresh(true);
	snprintf(bare, sizeof(bare), "%s/bare.git", ws);
	/* 8 MB of zeros: a tiny pack, a large tree */
	/* made by root beside the workspace (git refuses to serve a
	 * repository of another user) */
	sh("mkdir %s/src && cd %s/src && " GIT "init -q && echo one >a.txt && "
	   "head -c 8000000 /dev/zero >zeros.bin && " GIT "add -A && " GIT
	   "commit -qm zeros && " GIT "clone -q --bare . %s",
	   ws, ws, bare);
	o = clone_local(bare, NULL, 1u << 20);
	CHECK_STR(str(o, "reason"), "too_large");
	CHECK(sh("test ! -e %s/clone/zeros.bin", ws) == 0);
	jv_free(o);
	o = clone_local(bare, NULL, 64u << 20);
	CHECK(jv_is_true(jv_get(o, "imported")));
	CHECK_STR(str(o, "branch"), "main");
	CHECK(sh("test -s %s/clone/zeros.bin && test -s %s/clone/a.txt", ws,
	         ws) == 0);
	jv_free(o);
	o = clone_local(bare, "nope", 0);
	CHECK_STR(str(o, "reason"), "branch_not_found");
	CHECK(strstr(str(o, "message"), "nope") != NULL);
	jv_free(o);
	/* an empty repository is an empty import on the named branch */
	sh("rm -rf %s && git init -q --bare %s", bare, bare);
	o = clone_local(bare, "trunk", 0);
	CHECK(jv_is_true(jv_get(o, "imported")));
	CHECK(jv_is_true(jv_get(o, "empty")));
	CHECK_STR(str(o, "branch"), "trunk");
	CHECK(sh("cd %s/clone && test \"$(git symbolic-ref HEAD)\" = "
	         "refs/heads/trunk && git config remote.origin.url | grep -q "
	         "bare.git",
	         ws) == 0);
	jv_free(o);
	/* a non-empty target is refused */
	o = clone_local(bare, NULL, 0);
	jv_free(o);
	{
		struct gitws_clone c = {.r.url = "file:///nonexistent"};
		struct err e = {0};
		char dir[128];

		snprintf(dir, sizeof(dir), "%s/clone", ws);
		o = NULL;
		CHECK(gitws_clone_here(dir, &c, &o, &e) == 0);
		CHECK_STR(str(o, "reason"), "not_empty");
		jv_free(o);
	}
}

static void
a_cached_repository_is_checked_again(void)
{
	struct err e = {0};
	struct jv *out = NULL;

	fresh(true);
	jv_free(call(gitws_status, 0)); /* now open in the cache */
	jv_free(call(gitws_status, 0));
	sh("cd %s && git config core.hooksPath /tmp", app);
	CHECK(gitws_status("app", ws, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo_config");
	sh("cd %s && git config --unset core.hooksPath", app);
	jv_free(call(gitws_status, 0));
	/* .git swapped for a link to another repository */
	sh("mkdir -p %s/other && cp -a %s/.git %s/other/ && rm -rf %s/.git && "
	   "ln -s %s/other/.git %s/.git",
	   ws, app, ws, app, ws, app);
	e = (struct err){0};
	CHECK(gitws_status("app", ws, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo");
	/* the same key in another workspace is another repository */
	fresh(false);
	out = call(gitws_status, 0);
	CHECK(jv_type(jv_get(out, "head_sha")) == JV_NULL);
	jv_free(out);
	gitws_cache_trim();
}

/*
 * Another repository outside the workspace, and this one's HEAD and
 * object files made symlinks into it: the helper sees only the
 * workspace, so its commit is not found and nothing of it is shown; a
 * symlinked objects/ entry or ref is refused by name.
 */
static void
links_below_git_reach_nothing_outside(void)
{
	char other[64], sha[64] = "";
	struct jv *out = NULL;
	struct err e = {0};
	FILE *f;
	int rc;

	snprintf(other, sizeof(other), "/tmp/sandboxd-git-other-XXXXXX");
	if (mkdtemp(other) == NULL)
		abort();
	sh("cd %s && " GIT "init -q . && echo other-secret >secret.txt && " GIT
	   "add -A && " GIT "commit -qm other && git rev-parse HEAD >sha && "
	   "chown -R 1000:1000 %s",
	   other, other);
	snprintf(app, sizeof(app), "%s/sha", other);
	if ((f = fopen(app, "r")) != NULL) {
		if (fgets(sha, sizeof(sha), f) == NULL)
			sha[0] = '\0';
		fclose(f);
	}
	sha[strcspn(sha, "\n")] = '\0';
	CHECK(strlen(sha) == 40);
	fresh(true);
	sh("cd %s/.git/objects && cd %s/.git/objects && for o in $(find . "
	   "-path ./info -prune -o -path ./pack -prune -o -type f -print); do "
	   "mkdir -p %s/.git/objects/$(dirname $o) && ln -sf "
	   "%s/.git/objects/$o "
	   "%s/.git/objects/$o; done && echo %s >%s/.git/refs/heads/main",
	   app, other, app, other, app, sha, app);
	rc = gitws_diff("app", ws, &out, &e);
	if (rc == 0) {
		char *d = dump(out);

		CHECK(strstr(d, "other-secret") == NULL);
		CHECK(strstr(d, "secret.txt") == NULL);
		free(d);
		jv_free(out);
	} else {
		CHECK(strstr(e.msg, "other-secret") == NULL);
	}
	/* an objects/ entry or a ref that is a link: refused by name */
	fresh(true);
	sh("cd %s/.git && ln -s %s/.git/objects/info objects/zz", app, other);
	e = (struct err){0};
	CHECK(gitws_status("app", ws, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo");
	CHECK(strstr(e.msg, "objects/zz") != NULL);
	sh("rm %s/.git/objects/zz && ln -s %s/.git/refs/heads/main "
	   "%s/.git/refs/heads/other",
	   app, other, app);
	e = (struct err){0};
	CHECK(gitws_commit("app", ws, "x", NULL, &out, &e) == -1);
	CHECK_STR(e.code, "unsafe_repo");
	CHECK(strstr(e.msg, "refs/heads/other") != NULL);
	sh("rm -rf %s", other);
}

static const struct unit_test tests[] = {
    {"links below .git reach nothing outside",
     links_below_git_reach_nothing_outside},
    {"a cached repository is checked again",
     a_cached_repository_is_checked_again},
    {"the host check refuses non-public addresses",
     host_check_refuses_non_public},
    {"failures never hold the token", failures_never_hold_the_token},
    {"a clone is bounded and its branch checked",
     clone_is_bounded_and_branch_checked},
    {"no repository is not an error", no_repo_is_not_an_error},
    {"status lists changes", status_lists_changes},
    {"diff includes untracked files", diff_includes_untracked},
    {"commit, then nothing to commit", commit_then_nothing_to_commit},
    {"a commit of chosen paths only", commit_of_chosen_paths},
    {"a first commit has no parent", first_commit_has_no_parent},
    {"hooks and filters never run", hooks_and_filters_never_run},
    {"unsafe config is refused", unsafe_config_is_refused},
    {"a .git file pointing elsewhere is refused",
     git_file_pointing_elsewhere_is_refused},
    {"a symlink is committed as a link", symlink_is_committed_as_a_link},
};

int
main(int argc, char **argv)
{
	int rc;

	/* The module runs its work in a helper: this binary, so run as one. */
	if (argc == 2 && strcmp(argv[1], "git-helper") == 0)
		return gitws_helper_main();

	/* The git CLI would refuse the uid-1000 repositories we make as root.
	 */
	setenv("GIT_CONFIG_COUNT", "1", 1);
	setenv("GIT_CONFIG_KEY_0", "safe.directory", 1);
	setenv("GIT_CONFIG_VALUE_0", "*", 1);
	rc = UNIT_RUN("git", tests);

	if (ws[0])
		sh("rm -rf %s", ws);
	return rc;
}
