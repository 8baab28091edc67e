/*
 * A control plane and an enrolled node agent in one process, over real
 * nodelink on loopback (a CA made by nl_ca_init, the agent's key signed
 * through an enroll op as a join does).  fixture_enroll() and
 * fixture_serve() are the two halves every such test shares (the
 * control plane's server, the agent's data directory and credentials;
 * then agent_ops served with a struct agent); wsnode_fixture.h builds on
 * them.  For the node agent's tests: setup() serves agent_ops on a
 * temporary data dir and this machine's engine; call() is one op from
 * the control plane.  Functions are static inline: an includer may use
 * only some.
 */
#ifndef AGENT_FIXTURE_H
#define AGENT_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/b64.h"
#include "nodeagent/internal.h"
#include "unit.h"
#include "ws/workspace.h"

#define ID1 "01HZZZZZZZZZZZZZZZZZZZZZZ1"
#define ID2 "01HZZZZZZZZZZZZZZZZZZZZZZ2"
#define ID3 "01HZZZZZZZZZZZZZZZZZZZZZZ3"

static char root[64], cadir[128], nodedir[128], cp_addr[64], ag_addr[64];
static struct nodelink *cp, *node;
static struct nl_server *cp_srv, *ag_srv;
static char token_hash[65];
static struct config agcfg; /* the agent's */
static struct agent ag;
static bool engine;

static int
op_enroll(void *arg, const struct nl_peer *p, const struct jv *req,
          struct jv **ans, struct err *e)
{
	char pin[65], sh[65], *cert = NULL;

	(void)arg;
	(void)p;
	if (nl_token_parse(jv_str(jv_get(req, "token")), pin, sh, e) < 0)
		return -1;
	if (strcmp(sh, token_hash) != 0)
		return err_set(e, 401, "unauthorized", "wrong join token");
	if (nl_ca_sign(cadir, jv_str(jv_get(req, "pubkey")),
	               jv_str(jv_get(req, "name")), jv_str(jv_get(req, "addr")),
	               &cert, e) < 0)
		return -1;
	*ans = jv_obj();
	jv_set_str(*ans, "cert", cert);
	jv_set_str(*ans, "name", "n1");
	free(cert);
	return 0;
}

/* The control plane's proxy op, as a stand-in proxy: the SBXPEER line
 * the control plane writes (the node by its certificate, the address
 * from the agent's header), then what comes, echoed. */
static void *
echo_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[512];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	close(fd);
	return NULL;
}

static int
op_proxy(void *arg, const struct nl_peer *p, const struct jv *req,
         struct jv **ans, int *fd, struct err *e)
{
	int sv[2];
	pthread_t t;

	char line[160];
	int n;

	(void)arg;
	(void)ans;
	if (p->role != NL_ROLE_NODE || strcmp(p->name, "n1") != 0)
		return err_set(e, 403, "forbidden", "nodes only");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ERR_INTERNAL(e, "socketpair");
	n = snprintf(line, sizeof(line), "SBXPEER %s %s\n", p->name,
	             jv_str(jv_get(req, "ip")) ? jv_str(jv_get(req, "ip"))
	                                       : "-");
	if (write(sv[0], line, (size_t)n) != n)
		return ERR_INTERNAL(e, "write");
	pthread_create(&t, NULL, echo_main, (void *)(intptr_t)sv[0]);
	pthread_detach(t);
	*fd = sv[1];
	return 0;
}

static const struct nl_op cp_ops[] = {
    {.name = "enroll", .roles = 1u << NL_ROLE_NONE, .unary = op_enroll},
    {.name = "proxy", .roles = 1u << NL_ROLE_NODE, .stream = op_proxy},
};

