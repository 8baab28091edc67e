/*
 * A remote sandbox's workspace staged on the control plane (wsnode_stage)
 * and what uses the stage, against a real node agent in this process
 * (mutual TLS on loopback, its own data directory: wsnode_fixture.h):
 * the stage has a local workspace's layout and owners, .git and no
 * dependency tree; a git push runs from it, in the confined helper, to a
 * real git server (tests/git-server) with the token, which never reaches
 * the node; a publish's source copy is made from one (dependency trees
 * included) and the stage is gone afterwards; the seeded marker and the
 * install key of a remote sandbox are the node's.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <unistd.h>

#include "git/git.h"
#include "lib/clock.h"
#include "publish/internal.h"
#include "wsnode_fixture.h"

#define SB "01HWSNODEFETCHUSE000000001"
#define GIT                                                                    \
	"git -c safe.directory='*' -c user.name=t -c user.email=t@t -c "       \
	"init.defaultBranch=main "
#define TOKEN "ghp-unit-fetchuse-7f3a91"
#define KEY   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char nodews[256], nodeapp[300];

/* The node's workspace: an app with a repository of one commit, a
 * dependency tree and a sandbox.yaml that says how to publish it, all
 * the sandbox user's. */
static void
node_workspace(void)
{
	snprintf(nodews, sizeof(nodews), "%s/workspaces/%s", agcfg.data_dir,
	         SB);
	snprintf(nodeapp, sizeof(nodeapp), "%s/workspace/app", nodews);
	if (workspace_create(agcfg.data_dir, SB) < 0)
		abort();
	sh("mkdir -p %s/node_modules/dep && cd %s && " GIT "init -q . && "
	   "echo one >a.txt && echo 'module.exports=1' "
	   ">node_modules/dep/index.js && echo node_modules >.gitignore && "
	   "printf 'publish:\\n  output: .\\n' >sandbox.yaml && " GIT
	   "add -A && " GIT "commit -qm first && chown -R 1000:1000 %s",
	   nodeapp, nodeapp, nodews);
}

/* Entries of the control plane's stage directory (state/wsshadow). */
static int
staged_count(void)
{
	char cmd[512], line[64] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd),
	         "ls -A %s/state/wsshadow 2>/dev/null | wc -l", cpcfg.data_dir);
	f = popen(cmd, "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	if (f)
		pclose(f);
	return atoi(line);
}

/* A push's stage: no dependency tree. */
static void
stage_is_a_local_workspace(void)
{
	struct sandbox sb = remote_sb(SB), local = {0};
	struct err e = {0};
	char path[512], app[600];
	struct stat st;
	int fd;

	node_workspace();
	fd = wsnode_stage(wn, &sb, true, path, sizeof(path), &e);
	if (fd < 0)
		fprintf(stderr, "  stage: %s\n", e.msg);
	CHECK(fd >= 0);
	snprintf(app, sizeof(app), "%s/workspace/app", path);
	/* a local workspace's root: the sandbox user's, private */
	CHECK(stat(path, &st) == 0 && st.st_uid == WORKSPACE_UID &&
	      (st.st_mode & 0777) == 0700);
	CHECK(stat(app, &st) == 0 && S_ISDIR(st.st_mode) &&
	      st.st_uid == WORKSPACE_UID);
	CHECK(exists(app, "a.txt") && exists(app, "sandbox.yaml"));
	CHECK(exists(app, ".git/HEAD") && exists(app, ".git/objects"));
	CHECK(!exists(app, "node_modules")); /* dependency trees left out */
	CHECK(exists(nodeapp, "node_modules/dep/index.js")); /* the node's */
	wsnode_shadow_drop(fd, path);
	CHECK(access(path, F_OK) != 0);
	/* a local sandbox has no stage: its workspace is here already */
	snprintf(local.id, sizeof(local.id), "%s", SB);
	e = (struct err){0};
	CHECK(wsnode_stage(wn, &local, true, path, sizeof(path), &e) == -1);
	CHECK(e.status == 400 && path[0] == '\0');
	CHECK(staged_count() == 0);
}

