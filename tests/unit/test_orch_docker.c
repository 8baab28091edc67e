/*
 * Unit tests of the orchestrator seam (orch/): orch_new picks the driver
 * SANDBOXD_ORCHESTRATOR names and refuses others; the docker driver
 * cannot move a sandbox, fills the edge's target from the container's
 * address with no preamble, forwards to the engine (one that is not
 * there is DOCKER_DOWN), and connects to a workspace's supervisor
 * socket, refusing one that is not a socket.  The driver against a
 * real engine is the integration tests' (they run the whole daemon).
 */
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/config.h"
#include "docker/docker.h"
#include "lib/clock.h"
#include "orch/orch.h"
#include "unit.h"

static struct config cfg;
static struct docker *dk;
static char data_dir[64];

static void
setup(const char *orchestrator)
{
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.orchestrator, sizeof(cfg.orchestrator), "%s",
	         orchestrator);
	snprintf(cfg.data_dir, sizeof(cfg.data_dir), "%s", data_dir);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static void
picks_the_driver_by_config(void)
{
	struct orch *o = NULL;
	struct err e = {0};

	setup("docker");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0);
	CHECK(o != NULL);
	CHECK_STR(orch_name(o), "docker");
	CHECK(!orch_is_swarm(o));
	orch_free(o);
	o = NULL;
	snprintf(cfg.orchestrator, sizeof(cfg.orchestrator), "nomad");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) < 0);
	CHECK(o == NULL);
	CHECK(strstr(e.msg, "SANDBOXD_ORCHESTRATOR") != NULL);
	/* swarm: its driver, or (not built in, or no swarm manager here)
	 * an error; never the docker driver. */
	memset(&e, 0, sizeof(e));
	snprintf(cfg.orchestrator, sizeof(cfg.orchestrator), "swarm");
	if (orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0) {
		CHECK_STR(orch_name(o), "swarm");
		orch_free(o);
	} else {
		CHECK(o == NULL && e.msg[0] != '\0');
	}
}

static void
docker_cannot_move(void)
{
	struct orch *o = NULL;
	struct err e = {0};
	char msg[DOCKER_MSG_LEN] = "";

	setup("docker");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0);
	CHECK(orch_move(o, "sandboxd-abcd-x", "worker-a", msg) ==
	      ORCH_UNSUPPORTED);
	CHECK(strstr(msg, "swarm") != NULL);
	orch_free(o);
}

static void
docker_target_is_the_address(void)
{
	struct orch *o = NULL;
	struct orch_target t;
	struct err e = {0};
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)&t.addr;
	char ip[INET_ADDRSTRLEN];

	setup("docker");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0);
	CHECK(orch_target(o, "SB1", "", "10.213.0.7", 5173, &t) == 0);
	CHECK(t.addr.ss_family == AF_INET);
	CHECK(t.len == sizeof(struct sockaddr_in));
	CHECK(ntohs(a4->sin_port) == 5173);
	CHECK(inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof(ip)) != NULL);
	CHECK_STR(ip, "10.213.0.7");
	CHECK(t.preamble_len == 0 && t.preamble[0] == '\0');
	CHECK(orch_target(o, "SB1", NULL, "fd00::5", 3000, &t) == 0);
	CHECK(t.addr.ss_family == AF_INET6);
	CHECK(orch_target(o, "SB1", "", "", 3000, &t) < 0);
	CHECK(orch_target(o, "SB1", "", "not-an-ip", 3000, &t) < 0);
	CHECK(orch_target(o, "SB1", "", "10.0.0.1", 0, &t) < 0);
	CHECK(orch_target(o, "SB1", "", "10.0.0.1", 70000, &t) < 0);
	orch_free(o);
}

static void
docker_forwards_to_the_engine(void)
{
	struct orch *o = NULL;
	struct orch_state st;
	struct err e = {0};
	char msg[DOCKER_MSG_LEN];

	setup("docker");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0);
	CHECK(orch_ping(o, msg) == DOCKER_DOWN);
	CHECK(!orch_is_up(o));
	CHECK(orch_inspect(o, "sandboxd-abcd-x", &st, msg) == DOCKER_DOWN);
	CHECK(orch_pause(o, "sandboxd-abcd-x", true, msg) == DOCKER_DOWN);
	orch_free(o);
}

