/*
 * Swarm services and tasks (swarm.h), on the manager's engine.
 *
 * A service's spec is written whole from a struct swarm_service once,
 * at create; every later change (replicas, a forced update, the node
 * constraint, the workspace's bind source) is a read-modify-write of the
 * Spec the engine gives back, sent with the Version it came with, so
 * nothing the engine or another writer put there is lost.  Two writers
 * racing get "update out of sequence" for the loser, which reads again.
 *
 * Tasks are read with GET /tasks?filters={"service":[name]}: Swarm 20.10
 * emits no task events, so callers poll.  The newest task (by its
 * Version.Index) is the one that speaks for the service.
 */
#include "docker/swarm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/limits.h"
#include "net/http.h"
#include "docker/internal.h"

static void
copy_str(char *out, size_t len, const struct jv *v)
{
	snprintf(out, len, "%s", jv_str(v) ? jv_str(v) : "");
}

static struct jv *
str_array(const char *const *items, size_t max)
{
	struct jv *a = jv_arr();

	for (size_t i = 0; i < max && items[i]; i++)
		jv_push(a, jv_new_str(items[i]));
	return a;
}

/* "512m" -> bytes; 0 when it is not a size. */
static int64_t
parse_size(const char *s, size_t len)
{
	int64_t n = 0;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (n > (INT64_MAX >> 31))
			return 0;
		n = n * 10 + (s[i] - '0');
	}
	if (i == len)
		return n;
	switch (s[i] | 0x20) {
	case 'k':
		return n << 10;
	case 'm':
		return n << 20;
	case 'g':
		return n << 30;
	default:
		return 0;
	}
}

/* "/tmp:size=512m,mode=1777" as a tmpfs mount. */
static struct jv *
tmpfs_mount(const char *spec)
{
	struct jv *m = jv_obj(), *o = jv_obj();
	const char *colon = strchr(spec, ':'), *p;
	char target[256];

	snprintf(target, sizeof(target), "%.*s",
	         (int)(colon ? (size_t)(colon - spec) : strlen(spec)), spec);
	jv_set_str(m, "Type", "tmpfs");
	jv_set_str(m, "Target", target);
	for (p = colon ? colon + 1 : ""; *p;) {
		size_t len = strcspn(p, ",");
		if (len > 5 && strncmp(p, "size=", 5) == 0)
			jv_set_int(o, "SizeBytes", parse_size(p + 5, len - 5));
		else if (len > 5 && strncmp(p, "mode=", 5) == 0)
			jv_set_int(o, "Mode", strtol(p + 5, NULL, 8));
		p += len + (p[len] == ',');
	}
	jv_set(m, "TmpfsOptions", o);
	return m;
}

/* "src:dst[:ro]" as a bind mount. */
static struct jv *
bind_mount(const char *spec)
{
	struct jv *m = jv_obj();
	const char *c1 = strchr(spec, ':'), *c2;
	char src[1024], dst[256];

	if (c1 == NULL) {
		jv_free(m);
		return NULL;
	}
	c2 = strchr(c1 + 1, ':');
	snprintf(src, sizeof(src), "%.*s", (int)(c1 - spec), spec);
	snprintf(dst, sizeof(dst), "%.*s",
	         (int)(c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1)), c1 + 1);
	jv_set_str(m, "Type", "bind");
	jv_set_str(m, "Source", src);
	jv_set_str(m, "Target", dst);
	jv_set_bool(m, "ReadOnly", c2 && strcmp(c2 + 1, "ro") == 0);
	return m;
}

static struct jv *
labels_obj(const struct docker_spec *c)
{
	struct jv *l = jv_obj();

	for (size_t i = 0; i < DOCKER_MAX_KV && c->labels[i].key; i++)
		jv_set_str(l, c->labels[i].key, c->labels[i].value);
	return l;
}