/* tests/git-server on port serving bare repositories under dir to
 * TOKEN; its pid, or -1 when it did not come up. */
static pid_t
git_server(const char *dir, int port)
{
	char portarg[16];
	pid_t pid;

	snprintf(portarg, sizeof(portarg), "%d", port);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execlp("python3", "python3", "tests/git-server/server.py",
		       "--root", dir, "--port", portarg, "--token", TOKEN,
		       (char *)NULL);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < 100; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_port = htons((uint16_t)port)};
		int s = socket(AF_INET, SOCK_STREAM, 0), ok;

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(s);
		if (ok)
			return pid;
		usleep(50 * 1000);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

/* The first line a shell command prints. */
static void
first_line(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");

	out[0] = '\0';
	if (f && fgets(out, (int)len, f) == NULL)
		out[0] = '\0';
	if (f)
		pclose(f);
	out[strcspn(out, "\n")] = '\0';
}

static void
push_from_the_stage(void)
{
	struct sandbox sb = remote_sb(SB);
	struct gitws_push p = {0};
	struct err e = {0};
	struct jv *out = NULL;
	char srv[512], url[128], host[64], path[512], cmd[1024];
	char want[64], got[64];
	int port = free_port(), fd, rc;
	pid_t pid;

	snprintf(srv, sizeof(srv), "%s/remote", root);
	sh("mkdir -p %s && git init -q --bare %s/app.git", srv, srv);
	pid = git_server(srv, port);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/app.git", port);
	snprintf(host, sizeof(host), "127.0.0.1:%d", port);
	p.r = (struct gitws_remote){.url = url,
	                            .cred_host = host,
	                            .username = "agent",
	                            .token = TOKEN,
	                            .timeout_s = 60,
	                            .allow_loopback = true};
	p.branch = "sandboxd/staged";
	fd = wsnode_stage(wn, &sb, true, path, sizeof(path), &e);
	CHECK(fd >= 0);
	rc = fd >= 0 ? gitws_push("fetchuse", path, &p, &out, &e) : -1;
	if (rc != 0)
		fprintf(stderr, "  push: %s %s\n", e.code, e.msg);
	CHECK(rc == 0 && jv_is_true(jv_get(out, "pushed")));
	if (out && !jv_is_true(jv_get(out, "pushed")))
		fprintf(stderr, "  push: %s: %s\n",
		        jv_str(jv_get(out, "reason")),
		        jv_str(jv_get(out, "message")));
	jv_free(out);
	wsnode_shadow_drop(fd, path);
	CHECK(staged_count() == 0);
	/* the branch is the node's HEAD */
	snprintf(cmd, sizeof(cmd), GIT "-C %s rev-parse HEAD", nodeapp);
	first_line(cmd, want, sizeof(want));
	snprintf(
	    cmd, sizeof(cmd),
	    "git --git-dir=%s/app.git rev-parse refs/heads/sandboxd/staged "
	    "2>/dev/null",
	    srv);
	first_line(cmd, got, sizeof(got));
	CHECK(want[0] && strcmp(want, got) == 0);
	/* the token stayed here: nothing of the node's holds it */
	CHECK(sh("grep -rqs %s %s", TOKEN, agcfg.data_dir) != 0);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* An app and its sandbox row, on node n1. */
static void
sandbox_row(void)
{
	struct app a = {0};
	struct sandbox sb = {0};

	ulid_new(a.id);
	snprintf(a.owner, sizeof(a.owner), "alice");
	snprintf(a.name, sizeof(a.name), "fetchuse");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	a.created_at = a.updated_at = clock_now();
	CHECK(store_app_insert(store, &a) == 0);
	snprintf(sb.id, sizeof(sb.id), "%s", SB);
	snprintf(sb.app_id, sizeof(sb.app_id), "%s", a.id);
	sb.status = SANDBOX_STOPPED;
	snprintf(sb.image, sizeof(sb.image), "img:1");
	snprintf(sb.idle_policy, sizeof(sb.idle_policy), "sleep");
	sb.ports[0] = 3000;
	sb.nports = 1;
	sb.created_at = sb.updated_at = clock_now();
	CHECK(store_sandbox_insert(store, &sb) == 0);
	CHECK(store_sandbox_set_node(store, sb.id, "n1") == 0);
}

static void
publish_copies_from_the_stage(void)
{
	struct core c = {.cfg = &cpcfg, .store = store, .wn = wn};
	struct sandbox sb = remote_sb(SB);
	struct release r = {0};
	struct err e = {0};
	char dir[256], app[320], key[65] = "x";
	struct stat st;

	sandbox_row();
	/* the node's marker, not a local path that does not exist */
	CHECK(!pub_seeded(&c, SB));
	CHECK(wsnode_write(wn, &sb, ".sandboxd/seeded", "", 0, 0644, &e) == 0);
	CHECK(pub_seeded(&c, SB));
	/* the copy brings the node's dependencies, and the node's key */
	pub_installed_key(&c, SB, key);
	CHECK_STR(key, "");
	CHECK(wsnode_write(wn, &sb, ".sandboxd/install.key", KEY, 64, 0644,
	                   &e) == 0);
	pub_installed_key(&c, SB, key);
	CHECK_STR(key, KEY);
	for (int i = 0; i < 2; i++) {
		snprintf(r.source, sizeof(r.source), "%s",
		         i ? "commit" : "files");
		snprintf(dir, sizeof(dir), "%s/release-%d", cpcfg.data_dir, i);
		CHECK(mkdir(dir, 0700) == 0);
		e = (struct err){0};
		CHECK(pub_source_copy(&c, &r, SB, dir, &e) == 0);
		if (e.status)
			fprintf(stderr, "  copy: %s\n", e.msg);
		snprintf(app, sizeof(app), "%s/work/workspace/app", dir);
		CHECK(stat(app, &st) == 0 && st.st_uid == WORKSPACE_UID);
		CHECK(exists(app, "a.txt") && exists(app, ".git/HEAD"));
		CHECK(exists(app, "node_modules/dep/index.js"));
		CHECK(staged_count() == 0); /* the stage is gone */
	}
	/* a node that cannot be reached fails the copy, and leaves none */
	snprintf(dir, sizeof(dir), "%s/release-down", cpcfg.data_dir);
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(store_sandbox_set_node(store, SB, "n2") == 0);
	e = (struct err){0};
	CHECK(pub_source_copy(&c, &r, SB, dir, &e) == -1);
	CHECK(e.status == 503 || e.status == 404);
	CHECK(staged_count() == 0);
	CHECK(store_sandbox_set_node(store, SB, "n1") == 0);
}

/* A stage left by a daemon that died mid-publish goes at the next start. */
static void
leftovers_swept_at_start(void)
{
	struct wsnode *again = NULL;

	sh("mkdir -p %s/state/wsshadow/left/workspace/app && touch "
	   "%s/state/wsshadow/left/workspace/app/x",
	   cpcfg.data_dir, cpcfg.data_dir);
	CHECK(staged_count() == 1);
	CHECK(wsnode_new(&again, &cpcfg, store) == 0);
	CHECK(staged_count() == 0);
	wsnode_free(again);
}

static const struct unit_test tests[] = {
    {"a stage has a local workspace's layout and owners",
     stage_is_a_local_workspace},
    {"a push runs from the stage, the token stays here", push_from_the_stage},
    {"a publish copies from the stage, then drops it",
     publish_copies_from_the_stage},
    {"what a previous run staged goes at the next start",
     leftovers_swept_at_start},
};

int
main(int argc, char **argv)
{
	int rc;

	/* The git module runs its work in a helper: this binary. */
	if (argc == 2 && strcmp(argv[1], "git-helper") == 0)
		return gitws_helper_main();
	wsnode_fixture_setup("/tmp/sbx-fetchuse-XXXXXX");
	rc = UNIT_RUN("wsnode fetchuse", tests);
	wsnode_fixture_teardown();
	return rc;
}
