/*
 * A sandbox's container through the orchestrator (sandbox/container.h).
 *
 * The spec is made here as it always was (the workspace bound at
 * /home/sandbox, read-only root, the limits); the driver adds what a
 * scheduler needs (the image's id, the memory reservation) and says on
 * which node it went.  When that is not this host, the prepare callback
 * copies the workspace there (wsnode_copy) before the container is
 * made against it; the node is on the row before the create returns,
 * so a crash after leaves a row that names where its workspace is.
 */
#include "sandbox/container.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "orch/orch.h"
#include "sandbox/activity.h"
#include "sbnet/sbnet.h"
#include "wsnode/wsnode.h"
#include "ws/workspace.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "lib/ulid.h"

void
core_container_name(const struct core *c, const char *id, char *out, size_t len)
{
	size_t n;

	n = (size_t)snprintf(out, len, "sandboxd-%s-%s", c->instance, id);
	for (size_t i = 0; i < n && i < len; i++)
		if (out[i] >= 'A' && out[i] <= 'Z')
			out[i] = (char)(out[i] - 'A' + 'a');
}

bool
container_sandbox_of(const struct core *c, const char *name, char *id,
                     size_t len)
{
	char prefix[64];
	size_t n;

	if (name[0] == '/')
		name++; /* the engine's names start with one */
	n = (size_t)snprintf(prefix, sizeof(prefix), "sandboxd-%s-",
	                     c->instance);
	if (strncmp(name, prefix, n) != 0 || strlen(name + n) != ULID_LEN ||
	    len < ULID_LEN + 1)
		return false;
	for (size_t i = 0; i < ULID_LEN; i++) {
		if (!isalnum((unsigned char)name[n + i]))
			return false;
		id[i] = (char)toupper((unsigned char)name[n + i]);
	}
	id[ULID_LEN] = '\0';
	return true;
}

int
container_err(int rc, const char *msg, struct err *e)
{
	if (rc == DOCKER_DOWN || rc == ORCH_NODE_DOWN)
		return ERR_DOCKER(e, "%s", msg);
	if (rc == ORCH_NO_CAPACITY)
		return err_set(e, 503, "no_headroom", "%s", msg);
	return err_set(e, 502, "docker_error", "%s", msg);
}

/*
 * orch_create's prepare: the workspace to the node Swarm chose, from
 * where the row says it is (a remade service of a placed sandbox is
 * pinned to its node, whose workspace is already there).
 */
static int
workspace_to(void *arg, const char *node, struct err *e)
{
	struct core *c = ((void **)arg)[0];
	const struct sandbox *sb = ((void **)arg)[1];
	int64_t bytes = 0;

	if (node == NULL)
		node = "";
	if (strcmp(node, sb->node) == 0)
		return 0;
	if (wsnode_copy(c->wn, sb->id, sb->node, node, false, &bytes, e) < 0)
		return -1;
	log_info("sandbox %s: workspace copied to node %s (%lld bytes)", sb->id,
	         node[0] ? node : "(manager)", (long long)bytes);
	return 0;
}

/* The container's spec as the engine gets it (every string borrowed). */
static void
spec_fill(struct core *c, const struct sandbox *sb, struct docker_spec *spec,
          char *name, char *bind, char *preset)
{
	core_container_name(c, sb->id, name, 128);
	spec->name = name;
	spec->image = c->cfg->image;
	spec->hostname = name;
	spec->user = "1000:1000";
	spec->runtime = strcmp(c->cfg->runtime, "runc") ? c->cfg->runtime : "";
	spec->network = c->cfg->network;
	spec->binds[0] = bind;
	spec->env[0] = "HOME=/home/sandbox";
	snprintf(preset, 64, "SANDBOXD_PRESET=%s", sb->preset);
	spec->env[1] = preset;
	config_mirror_env(c->cfg, &spec->env[2], DOCKER_MAX_KV - 3);
	spec->labels[0] = (struct docker_kv){"sandboxd.managed", "true"};
	spec->labels[1] = (struct docker_kv){"sandboxd.instance", c->instance};
	spec->labels[2] = (struct docker_kv){"sandboxd.sandbox", sb->id};
	spec->labels[3] = (struct docker_kv){"sandboxd.app", sb->app_id};
	spec->tmpfs[0] = "/tmp:rw,nosuid,nodev,size=512m,mode=1777";
	spec->tmpfs[1] = "/var/tmp:rw,nosuid,nodev,size=128m,mode=1777";
	spec->memory_bytes = c->cfg->memory_mb * 1024 * 1024;
	spec->pids_limit = c->cfg->pids_limit;
	spec->nofile = c->cfg->nofile_limit;
	spec->read_only = true;
}