static struct jv *
container_spec(const struct swarm_service *s)
{
	const struct docker_spec *c = &s->c;
	struct jv *cs = jv_obj(), *env, *mounts = jv_arr(), *ul = jv_obj();
	struct jv *uls = jv_arr();

	jv_set_str(cs, "Image", c->image);
	jv_set(cs, "Labels", labels_obj(c));
	if (c->entrypoint[0])
		jv_set(cs, "Command", str_array(c->entrypoint, 4));
	if (c->cmd[0])
		jv_set(cs, "Args", str_array(c->cmd, 8));
	if (c->hostname && *c->hostname)
		jv_set_str(cs, "Hostname", c->hostname);
	env = str_array(c->env, DOCKER_MAX_KV);
	for (size_t i = 0; c->env_more && c->env_more[i]; i++)
		jv_push(env, jv_new_str(c->env_more[i]));
	jv_set(cs, "Env", env);
	if (c->workdir && *c->workdir)
		jv_set_str(cs, "Dir", c->workdir);
	if (c->user && *c->user)
		jv_set_str(cs, "User", c->user);
	if (c->init)
		jv_set_bool(cs, "Init", true);
	jv_set_bool(cs, "ReadOnly", c->read_only);
	for (size_t i = 0; i < 4 && c->binds[i]; i++)
		jv_push(mounts, bind_mount(c->binds[i]));
	for (size_t i = 0; i < 4 && c->tmpfs[i]; i++)
		jv_push(mounts, tmpfs_mount(c->tmpfs[i]));
	jv_set(cs, "Mounts", mounts);
	if (s->stop_grace_s > 0)
		jv_set_int(cs, "StopGracePeriod",
		           (int64_t)s->stop_grace_s * 1000000000);
	jv_set(cs, "CapabilityDrop",
	       str_array((const char *[]){"ALL", NULL}, 1));
	if (c->nofile > 0) {
		jv_set_str(ul, "Name", "nofile");
		jv_set_int(ul, "Soft", c->nofile);
		jv_set_int(ul, "Hard", c->nofile);
		jv_push(uls, ul);
	} else {
		jv_free(ul);
	}
	jv_set(cs, "Ulimits", uls);
	return cs;
}

static struct jv *
resources(const struct swarm_service *s)
{
	struct jv *r = jv_obj(), *lim = jv_obj(), *res = jv_obj();

	if (s->c.memory_bytes > 0)
		jv_set_int(lim, "MemoryBytes", s->c.memory_bytes);
	if (s->c.pids_limit > 0)
		jv_set_int(lim, "Pids", s->c.pids_limit);
	if (s->reserve_bytes > 0)
		jv_set_int(res, "MemoryBytes", s->reserve_bytes);
	jv_set(r, "Limits", lim);
	jv_set(r, "Reservations", res);
	return r;
}

struct jv *
swarm_service_json(const struct swarm_service *s)
{
	struct jv *body = jv_obj(), *tt = jv_obj(), *rp = jv_obj();
	struct jv *pl = jv_obj(), *mode = jv_obj(), *rep = jv_obj();
	struct jv *ep = jv_obj();

	jv_set_str(body, "Name", s->c.name);
	jv_set(body, "Labels", labels_obj(&s->c));
	jv_set(tt, "ContainerSpec", container_spec(s));
	jv_set(tt, "Resources", resources(s));
	jv_set_str(rp, "Condition", "none");
	jv_set(tt, "RestartPolicy", rp);
	jv_set(pl, "Constraints",
	       str_array(s->constraints, SWARM_MAX_CONSTRAINTS));
	jv_set(tt, "Placement", pl);
	if (s->c.network && *s->c.network) {
		struct jv *nets = jv_arr(), *n = jv_obj();
		jv_set_str(n, "Target", s->c.network);
		jv_push(nets, n);
		jv_set(tt, "Networks", nets);
	}
	jv_set_int(tt, "ForceUpdate", (int64_t)s->force_update);
	jv_set(body, "TaskTemplate", tt);
	jv_set_int(rep, "Replicas", s->replicas);
	jv_set(mode, "Replicated", rep);
	jv_set(body, "Mode", mode);
	jv_set_str(ep, "Mode", "dnsrr");
	jv_set(body, "EndpointSpec", ep);
	return body;
}

int
swarm_service_create(struct docker *d, const struct swarm_service *s,
                     char id[72], char msg[DOCKER_MSG_LEN])
{
	struct jv *body = swarm_service_json(s), *resp = NULL;
	int rc;

	rc = docker_call_json(d, "POST", "/services/create", body,
	                      DOCKER_CALL_TIMEOUT_S, &resp, msg);
	if (rc == DOCKER_OK)
		copy_str(id, 72, jv_get(resp, "ID"));
	jv_free(resp);
	jv_free(body);
	return rc;
}

