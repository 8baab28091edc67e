/*
 * The node agent (nodeagent.h): one process per node but the manager's,
 * which the control plane (CP) reaches over nodelink (mutual TLS; only
 * a peer whose certificate says "sandboxd-control" may call an op).
 *
 * nodeagent_run loads the node's state (<data>/state/node), opens a
 * handle on this node's engine, makes the sandbox network's config-only
 * half and the egress table for its bridge (nodenet.c), opens the
 * credential proxy's door on the gateway (proxyrelay.c), and serves the
 * op table below on SANDBOXD_NODE_ADDR:SANDBOXD_NODE_PORT until SIGTERM.
 * The main thread waits for the signal SBNET_CHECK_S at a time and puts
 * the network and the rules back when they went missing (a restarted
 * engine, a flushed ruleset), as sbnet's thread does on the manager.
 *
 * Every input is the CP's, authenticated, but what it names is checked
 * all the same (ids, paths, containers by label): the agent must be
 * worth no more to a thief of the CP's channel than the ops' contract.
 * What a sandbox wrote (its workspace, its ports, its container's
 * output) is hostile: read through wsfs, bounded, on worker threads, never
 * under a lock.
 *
 * Rejected: a second daemon binary (the same binary keeps one version on
 * both ends), and letting the CP reach node ports directly (see
 * docs/design.md, "Scale-out").
 */
#include "nodeagent/nodeagent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker/swarm.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "nodeagent/internal.h"
#include "sbnet/sbnet.h"
#include "ws/workspace.h"

#define CONTROL (1u << NL_ROLE_CONTROL)

const struct nl_op agent_ops[] = {
    {.name = "facts", .roles = CONTROL, .unary = agent_op_facts},
    {.name = "sb_inspect", .roles = CONTROL, .unary = agent_op_sb_inspect},
    {.name = "sb_pause", .roles = CONTROL, .unary = agent_op_sb_pause},
    {.name = "sb_postart", .roles = CONTROL, .unary = agent_op_sb_postart},
    {.name = "sb_logs_tail", .roles = CONTROL, .unary = agent_op_sb_logs_tail},
    {.name = "exec_create", .roles = CONTROL, .unary = agent_op_exec_create},
    {.name = "exec_start",
     .roles = CONTROL,
     .stream = agent_op_exec_start,
     .idle_ms = -1}, /* a terminal: its own limits */
    {.name = "exec_resize", .roles = CONTROL, .unary = agent_op_exec_resize},
    {.name = "exec_inspect", .roles = CONTROL, .unary = agent_op_exec_inspect},
    {.name = "sup", .roles = CONTROL, .stream = agent_op_sup, .idle_ms = -1},
    {.name = "preview", .roles = CONTROL, .stream = agent_op_preview},
    {.name = "ws_stat", .roles = CONTROL, .unary = agent_op_ws_stat},
    {.name = "ws_read", .roles = CONTROL, .unary = agent_op_ws_read},
    {.name = "ws_write", .roles = CONTROL, .unary = agent_op_ws_write},
    {.name = "ws_list", .roles = CONTROL, .unary = agent_op_ws_list},
    {.name = "ws_delete", .roles = CONTROL, .unary = agent_op_ws_delete},
    {.name = "ws_mkdir", .roles = CONTROL, .unary = agent_op_ws_mkdir},
    {.name = "ws_usage", .roles = CONTROL, .unary = agent_op_ws_usage},
    {.name = "ws_trash", .roles = CONTROL, .unary = agent_op_ws_trash},
    {.name = "ws_rename", .roles = CONTROL, .unary = agent_op_ws_rename},
    {.name = "tar_out", .roles = CONTROL, .stream = agent_op_tar_out},
    {.name = "tar_in", .roles = CONTROL, .stream = agent_op_tar_in},
    {.name = "git", .roles = CONTROL, .stream = agent_op_git},
    {.name = "app_in", .roles = CONTROL, .stream = agent_op_app_in},
    {.name = "app_swap", .roles = CONTROL, .unary = agent_op_app_swap},
    {.name = "image_has", .roles = CONTROL, .unary = agent_op_image_has},
    {.name = "image_load", .roles = CONTROL, .stream = agent_op_image_load},
    {.name = "events",
     .roles = CONTROL,
     .stream = agent_op_events,
     .idle_ms = -1}, /* quiet while nothing happens */
};
const size_t agent_nops = sizeof(agent_ops) / sizeof(agent_ops[0]);