/* A loopback port nothing listens on now (the kernel's pick). */
static inline unsigned
free_port(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unsigned port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static inline void
fixture_fail(const struct err *e)
{
	fprintf(stderr, "setup: %s\n", e->msg);
	abort();
}

/* A temporary root from tmpl; the control plane's CA (root/ca) and its
 * nodelink server; an agent with its data directory root/<data>
 * (agcfg) enrolled through it, its credentials in <data>/state/node;
 * ag filled in for serving. */
static inline void
fixture_enroll(const char *tmpl, const char *data)
{
	char token[NL_TOKEN_LEN];
	struct err e = {0};
	struct jv *ans = NULL;

	snprintf(root, sizeof(root), "%s", tmpl);
	if (mkdtemp(root) == NULL)
		abort();
	snprintf(cadir, sizeof(cadir), "%s/ca", root);
	snprintf(agcfg.data_dir, sizeof(agcfg.data_dir), "%s/%s", root, data);
	snprintf(nodedir, sizeof(nodedir), "%s/state/node", agcfg.data_dir);
	if (workspace_init_dirs(agcfg.data_dir) < 0)
		abort();
	if (nl_ca_init(cadir, "cp", "127.0.0.1:7444", &e) < 0 ||
	    nl_open(&cp, cadir, &e) < 0 ||
	    nl_server_start(&cp_srv, cp, "127.0.0.1:0", cp_ops,
	                    sizeof(cp_ops) / sizeof(cp_ops[0]), NULL, &e) < 0 ||
	    nl_token_new(cadir, token, token_hash, &e) < 0)
		fixture_fail(&e);
	snprintf(cp_addr, sizeof(cp_addr), "127.0.0.1:%u",
	         nl_server_port(cp_srv));
	if (nl_enroll(nodedir, cp_addr, token, "n1", "127.0.0.1:7443", NULL,
	              &ans, &e) < 0 ||
	    nl_open(&node, nodedir, &e) < 0)
		fixture_fail(&e);
	jv_free(ans);
	ag.cfg = &agcfg;
	ag.nl = node;
	ag.relay_fd = -1;
	pthread_mutex_init(&ag.mu, NULL);
	snprintf(ag.dir, sizeof(ag.dir), "%s", nodedir);
	snprintf(ag.name, sizeof(ag.name), "%s", nl_name(node));
}

/* agent_ops served with ag; ag_addr says where. */
static inline void
fixture_serve(void)
{
	struct err e = {0};

	if (nl_server_start(&ag_srv, node, "127.0.0.1:0", agent_ops, agent_nops,
	                    &ag, &e) < 0)
		fixture_fail(&e);
	snprintf(ag_addr, sizeof(ag_addr), "127.0.0.1:%u",
	         nl_server_port(ag_srv));
}

/* Both servers stopped, the agent's workers given 5 s to end. */
static inline void
fixture_stop(void)
{
	nl_server_stop(ag_srv);
	nl_server_stop(cp_srv);
	for (int i = 0; i < 100 && atomic_load(&ag.workers) > 0; i++)
		usleep(50 * 1000);
}

/* The temporary root and all beneath it removed. */
static inline void
fixture_remove(void)
{
	char *const argv[] = {"rm", "-rf", root, NULL};
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
}

static inline void
setup(void)
{
	char msg[DOCKER_MSG_LEN];

	snprintf(agcfg.docker_socket, sizeof(agcfg.docker_socket),
	         "/var/run/docker.sock");
	agcfg.egress_mode = EGRESS_PUBLIC;
	fixture_enroll("/tmp/sbx-agent-XXXXXX", "data");
	snprintf(ag.control, sizeof(ag.control), "%s", cp_addr);
	snprintf(ag.net.subnet, sizeof(ag.net.subnet), "127.0.0.0/8");
	snprintf(ag.net.gateway, sizeof(ag.net.gateway), "127.0.0.1");
	ag.net.proxy_port = free_port();
	if (docker_new(&ag.d, agcfg.docker_socket) < 0)
		abort();
	engine = docker_ping(ag.d, msg) == DOCKER_OK;
	agent_engine_refresh(&ag);
	fixture_serve();
}

/* One op from the control plane; the answer, NULL with *e. */
static inline struct jv *
call(struct jv *req, struct err *e)
{
	struct jv *ans = NULL;

	*e = (struct err){0};
	if (nl_call(cp, ag_addr, NL_ROLE_NODE, req, &ans, NL_CALL_MS, e) < 0)
		ans = NULL;
	jv_free(req);
	return ans;
}

static inline struct jv *
req_of(const char *op, const char *sandbox, const char *path)
{
	struct jv *r = jv_obj();

	jv_set_str(r, "op", op);
	if (sandbox)
		jv_set_str(r, "sandbox", sandbox);
	if (path)
		jv_set_str(r, "path", path);
	return r;
}

static inline void
teardown(void)
{
	fixture_stop();
	fixture_remove();
}

#endif