/* "/services/<name, escaped>"; -1 when it does not fit. */
static int
service_path(char *out, size_t len, const char *name)
{
	char esc[400];

	if (http_escape(name, esc, sizeof(esc)) < 0)
		return -1;
	snprintf(out, len, "/services/%s", esc);
	return 0;
}

int
swarm_service_inspect(struct docker *d, const char *name,
                      struct swarm_service_state *st, struct jv **spec,
                      char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL, *sp;
	char path[512];
	int rc;

	memset(st, 0, sizeof(*st));
	if (service_path(path, sizeof(path), name) < 0)
		return DOCKER_ERROR;
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc != DOCKER_OK)
		return rc;
	sp = jv_get(resp, "Spec");
	copy_str(st->id, sizeof(st->id), jv_get(resp, "ID"));
	st->version =
	    (uint64_t)jv_int(jv_get(jv_get(resp, "Version"), "Index"));
	st->replicas = (int)jv_int(
	    jv_get(jv_get(jv_get(sp, "Mode"), "Replicated"), "Replicas"));
	st->force_update =
	    (uint64_t)jv_int(jv_get(jv_get(sp, "TaskTemplate"), "ForceUpdate"));
	if (spec)
		*spec = sp ? jv_copy(sp) : NULL;
	jv_free(resp);
	if (spec && *spec == NULL) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "docker engine: service %s has "
		         "no spec",
		         name);
		return DOCKER_ERROR;
	}
	return DOCKER_OK;
}

int
swarm_service_update(struct docker *d, const char *name, swarm_edit_fn edit,
                     void *arg, char msg[DOCKER_MSG_LEN])
{
	struct swarm_service_state st;
	char path[512], esc[400];
	int rc = DOCKER_ERROR;

	if (http_escape(name, esc, sizeof(esc)) < 0)
		return DOCKER_ERROR;
	for (int i = 0; i < SWARM_UPDATE_TRIES; i++) {
		struct jv *spec = NULL;

		rc = swarm_service_inspect(d, name, &st, &spec, msg);
		if (rc != DOCKER_OK)
			return rc;
		if (edit(spec, arg, msg) < 0) {
			jv_free(spec);
			return DOCKER_ERROR;
		}
		snprintf(path, sizeof(path), "/services/%s/update?version=%llu",
		         esc, (unsigned long long)st.version);
		rc = docker_call_json(d, "POST", path, spec,
		                      DOCKER_CALL_TIMEOUT_S, NULL, msg);
		jv_free(spec);
		if (rc == DOCKER_OK || strstr(msg, "out of sequence") == NULL)
			return rc;
	}
	return rc;
}

/* obj[key], made an object when missing (spec is ours to change). */
static struct jv *
child(struct jv *obj, const char *key)
{
	struct jv *c = jv_get(obj, key);

	if (c == NULL || jv_type(c) != JV_OBJECT) {
		jv_set(obj, key, jv_obj());
		c = jv_get(obj, key);
	}
	return c;
}

int
swarm_spec_set_replicas(struct jv *spec, int replicas, bool force)
{
	struct jv *rep, *tt;

	if (spec == NULL || jv_type(spec) != JV_OBJECT)
		return -1;
	rep = child(child(spec, "Mode"), "Replicated");
	jv_set_int(rep, "Replicas", replicas);
	if (force) {
		tt = child(spec, "TaskTemplate");
		jv_set_int(tt, "ForceUpdate",
		           jv_int(jv_get(tt, "ForceUpdate")) + 1);
	}
	return 0;
}

int
swarm_spec_set_constraint(struct jv *spec, const char *prefix, const char *c)
{
	struct jv *pl, *old, *now = jv_arr();

	if (spec == NULL || jv_type(spec) != JV_OBJECT) {
		jv_free(now);
		return -1;
	}
	pl = child(child(spec, "TaskTemplate"), "Placement");
	old = jv_get(pl, "Constraints");
	for (size_t i = 0; i < jv_len(old); i++) {
		const char *s = jv_str(jv_at(old, i));
		if (s && strncmp(s, prefix, strlen(prefix)) != 0)
			jv_push(now, jv_new_str(s));
	}
	if (c)
		jv_push(now, jv_new_str(c));
	jv_set(pl, "Constraints", now);
	return 0;
}

