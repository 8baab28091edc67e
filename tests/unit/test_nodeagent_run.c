/*
 * `sandboxd node run`, the real process (build/sandboxd, or
 * SANDBOXD_BIN), in a network namespace of the test's own (so its egress
 * table and listeners touch nothing of the host's), against this
 * machine's engine: its state written as a join leaves it, it makes the
 * config-only network (removed at the end), installs the egress table
 * with the cluster sets, serves facts to the control plane over
 * nodelink, takes the cluster list a heartbeat sends, and exits 0 on
 * SIGTERM.  Skipped (said so) without root, the binary or the engine.
 */
#include <sched.h>

#include "agent_fixture.h"

static pid_t child = -1;
static char netname[64];

/* A command to its end; its exit status (-1 when it could not run). */
static int
run(char *const argv[], char *out, size_t len)
{
	int p[2], st;
	size_t n = 0;
	ssize_t k;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (out && n + 1 < len && (k = read(p[0], out + n, len - 1 - n)) > 0)
		n += (size_t)k;
	if (out)
		out[n] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
test_run(void)
{
	const char *bin =
	    getenv("SANDBOXD_BIN") ? getenv("SANDBOXD_BIN") : "build/sandboxd";
	char text[512], env_dir[300], env_port[64], out[4096];
	char *const lo[] = {"ip", "link", "set", "lo", "up", NULL};
	struct jv *r, *ans = NULL;
	struct err e = {0};
	unsigned port = 20000 + (unsigned)getpid() % 20000;
	int st;

	snprintf(netname, sizeof(netname), "sbxagent-run-%d", (int)getpid());
	snprintf(text, sizeof(text), "{\"control\":\"%s\",\"name\":\"n1\"}",
	         cp_addr);
	unit_put(nodedir, "node.json", text);
	snprintf(text, sizeof(text),
	         "{\"name\":\"%s\",\"subnet\":\"10.254.16.0/24\","
	         "\"gateway\":\"10.254.16.1\",\"bridge\":\"sbxagt%d\","
	         "\"instance\":\"check\",\"proxy_port\":%u,"
	         "\"cluster\":[\"192.0.2.10\"]}",
	         netname, (int)getpid() % 100000, port + 1);
	unit_put(nodedir, "network.json", text);
	if ((child = fork()) == 0) {
		snprintf(env_dir, sizeof(env_dir), "SANDBOXD_DATA_DIR=%s/data",
		         root);
		snprintf(env_port, sizeof(env_port), "SANDBOXD_NODE_PORT=%u",
		         port);
		putenv(env_dir);
		putenv(env_port);
		putenv("SANDBOXD_NODE_ADDR=127.0.0.1");
		putenv("SANDBOXD_ENV_FILE=/dev/null");
		execl(bin, bin, "node", "run", (char *)NULL);
		_exit(127);
	}
	snprintf(ag_addr, sizeof(ag_addr), "127.0.0.1:%u", port);
	for (int i = 0; i < 100; i++) {
		r = req_of("facts", NULL, NULL);
		struct jv *cl = jv_arr();
		jv_push(cl, jv_new_str("192.0.2.20"));
		jv_set(r, "cluster", cl);
		if ((ans = call(r, &e)) != NULL)
			break;
		usleep(100 * 1000);
	}
	CHECK(ans != NULL);
	CHECK(ans && strcmp(jv_str(jv_get(ans, "name")) ?: "", "n1") == 0);
	CHECK(ans && strcmp(jv_str(jv_get(ans, "subnet")) ?: "",
	                    "10.254.16.0/24") == 0);
	jv_free(ans);
	(void)lo;
	/* The network's config-only half on the engine, the rules here. */
	snprintf(text, sizeof(text), "%s-cfg", netname);
	char *const insp[] = {"docker",
	                      "network",
	                      "inspect",
	                      "-f",
	                      "{{.ConfigOnly}} {{range .IPAM.Config}}"
	                      "{{.Subnet}}{{end}}",
	                      text,
	                      NULL};
	CHECK(run(insp, out, sizeof(out)) == 0);
	CHECK(strstr(out, "true 10.254.16.0/24") != NULL);
	char *const nft[] = {"nft", "list", "ruleset", NULL};
	CHECK(run(nft, out, sizeof(out)) == 0);
	CHECK(strstr(out, "sbxagt") != NULL);
	CHECK(strstr(out, "192.0.2.20") != NULL); /* the heartbeat's list */
	CHECK(strstr(out, "127.0.0.1") != NULL);  /* the control plane */
	kill(child, SIGTERM);
	CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);
	child = -1;
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"node run: network, rules, facts, SIGTERM", test_run},
	};
	char *const lo[] = {"ip", "link", "set", "lo", "up", NULL};
	char msg[DOCKER_MSG_LEN], text[80];
	const char *bin =
	    getenv("SANDBOXD_BIN") ? getenv("SANDBOXD_BIN") : "build/sandboxd";
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (geteuid() != 0 || access(bin, X_OK) != 0 ||
	    unshare(CLONE_NEWNET) < 0 || run(lo, NULL, 0) != 0) {
		printf("# skipped: needs root, %s and a network namespace\n",
		       bin);
		return 0;
	}
	setup();
	if (!engine) {
		printf("# skipped: no engine\n");
		teardown();
		return 0;
	}
	rc = UNIT_RUN("nodeagent_run", tests);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	snprintf(text, sizeof(text), "%s-cfg", netname);
	(void)docker_network_remove(ag.d, text, msg);
	teardown();
	return rc;
}