/* ---- state --------------------------------------------------------- */

/* A small file of ours whole into b (at most its cap). */
static int
read_small(const char *path, struct buf *b)
{
	char chunk[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (buf_append(b, chunk, (size_t)n) < 0) {
			n = -1;
			errno = EFBIG;
			break;
		}
	close(fd);
	return n < 0 ? -1 : 0;
}

static struct jv *
read_json(const char *dir, const char *file, struct err *e)
{
	char path[PATH_MAX + 32], perr[128];
	struct buf b;
	struct jv *v = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	buf_init(&b, 1u << 20);
	if (read_small(path, &b) < 0)
		err_set(e, 500, "internal", "%s: %s", path, strerror(errno));
	else if ((v = jv_parse(b.data, b.len, 16, perr, sizeof(perr))) == NULL)
		err_set(e, 500, "internal", "%s: %s", path, perr);
	buf_release(&b);
	return v;
}

static int
load_state(struct agent *a, struct err *e)
{
	struct jv *node = read_json(a->dir, "node.json", e), *net;
	const char *control = jv_str(jv_get(node, "control"));
	int rc;

	if (node == NULL)
		return -1;
	if (control == NULL || strlen(control) >= sizeof(a->control)) {
		jv_free(node);
		return err_set(e, 500, "internal",
		               "%s/node.json names no control plane", a->dir);
	}
	snprintf(a->control, sizeof(a->control), "%s", control);
	jv_free(node);
	if ((net = read_json(a->dir, "network.json", e)) == NULL)
		return -1;
	rc = agent_net_parse(net, &a->net, e);
	pthread_mutex_lock(&a->mu);
	a->cluster =
	    jv_get(net, "cluster") ? jv_copy(jv_get(net, "cluster")) : NULL;
	pthread_mutex_unlock(&a->mu);
	jv_free(net);
	if (rc < 0)
		return -1;
	if (nl_open(&a->nl, a->dir, e) < 0)
		return -1;
	snprintf(a->name, sizeof(a->name), "%s", nl_name(a->nl));
	return 0;
}

/* ---- the serve loop ------------------------------------------------- */

static void
block_signals(sigset_t *set)
{
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

/*
 * The certificate renewed through the control plane once it has less
 * than AGENT_RENEW_S to run (tried once an hour until it works); the
 * server then starts again with it (its streams are cut: once in 60
 * days).  The previous credentials stay until the next renewal, for the
 * relays that still use them.
 */
static void
renew_maybe(struct agent *a, int64_t *last)
{
	struct nodelink *fresh = NULL;
	struct err e = {0};
	int64_t now = (int64_t)time(NULL);
	char addr[128];

	if (nl_cert_expires(a->nl) - now > AGENT_RENEW_S || now - *last < 3600)
		return;
	*last = now;
	if (nl_renew(a->nl, a->dir, a->control, &e) < 0 ||
	    nl_open(&fresh, a->dir, &e) < 0) {
		log_warn("node agent: certificate renewal: %s", e.msg);
		return;
	}
	nl_server_stop(a->srv);
	a->srv = NULL;
	pthread_mutex_lock(&a->mu);
	nl_free(a->nl_old);
	a->nl_old = a->nl;
	a->nl = fresh;
	pthread_mutex_unlock(&a->mu);
	snprintf(addr, sizeof(addr), "%s:%lld",
	         a->cfg->node_addr[0] ? a->cfg->node_addr : "0.0.0.0",
	         (long long)a->cfg->node_port);
	if (nl_server_start(&a->srv, fresh, addr, agent_ops, agent_nops, a,
	                    &e) < 0)
		log_error("node agent: serving again after renewal: %s", e.msg);
	else
		log_info("node agent: certificate renewed");
}

/* Until a signal: the network and rules put back every SBNET_CHECK_S,
 * the certificate renewed when it is due. */
static void
watch(struct agent *a, const sigset_t *set)
{
	struct timespec tick = {.tv_sec = SBNET_CHECK_S};
	struct err e = {0};
	bool warned = false;
	int64_t renewed = 0;

	for (;;) {
		int sig = sigtimedwait(set, NULL, &tick);
		if (sig == SIGINT || sig == SIGTERM) {
			log_info("node agent: %s; stopping", strsignal(sig));
			return;
		}
		if (agent_net_ensure(a, &e) < 0) {
			if (!warned)
				log_warn("node agent: network: %s", e.msg);
			warned = true;
		} else {
			warned = false;
		}
		agent_engine_refresh(a);
		renew_maybe(a, &renewed);
	}
}

static int
serve_start(struct agent *a, struct err *e)
{
	char addr[128], msg[DOCKER_MSG_LEN];

	if (docker_new(&a->d, a->cfg->docker_socket) < 0)
		return ERR_INTERNAL(e, "out of memory");
	if (docker_ping(a->d, msg) != DOCKER_OK)
		log_warn("node agent: the engine does not answer yet: %s", msg);
	agent_engine_refresh(a);
	if (agent_net_ensure(a, e) < 0)
		log_warn("node agent: network: %s (retried)", e->msg);
	if (agent_relay_start(a, e) < 0)
		return -1;
	snprintf(addr, sizeof(addr), "%s:%lld",
	         a->cfg->node_addr[0] ? a->cfg->node_addr : "0.0.0.0",
	         (long long)a->cfg->node_port);
	if (nl_server_start(&a->srv, a->nl, addr, agent_ops, agent_nops, a, e) <
	    0)
		return -1;
	log_info("node agent %s serving on %s (control plane %s)", a->name,
	         addr, a->control);
	return 0;
}

static void
serve_stop(struct agent *a)
{
	atomic_store(&a->stop, true);
	if (a->srv)
		nl_server_stop(a->srv);
	agent_relay_stop(a);
	for (int i = 0;
	     i < AGENT_STOP_WAIT_MS / 50 && atomic_load(&a->workers) > 0; i++)
		usleep(50 * 1000);
	if (atomic_load(&a->workers) > 0)
		log_warn("node agent: %d stream(s) still open at exit",
		         atomic_load(&a->workers));
}

int
nodeagent_run(const struct config *cfg)
{
	struct agent *a = calloc(1, sizeof(*a));
	struct err e = {0};
	sigset_t set;
	int rc = 1;

	if (a == NULL)
		return 1;
	a->cfg = cfg;
	a->relay_fd = -1;
	pthread_mutex_init(&a->mu, NULL);
	snprintf(a->dir, sizeof(a->dir), "%s/%s", cfg->data_dir, NODEAGENT_DIR);
	block_signals(&set);
	if (workspace_init_dirs(cfg->data_dir) < 0) {
		err_set(&e, 500, "internal", "cannot make the data dir %s",
		        cfg->data_dir);
	} else {
		/* moved-away workspaces (ws_trash) wait there until now */
		workspace_empty_trash(cfg->data_dir);
		if (load_state(a, &e) == 0 && serve_start(a, &e) == 0)
			rc = 0;
	}
	if (rc == 0)
		watch(a, &set);
	else
		log_error("node agent: %s", e.msg);
	serve_stop(a);
	/* Workers still running (a stuck engine call) keep a: it is not
	 * freed then, the process is about to exit anyway. */
	if (atomic_load(&a->workers) == 0) {
		nl_free(a->nl);
		nl_free(a->nl_old);
		docker_free(a->d);
		jv_free(a->cluster);
		pthread_mutex_destroy(&a->mu);
		free(a);
	}
	return rc;
}