int
swarm_spec_set_bind(struct jv *spec, const char *target, const char *source)
{
	struct jv *mounts = jv_get(
	    jv_get(jv_get(spec, "TaskTemplate"), "ContainerSpec"), "Mounts");

	for (size_t i = 0; i < jv_len(mounts); i++) {
		struct jv *m = jv_at(mounts, i);
		const char *t = jv_str(jv_get(m, "Target"));
		const char *type = jv_str(jv_get(m, "Type"));
		if (t && type && strcmp(t, target) == 0 &&
		    strcmp(type, "bind") == 0) {
			jv_set_str(m, "Source", source);
			return 0;
		}
	}
	return -1;
}

int
swarm_service_remove(struct docker *d, const char *name,
                     char msg[DOCKER_MSG_LEN])
{
	char path[512];

	if (service_path(path, sizeof(path), name) < 0)
		return DOCKER_ERROR;
	return docker_call_json(d, "DELETE", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                        NULL, msg);
}

int
swarm_service_list(struct docker *d, const char *label, const char *value,
                   void (*fn)(const char *, const char *, const struct jv *,
                              void *),
                   void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp;
	int rc = docker_get_labelled(d, "/services?filters=", label, value,
	                             &resp, msg);

	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *s = jv_at(resp, i), *sp = jv_get(s, "Spec");
		const char *name = jv_str(jv_get(sp, "Name"));
		const char *id = jv_str(jv_get(s, "ID"));
		if (name && id)
			fn(name, id, jv_get(sp, "Labels"), arg);
	}
	jv_free(resp);
	return rc;
}

/* "2026-12-05T06:48:02.123456789Z" -> unix ms; 0 when unreadable. */
static int64_t
rfc3339_ms(const char *s)
{
	struct tm tm = {0};
	int ms = 0, digits = 0;
	const char *p;

	if (s == NULL ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon,
	           &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return 0;
	if (tm.tm_year < 1970)
		return 0; /* "0001-01-01T00:00:00Z": never */
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	p = strchr(s, '.');
	for (p = p ? p + 1 : ""; *p >= '0' && *p <= '9'; p++)
		if (digits < 3) {
			ms = ms * 10 + (*p - '0');
			digits++;
		}
	while (digits > 0 && digits < 3) {
		ms *= 10;
		digits++;
	}
	return (int64_t)timegm(&tm) * 1000 + ms;
}

int
swarm_task_parse(const struct jv *t, struct swarm_task *out)
{
	struct jv *st = jv_get(t, "Status");

	memset(out, 0, sizeof(*out));
	if (jv_type(t) != JV_OBJECT || jv_str(jv_get(t, "ID")) == NULL)
		return -1;
	copy_str(out->id, sizeof(out->id), jv_get(t, "ID"));
	copy_str(out->service_id, sizeof(out->service_id),
	         jv_get(t, "ServiceID"));
	copy_str(out->node_id, sizeof(out->node_id), jv_get(t, "NodeID"));
	copy_str(out->container_id, sizeof(out->container_id),
	         jv_get(jv_get(st, "ContainerStatus"), "ContainerID"));
	copy_str(out->state, sizeof(out->state), jv_get(st, "State"));
	copy_str(out->desired, sizeof(out->desired), jv_get(t, "DesiredState"));
	copy_str(out->err, sizeof(out->err), jv_get(st, "Err"));
	copy_str(out->message, sizeof(out->message), jv_get(st, "Message"));
	out->exit_code =
	    (int)jv_int(jv_get(jv_get(st, "ContainerStatus"), "ExitCode"));
	out->slot = jv_int(jv_get(t, "Slot"));
	out->version = (uint64_t)jv_int(jv_get(jv_get(t, "Version"), "Index"));
	out->created_ms = rfc3339_ms(jv_str(jv_get(t, "CreatedAt")));
	out->updated_ms = rfc3339_ms(jv_str(jv_get(st, "Timestamp")));
	return 0;
}

static int
newer_first(const void *a, const void *b)
{
	const struct swarm_task *x = a, *y = b;

	return x->version < y->version ? 1 : x->version > y->version ? -1 : 0;
}

size_t
swarm_tasks_parse(const struct jv *arr, struct swarm_task *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < jv_len(arr) && n < max; i++)
		if (swarm_task_parse(jv_at(arr, i), &out[n]) == 0)
			n++;
	qsort(out, n, sizeof(*out), newer_first);
	return n;
}

