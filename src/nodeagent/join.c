/*
 * `sandboxd node join` (nodeagent.h): the one command the control plane
 * prints for a new node.  It enrolls over nodelink (a key made here, the
 * CA pinned by the token's hash, a certificate signed by the control
 * plane), saves what the answer says (node.json, network.json), makes
 * the sandbox network's config-only half here, then joins this engine to
 * the swarm with the worker token from the answer (so the swarm token
 * never appears on a command line) and runs the agent.  The control
 * plane labels the node for sandboxes once it sees it in the swarm with
 * the image loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker/swarm.h"
#include "lib/buf.h"
#include "lib/fileio.h"
#include "nodeagent/internal.h"
#include "nodeagent/nodeagent.h"
#include "ws/workspace.h"

/* Writes v to <dir>/<file> (0600, through a temporary file). */
static int
save_json(const char *dir, const char *file, const struct jv *v, struct err *e)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 40];
	struct buf b;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	buf_init(&b, 1u << 20);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	          0600);
	if (fd >= 0 && jv_dump(v, &b) == 0 &&
	    fileio_write_all(fd, b.data, b.len) == 0 && fsync(fd) == 0 &&
	    rename(tmp, path) == 0)
		rc = 0;
	else
		err_set(e, 500, "internal", "cannot write %s: %s", path,
		        strerror(errno));
	if (fd >= 0)
		close(fd);
	buf_release(&b);
	return rc;
}

/* What the control plane keeps of this node at enroll. */
static struct jv *
join_facts(struct agent *a)
{
	struct jv *req = jv_obj(), *ans = NULL;
	struct err e = {0};

	agent_engine_refresh(a);
	(void)agent_op_facts(a, NULL, req, &ans, &e);
	jv_free(req);
	return ans ? ans : jv_obj();
}

static int
save_state(struct agent *a, const char *control, const struct jv *ans,
           struct err *e)
{
	struct jv *node = jv_obj();
	int rc;

	jv_set_str(node, "control", control);
	jv_set_str(node, "name", jv_str(jv_get(ans, "name")));
	rc = save_json(a->dir, "node.json", node, e);
	jv_free(node);
	if (rc < 0 || agent_net_parse(jv_get(ans, "network"), &a->net, e) < 0 ||
	    save_json(a->dir, "network.json", jv_get(ans, "network"), e) < 0)
		return -1;
	snprintf(a->control, sizeof(a->control), "%s", control);
	return 0;
}

static int
swarm_join(struct agent *a, const char *addr, const struct jv *ans,
           struct err *e)
{
	const char *token = jv_str(jv_get(ans, "swarm_token"));
	const char *remote = jv_str(jv_get(ans, "swarm_addr"));
	char msg[DOCKER_MSG_LEN];
	struct swarm_info si = {0};

	if (token == NULL || remote == NULL)
		return err_set(e, 502, "internal",
		               "the control plane sent no swarm token");
	if (swarm_info(a->d, &si, msg) == DOCKER_OK &&
	    strcmp(si.state, "active") == 0) {
		fprintf(stderr,
		        "this engine is in a swarm already (node %s); "
		        "not joining again\n",
		        si.node_id);
		return 0;
	}
	if (docker_swarm_join(a->d, addr, remote, token, msg) != DOCKER_OK)
		return ERR_DOCKER(e, "swarm join: %s", msg);
	return 0;
}

static int
join_steps(struct agent *a, const char *control, const char *token,
           const char *name, const char *addr, struct err *e)
{
	char nladdr[96], msg[DOCKER_MSG_LEN];
	struct jv *facts, *ans = NULL;
	int rc;

	if (docker_new(&a->d, a->cfg->docker_socket) < 0 ||
	    docker_ping(a->d, msg) != DOCKER_OK)
		return ERR_DOCKER(e, "the engine here: %s", msg);
	snprintf(nladdr, sizeof(nladdr), "%s:%lld", addr,
	         (long long)a->cfg->node_port);
	facts = join_facts(a);
	rc = nl_enroll(a->dir, control, token, name, nladdr, facts, &ans, e);
	jv_free(facts);
	if (rc == 0)
		rc = save_state(a, control, ans, e);
	if (rc == 0 && agent_net_ensure(a, e) < 0)
		fprintf(stderr, "warning: %s (retried by the agent)\n", e->msg);
	if (rc == 0)
		rc = swarm_join(a, addr, ans, e);
	jv_free(ans);
	return rc;
}

int
nodeagent_join(const struct config *cfg, const char *control, const char *token,
               const char *name, const char *addr)
{
	struct agent a = {.cfg = cfg, .relay_fd = -1};
	char host[64] = "";
	struct err e = {0};
	int rc;

	pthread_mutex_init(&a.mu, NULL);
	snprintf(a.dir, sizeof(a.dir), "%s/%s", cfg->data_dir, NODEAGENT_DIR);
	if (!name[0])
		name = cfg->node_name[0] ? cfg->node_name
		       : gethostname(host, sizeof(host) - 1) == 0 ? host
		                                                  : "";
	if (!addr[0])
		addr = cfg->node_addr;
	if (!addr[0]) {
		fprintf(stderr, "sandboxd node join: --addr IP (or "
		                "SANDBOXD_NODE_ADDR): this node's address the "
		                "others reach\n");
		pthread_mutex_destroy(&a.mu);
		return -1;
	}
	if (workspace_init_dirs(cfg->data_dir) < 0)
		rc = err_set(&e, 500, "internal", "cannot make %s",
		             cfg->data_dir);
	else
		rc = join_steps(&a, control, token, name, addr, &e);
	if (rc < 0)
		fprintf(stderr, "sandboxd node join: %s\n", e.msg);
	else
		printf("joined as node %s; the control plane labels it for "
		       "sandboxes once its image is loaded\n",
		       name);
	docker_free(a.d);
	jv_free(a.cluster);
	pthread_mutex_destroy(&a.mu);
	return rc;
}
