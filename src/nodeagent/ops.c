/*
 * The agent's unary ops on containers, execs and images, and facts
 * (nodelink.h's table).  A container is only ever found by its label
 * sandboxd.sandbox=<id> on this node's engine (a swarm task's container
 * is named <service>.<slot>.<task>, and a name from the wire must not
 * reach any other container); an exec by the id the engine gave.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "docker/swarm.h"
#include "lib/meminfo.h"
#include "nodeagent/internal.h"

#define ENGINE_ERR(e, rc, msg)                                                 \
	((rc) == DOCKER_NOT_FOUND ? ERR_NOTFOUND(e, "%s", msg)                 \
	 : (rc) == DOCKER_DOWN    ? ERR_DOCKER(e, "%s", msg)                   \
	                          : err_set(e, 502, "docker_error", "%s", msg))

struct pick {
	char ids[8][72];
	size_t n;
};

static void
pick_one(const char *id, const struct jv *labels, void *arg)
{
	struct pick *p = arg;

	(void)labels;
	if (p->n < sizeof(p->ids) / sizeof(p->ids[0]))
		snprintf(p->ids[p->n++], 72, "%s", id);
}

int
agent_container(struct agent *a, const char *name, char id[72], struct err *e)
{
	char msg[DOCKER_MSG_LEN];
	struct docker_state st;
	struct pick p = {0};
	int rc;

	if (name == NULL || strncmp(name, "sbx-", 4) != 0 ||
	    !agent_id_ok(name + 4))
		return ERR_BAD(e, "not a sandbox's name");
	rc = docker_list(a->d, "sandboxd.sandbox", name + 4, pick_one, &p, msg);
	if (rc != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	if (p.n == 0)
		return ERR_NOTFOUND(e, "no container of %s on this node", name);
	snprintf(id, 72, "%s", p.ids[0]);
	for (size_t i = 0; i < p.n; i++)
		if (docker_inspect(a->d, p.ids[i], &st, msg) == DOCKER_OK &&
		    st.running) {
			snprintf(id, 72, "%s", p.ids[i]);
			break;
		}
	return 0;
}

/*
 * What the engine says of itself, asked every SBNET_CHECK_S by the main
 * loop rather than on each facts call: the heartbeat's deadline may be
 * a second, and an engine busy starting containers can take that long.
 */
void
agent_engine_refresh(struct agent *a)
{
	struct swarm_info si = {0};
	char msg[DOCKER_MSG_LEN], api[16] = "", rt[64] = "";

	(void)swarm_info(a->d, &si, msg);
	(void)docker_engine_facts(a->d, api, rt, msg);
	pthread_mutex_lock(&a->mu);
	snprintf(a->swarm_id, sizeof(a->swarm_id), "%s", si.node_id);
	snprintf(a->engine_api, sizeof(a->engine_api), "%s", api);
	snprintf(a->runtime, sizeof(a->runtime), "%s", rt);
	pthread_mutex_unlock(&a->mu);
}