const struct swarm_task *
swarm_task_current(const struct swarm_task *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].desired, "running") == 0)
			return &t[i];
	return n ? &t[0] : NULL;
}

enum swarm_phase
swarm_task_phase(const struct swarm_task *t)
{
	static const char *const pending[] = {
	    "new",       "pending", "assigned", "accepted",
	    "preparing", "ready",   "starting", NULL};
	static const char *const failed[] = {"failed", "rejected", "complete",
	                                     "orphaned", NULL};

	if (t == NULL)
		return SWARM_NONE;
	if (strcmp(t->state, "running") == 0)
		return SWARM_RUNNING;
	for (size_t i = 0; pending[i]; i++)
		if (strcmp(t->state, pending[i]) == 0)
			return strcmp(t->state, "pending") == 0 && t->err[0]
			           ? SWARM_NO_NODE
			           : SWARM_PENDING;
	for (size_t i = 0; failed[i]; i++)
		if (strcmp(t->state, failed[i]) == 0)
			return SWARM_FAILED;
	return SWARM_SHUTDOWN; /* shutdown remove */
}

int
swarm_tasks(struct docker *d, const char *service, struct swarm_task *out,
            size_t max, size_t *n, char msg[DOCKER_MSG_LEN])
{
	char raw[512], q[1024], path[1200];
	struct jv *resp = NULL;
	int rc;

	*n = 0;
	if (strchr(service, '"') || strchr(service, '\\'))
		return DOCKER_ERROR;
	snprintf(raw, sizeof(raw), "{\"service\":[\"%s\"]}", service);
	if (http_escape(raw, q, sizeof(q)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "/tasks?filters=%s", q);
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc == DOCKER_OK)
		*n = swarm_tasks_parse(resp, out, max);
	jv_free(resp);
	return rc;
}

int
swarm_task_reservations(struct docker *d,
                        void (*fn)(const char *node_id, int64_t reserve,
                                   void *),
                        void *arg, char msg[DOCKER_MSG_LEN])
{
	char q[256], path[400];
	struct jv *resp = NULL;
	int rc;

	if (http_escape("{\"desired-state\":[\"running\"]}", q, sizeof(q)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "/tasks?filters=%s", q);
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *t = jv_at(resp, i), *spec = jv_get(t, "Spec");
		const char *node = jv_str(jv_get(t, "NodeID"));
		const char *state =
		    jv_str(jv_get(jv_get(t, "Status"), "State"));
		struct jv *labels =
		    jv_get(jv_get(spec, "ContainerSpec"), "Labels");

		if (node == NULL || state == NULL ||
		    strcmp(state, "running") != 0 ||
		    jv_get(labels, "sandboxd.sandbox") == NULL)
			continue;
		fn(node,
		   jv_int(
		       jv_get(jv_get(jv_get(spec, "Resources"), "Reservations"),
		              "MemoryBytes")),
		   arg);
	}
	jv_free(resp);
	return rc;
}

int
swarm_service_counts(struct docker *d, const char *label, const char *value,
                     void (*fn)(const char *name, int replicas, int running,
                                void *),
                     void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp;
	int rc = docker_get_labelled(d, "/services?status=true&filters=", label,
	                             value, &resp, msg);

	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *s = jv_at(resp, i), *sp = jv_get(s, "Spec");
		const char *name = jv_str(jv_get(sp, "Name"));
		struct jv *st = jv_get(s, "ServiceStatus");

		if (name && st)
			fn(name,
			   (int)jv_int(
			       jv_get(jv_get(jv_get(sp, "Mode"), "Replicated"),
			              "Replicas")),
			   (int)jv_int(jv_get(st, "RunningTasks")), arg);
	}
	jv_free(resp);
	return rc;
}