/* <data>/workspaces/<id>/.sandboxd/sock as a listening socket. */
static int
listen_at(const char *data, const char *id)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[256];
	int fd;

	snprintf(dir, sizeof(dir), "%s/workspaces", data);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/workspaces/%s", data, id);
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/workspaces/%s/.sandboxd", data, id);
	mkdir(dir, 0700);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 4) < 0)
		return -1;
	return fd;
}

static void
docker_sup_connect(void)
{
	struct orch *o = NULL;
	struct err e = {0};
	char path[300], link[300];
	int lfd, fd = -1;

	setup("docker");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0);
	lfd = listen_at(cfg.data_dir, "SB1");
	CHECK(lfd >= 0);
	CHECK(orch_sup_connect(o, "SB1", "", clock_mono_ms() + 2000, &fd, &e) ==
	      0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* No workspace: an error, not the deadline's status. */
	CHECK(orch_sup_connect(o, "SB9", "", clock_mono_ms() + 2000, &fd, &e) <
	      0);
	CHECK(fd == -1 && e.status != 0 && e.status != 504);
	/* Nothing listening: 502, not the deadline's status. */
	close(listen_at(cfg.data_dir, "SB2"));
	snprintf(path, sizeof(path), "%s/workspaces/SB2/.sandboxd/sock",
	         cfg.data_dir);
	unlink(path);
	memset(&e, 0, sizeof(e));
	CHECK(orch_sup_connect(o, "SB2", "", clock_mono_ms() + 2000, &fd, &e) <
	      0);
	CHECK(fd == -1 && e.status == 502);
	CHECK_STR(e.code, "sandbox_unavailable");
	/* A link to a socket elsewhere is not followed. */
	listen_at(cfg.data_dir, "SB3");
	snprintf(path, sizeof(path), "%s/workspaces/SB3/.sandboxd/sock",
	         cfg.data_dir);
	snprintf(link, sizeof(link), "%s/workspaces/SB1/.sandboxd/sock",
	         cfg.data_dir);
	unlink(path);
	CHECK(symlink(link, path) == 0);
	memset(&e, 0, sizeof(e));
	CHECK(orch_sup_connect(o, "SB3", "", clock_mono_ms() + 2000, &fd, &e) <
	      0);
	CHECK(e.status == 502);
	close(lfd);
	orch_free(o);
}

/* A listener that never accepts, its backlog full: the deadline's
 * status (WSOCK_UNRESPONSIVE), which supclient tells apart. */
static void
docker_sup_connect_deadline(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct orch *o = NULL;
	struct err e = {0};
	int lfd, fd = -1, fill[64], n = 0;
	int64_t t0;

	setup("docker");
	CHECK(orch_new(&o, &cfg, dk, NULL, "abcd", &e) == 0);
	lfd = listen_at(cfg.data_dir, "SB4");
	CHECK(lfd >= 0 && listen(lfd, 0) == 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path),
	         "%s/workspaces/SB4/.sandboxd/sock", cfg.data_dir);
	for (n = 0; n < 64; n++) {
		fill[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(fill[n], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(fill[n]);
			break;
		}
	}
	CHECK(n < 64);
	t0 = clock_mono_ms();
	CHECK(orch_sup_connect(o, "SB4", "", t0 + 300, &fd, &e) < 0);
	CHECK(e.status == 504);
	CHECK_STR(e.code, "sandbox_unavailable");
	CHECK(clock_mono_ms() - t0 >= 250);
	while (n-- > 0)
		close(fill[n]);
	close(lfd);
	orch_free(o);
}

static const struct unit_test tests[] = {
    {"orch_new picks the driver by config", picks_the_driver_by_config},
    {"docker: move is unsupported", docker_cannot_move},
    {"docker: the target is the container's address",
     docker_target_is_the_address},
    {"docker: calls go to the engine", docker_forwards_to_the_engine},
    {"docker: the supervisor's socket, never through a link",
     docker_sup_connect},
    {"docker: a supervisor that does not accept is the deadline",
     docker_sup_connect_deadline},
};

int
main(void)
{
	int rc;

	snprintf(data_dir, sizeof(data_dir), "/tmp/sandboxd-orch-XXXXXX");
	if (mkdtemp(data_dir) == NULL ||
	    docker_new(&dk, "/nonexistent/docker.sock") < 0)
		return 1;
	rc = UNIT_RUN("orch", tests);
	docker_free(dk);
	nftw(data_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	return rc;
}