int
agent_op_facts(void *arg, const struct nl_peer *p, const struct jv *req,
               struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	long long total = 0, avail = 0;
	struct statvfs vfs;

	(void)p;
	(void)e;
	if (jv_get(req, "cluster"))
		agent_net_cluster(a, jv_get(req, "cluster"));
	(void)meminfo_host_kb(&total, &avail);
	*ans = jv_obj();
	jv_set_str(*ans, "name", a->name);
	pthread_mutex_lock(&a->mu);
	jv_set_str(*ans, "swarm_id", a->swarm_id);
	jv_set_str(*ans, "engine_api", a->engine_api);
	jv_set_str(*ans, "default_runtime", a->runtime);
	pthread_mutex_unlock(&a->mu);
	jv_set_str(*ans, "data_dir", a->cfg->data_dir);
	jv_set_int(*ans, "mem_total", total * 1024);
	jv_set_int(*ans, "mem_available", avail * 1024);
	if (statvfs(a->cfg->data_dir, &vfs) == 0) {
		jv_set_int(*ans, "disk_free",
		           (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize);
		jv_set_int(*ans, "disk_total",
		           (int64_t)vfs.f_blocks * (int64_t)vfs.f_frsize);
	}
	jv_set_str(*ans, "version", SANDBOXD_VERSION);
	jv_set_str(*ans, "subnet", a->net.subnet);
	jv_set_str(*ans, "gateway", a->net.gateway);
	return 0;
}

int
agent_op_sb_inspect(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	struct docker_state st;
	char id[72], msg[DOCKER_MSG_LEN];
	int rc;

	(void)p;
	*ans = jv_obj();
	if (agent_container(a, jv_str(jv_get(req, "name")), id, e) < 0) {
		if (e->status != 404)
			return -1;
		*e = (struct err){0};
		jv_set_bool(*ans, "exists", false);
		return 0;
	}
	rc = docker_inspect(a->d, id, &st, msg);
	if (rc != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	jv_set_bool(*ans, "exists", true);
	jv_set_str(*ans, "id", st.id);
	jv_set_bool(*ans, "running", st.running);
	jv_set_bool(*ans, "paused", st.paused);
	jv_set_bool(*ans, "oom_killed", st.oom_killed);
	jv_set_int(*ans, "exit_code", st.exit_code);
	jv_set_str(*ans, "status", st.status);
	jv_set_str(*ans, "ip", st.ip);
	jv_set_str(*ans, "image_id", st.image_id);
	return 0;
}

int
agent_op_sb_pause(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	char id[72], msg[DOCKER_MSG_LEN];
	int rc;

	(void)p;
	if (agent_container(a, jv_str(jv_get(req, "name")), id, e) < 0)
		return -1;
	rc = docker_pause(a->d, id, jv_is_true(jv_get(req, "pause")), msg);
	if (rc != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	*ans = jv_obj();
	return 0;
}

/* A field of /proc/<pid>/status as a number (hex for Cap*); -1 unknown. */
static long long
proc_status(int pid, const char *field, int base)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			char *end;
			v = strtoll(line + n + 1, &end, base);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Swarm sets no swap limit, so the memory limit is repeated as
 * memory+swap; then the sandbox's PID 1 must hold no capability and have
 * set no_new_privs (the supervisor does it itself: a service cannot ask
 * for it before Engine 25), which may take it a moment after start.
 */
int
agent_op_sb_postart(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	int64_t mem = jv_int(jv_get(req, "memory"));
	char id[72], msg[DOCKER_MSG_LEN];
	long long nnp = -1, cap = -1;
	int rc, pid = 0;

	(void)p;
	if (agent_container(a, jv_str(jv_get(req, "name")), id, e) < 0)
		return -1;
	if (mem > 0 && (rc = docker_container_update(a->d, id, mem, mem,
	                                             msg)) != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	if ((rc = docker_container_pid(a->d, id, &pid, msg)) != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	for (int i = 0; pid > 0 && i < 30; i++) {
		nnp = proc_status(pid, "NoNewPrivs", 10);
		cap = proc_status(pid, "CapEff", 16);
		if (nnp == 1 && cap == 0)
			break;
		usleep(100 * 1000);
	}
	if (pid <= 0 || nnp != 1 || cap != 0)
		return err_set(e, 500, "internal",
		               "the sandbox's process is not confined "
		               "(pid %d, NoNewPrivs %lld, CapEff %llx)",
		               pid, nnp, cap);
	*ans = jv_obj();
	return 0;
}

int
agent_op_sb_logs_tail(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	int64_t lines = jv_int(jv_get(req, "lines"));
	char id[72], msg[DOCKER_MSG_LEN], *out;
	int rc;

	(void)p;
	if (lines < 1 || lines > AGENT_LOG_LINES_MAX)
		return ERR_BAD(e, "lines: 1 to %d", AGENT_LOG_LINES_MAX);
	if (agent_container(a, jv_str(jv_get(req, "name")), id, e) < 0)
		return -1;
	if ((out = malloc(DOCKER_LOGS_MAX)) == NULL)
		return ERR_INTERNAL(e, "out of memory");
	rc = docker_logs_tail(a->d, id, (int)lines, out, DOCKER_LOGS_MAX, msg);
	if (rc == DOCKER_OK) {
		*ans = jv_obj();
		jv_set(*ans, "text", jv_new_str_lossy(out, strlen(out)));
	}
	free(out);
	return rc == DOCKER_OK ? 0 : ENGINE_ERR(e, rc, msg);
}

/* A NULL-ended copy of an array of strings (borrowed from v), at most
 * max, each at most AGENT_ARG_MAX bytes; -1 when it is not one. */
static int
str_list(const struct jv *v, const char **out, size_t max, bool need)
{
	size_t n = jv_len(v);

	if ((v != NULL && jv_type(v) != JV_ARRAY) || n >= max ||
	    (need && n == 0))
		return -1;
	for (size_t i = 0; i < n; i++) {
		out[i] = jv_str(jv_at(v, i));
		if (out[i] == NULL || strlen(out[i]) > AGENT_ARG_MAX)
			return -1;
	}
	out[n] = NULL;
	return 0;
}

int
agent_op_exec_create(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	const char *cmd[AGENT_CMD_MAX + 1], *env[AGENT_ENV_MAX + 1];
	const char *user = jv_str(jv_get(req, "user"));
	const char *wd = jv_str(jv_get(req, "workdir"));
	char cid[72], id[72], msg[DOCKER_MSG_LEN];
	int rc;

	(void)p;
	if (str_list(jv_get(req, "cmd"), cmd, AGENT_CMD_MAX + 1, true) < 0 ||
	    str_list(jv_get(req, "env"), env, AGENT_ENV_MAX + 1, false) < 0)
		return ERR_BAD(e, "cmd or env is not a short list of strings");
	if (agent_container(a, jv_str(jv_get(req, "container")), cid, e) < 0)
		return -1;
	struct docker_exec_spec s = {
	    .container = cid,
	    .cmd = cmd,
	    .env = env,
	    .user = user && strlen(user) < 64 ? user : "1000:1000",
	    .workdir = wd && strlen(wd) < 1024 ? wd : "",
	    .tty = jv_is_true(jv_get(req, "tty")),
	};
	if ((rc = docker_exec_create(a->d, &s, id, msg)) != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	*ans = jv_obj();
	jv_set_str(*ans, "id", id);
	return 0;
}

/* An exec id as the engine makes them: 64 hex digits. */
static const char *
exec_id(const struct jv *req, struct err *e)
{
	const char *id = jv_str(jv_get(req, "id"));

	if (id == NULL || strlen(id) != 64 ||
	    strspn(id, "0123456789abcdef") != 64) {
		ERR_BAD(e, "not an exec id");
		return NULL;
	}
	return id;
}

int
agent_op_exec_resize(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	const char *id = exec_id(req, e);
	int64_t cols = jv_int(jv_get(req, "cols"));
	int64_t rows = jv_int(jv_get(req, "rows"));
	char msg[DOCKER_MSG_LEN];
	int rc;

	(void)p;
	if (id == NULL)
		return -1;
	if (cols < 1 || cols > 1000 || rows < 1 || rows > 1000)
		return ERR_BAD(e, "cols and rows: 1 to 1000");
	rc = docker_exec_resize(a->d, id, (int)cols, (int)rows, msg);
	if (rc != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	*ans = jv_obj();
	return 0;
}

int
agent_op_exec_inspect(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	const char *id = exec_id(req, e);
	char msg[DOCKER_MSG_LEN];
	bool running = false;
	int rc, code = 0;

	(void)p;
	if (id == NULL)
		return -1;
	rc = docker_exec_inspect(a->d, id, &running, &code, msg);
	if (rc != DOCKER_OK)
		return ENGINE_ERR(e, rc, msg);
	*ans = jv_obj();
	jv_set_bool(*ans, "running", running);
	jv_set_int(*ans, "exit_code", code);
	return 0;
}

int
agent_op_image_has(void *arg, const struct nl_peer *p, const struct jv *req,
                   struct jv **ans, struct err *e)
{
	struct agent *a = arg;
	const char *want = jv_str(jv_get(req, "id"));
	char id[80], msg[DOCKER_MSG_LEN];
	int rc;

	(void)p;
	if (want == NULL || strncmp(want, "sha256:", 7) != 0 ||
	    strlen(want) != 71 || strspn(want + 7, "0123456789abcdef") != 64)
		return ERR_BAD(e, "id: sha256:<64 hex>");
	rc = docker_image_id(a->d, want, id, msg);
	if (rc != DOCKER_OK && rc != DOCKER_NOT_FOUND)
		return ENGINE_ERR(e, rc, msg);
	*ans = jv_obj();
	jv_set_bool(*ans, "has", rc == DOCKER_OK && strcmp(id, want) == 0);
	return 0;
}