int
container_make(struct core *c, struct sandbox *sb, char *msg)
{
	char name[128], ws[WORKSPACE_PATH_MAX], bind[WORKSPACE_PATH_MAX + 100],
	    id[72], preset[64], image[80] = "", node[ORCH_NODE_LEN];
	struct orch_spec spec = {.sandbox_id = sb->id, .node = sb->node};
	void *prep[2] = {c, sb};
	int rc;

	workspace_path(c->cfg->data_dir, sb->id, ws, sizeof(ws));
	snprintf(bind, sizeof(bind), "%s:/home/sandbox", ws);
	spec_fill(c, sb, &spec.c, name, bind, preset);
	/* A scheduler runs the image by id on every node (never pulled by
	 * tag); the docker driver makes it from the tag, as it always did. */
	if (orch_is_swarm(c->orch) &&
	    docker_image_id(c->docker, c->cfg->image, image, msg) != DOCKER_OK)
		return DOCKER_ERROR;
	spec.image_id = image;
	spec.reserve_bytes = c->cfg->memory_reserve_mb > 0
	                         ? c->cfg->memory_reserve_mb << 20
	                         : spec.c.memory_bytes / 2;
	rc = orch_create(c->orch, &spec, workspace_to, prep, id, node, msg);
	if (rc != DOCKER_OK)
		return rc;
	snprintf(sb->container_id, sizeof(sb->container_id), "%.12s", id);
	if (strcmp(node, sb->node) != 0) {
		snprintf(sb->node, sizeof(sb->node), "%s", node);
		if (store_sandbox_set_node(c->store, sb->id, node) != 0)
			log_warn("sandbox %s: cannot record its node %s",
			         sb->id, node);
	}
	return DOCKER_OK;
}

void
container_started(struct core *c, struct sandbox *sb)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct orch_state st;

	core_container_name(c, sb->id, name, sizeof(name));
	sb->container_ip[0] = '\0';
	if (orch_inspect(c->orch, name, &st, msg) == DOCKER_OK)
		snprintf(sb->container_ip, sizeof(sb->container_ip), "%s",
		         st.d.ip);
	sbnet_container_started(c->net, sb->container_ip);
	activity_started(c->act, sb->id);
	core_hooks_run(c, CORE_SANDBOX_STARTED, sb->id);
}

/*
 * A stopped container is removed, to be made again, when it is attached
 * to another network than the sandboxes' (made before the network
 * existed, or before dockerd lost its state) or was made from another
 * image than the one SANDBOXD_IMAGE names now (an upgrade rebuilt the
 * image under the same tag: the ids differ, the tags do not).  Its root
 * filesystem is read-only and its files are in the workspace, so nothing
 * is lost.  When the image cannot be looked up, the container stays.
 * With swarm the network is the service's, which the driver keeps (its
 * tasks are on the swarm-scoped network, not the one sbnet names).
 */
static void
container_refresh(struct core *c, const struct sandbox *sb, const char *name)
{
	char want[72], image[80], msg[DOCKER_MSG_LEN];
	struct orch_state st;

	if (orch_inspect(c->orch, name, &st, msg) != DOCKER_OK || st.d.running)
		return;
	sbnet_network_id(c->net, want, sizeof(want));
	if (want[0] && !orch_is_swarm(c->orch) &&
	    strcmp(st.d.network_id, want) != 0) {
		log_info("sandbox %s: its container is on another network; "
		         "making it again",
		         sb->id);
		orch_remove(c->orch, name, msg);
		return;
	}
	if (docker_image_id(c->docker, c->cfg->image, image, msg) ==
	        DOCKER_OK &&
	    image[0] && st.d.image_id[0] && strcmp(st.d.image_id, image) != 0) {
		log_info("sandbox %s: its container was made from image %.19s, "
		         "%s is %.19s now; making it again",
		         sb->id, st.d.image_id, c->cfg->image, image);
		orch_remove(c->orch, name, msg);
	}
}

int
container_run(struct core *c, struct sandbox *sb, char *msg)
{
	char name[128];
	int rc;

	core_container_name(c, sb->id, name, sizeof(name));
	container_refresh(c, sb, name);
	rc = orch_start(c->orch, name, msg);
	if (rc == DOCKER_NOT_FOUND) {
		log_info("sandbox %s: container missing, recreating", sb->id);
		rc = container_make(c, sb, msg);
		if (rc == DOCKER_OK)
			rc = orch_start(c->orch, name, msg);
	}
	if (rc == DOCKER_OK)
		container_started(c, sb);
	return rc;
}
