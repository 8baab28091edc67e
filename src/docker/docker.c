/*
 * Docker Engine API client over the unix socket.
 *
 * Each call makes its own easy handle: calls come from several threads,
 * cost hundreds of milliseconds on the engine side, and a handle per call
 * keeps them independent.  The API version is negotiated once the engine
 * answers /version: we speak 1.41 (Debian's 20.10 engine) and move up to
 * the engine's minimum when a newer engine refuses 1.41; the request
 * bodies we send mean the same in every version from 1.41 on.
 *
 * The transfers go through src/net/http (libcurl), plain HTTP on the
 * engine's unix socket.
 *
 * "Down" is decided by transport errors only (no socket, refused, timed
 * out); any HTTP answer means the engine is up.  docker_is_up() reports
 * the last outcome so the API can answer 503 without waiting.
 */
#include "docker/docker.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "net/http.h"
#include "docker/internal.h"

struct docker {
	char socket_path[4096];
	pthread_mutex_t mu;
	char prefix[16]; /* "/v1.41" */
	atomic_bool up;
};

struct call {
	struct buf out;
	const atomic_bool *stop;
	void (*on_line)(const struct jv *, void *);
	void *arg;
};

int
docker_new(struct docker **out, const char *socket_path)
{
	struct docker *d = calloc(1, sizeof(*d));

	if (d == NULL || http_global_init() < 0) {
		free(d);
		return -1;
	}
	snprintf(d->socket_path, sizeof(d->socket_path), "%s", socket_path);
	snprintf(d->prefix, sizeof(d->prefix), "/v1.41");
	pthread_mutex_init(&d->mu, NULL);
	atomic_store(&d->up, false);
	*out = d;
	return 0;
}

void
docker_free(struct docker *d)
{
	if (d == NULL)
		return;
	pthread_mutex_destroy(&d->mu);
	free(d);
	http_global_cleanup();
}

void
docker_endpoint(struct docker *d, char path[4096], char prefix[16])
{
	pthread_mutex_lock(&d->mu);
	memcpy(path, d->socket_path, sizeof(d->socket_path));
	memcpy(prefix, d->prefix, sizeof(d->prefix));
	pthread_mutex_unlock(&d->mu);
}

bool
docker_is_up(struct docker *d)
{
	return atomic_load(&d->up);
}

static size_t
collect(const char *ptr, size_t n, void *userdata)
{
	struct call *c = userdata;

	if (buf_append(&c->out, ptr, n) < 0)
		return 0; /* too large: the transfer is aborted */
	return n;
}

/* Event streams: hand every complete line to the callback. */
static size_t
collect_lines(const char *ptr, size_t n, void *userdata)
{
	struct call *c = userdata;
	char *nl, err[128];

	if (buf_append(&c->out, ptr, n) < 0)
		return 0;
	while ((nl = memchr(c->out.data, '\n', c->out.len)) != NULL) {
		size_t len = (size_t)(nl - c->out.data);
		struct jv *ev =
		    jv_parse(c->out.data, len, 16, err, sizeof(err));
		if (ev) {
			c->on_line(ev, c->arg);
			jv_free(ev);
		}
		memmove(c->out.data, nl + 1, c->out.len - len - 1);
		c->out.len -= len + 1;
		c->out.data[c->out.len] = '\0';
	}
	return n;
}

static void
error_message(const struct buf *body, long status, char msg[DOCKER_MSG_LEN])
{
	char err[64];
	struct jv *v =
	    body->len ? jv_parse(body->data, body->len, 8, err, sizeof(err))
	              : NULL;
	const char *m = v ? jv_str(jv_get(v, "message")) : NULL;

	snprintf(msg, DOCKER_MSG_LEN, "docker engine: %s (HTTP %ld)",
	         m ? m : "error", status);
	jv_free(v);
}

static int
status_result(long status, const struct buf *body, char msg[DOCKER_MSG_LEN])
{
	if ((status >= 200 && status < 300) || status == 304)
		return DOCKER_OK;
	error_message(body, status, msg);
	if (status == 404)
		return DOCKER_NOT_FOUND;
	if (status == 409)
		return DOCKER_CONFLICT;
	return DOCKER_ERROR;
}

/*
 * One request.  path starts with '/' and is put after the version prefix
 * unless versioned is false.  resp (optional) receives the body.
 */
static int
request(struct docker *d, const char *method, const char *path, bool versioned,
        const struct jv *body, long timeout_s, struct call *c,
        char msg[DOCKER_MSG_LEN])
{
	static const char *const json_hdr[] = {"Content-Type: application/json",
	                                       NULL};
	char url[2048], prefix[16];
	struct http_call h = {0};
	struct buf req;
	int rc;

	pthread_mutex_lock(&d->mu);
	snprintf(prefix, sizeof(prefix), "%s", versioned ? d->prefix : "");
	pthread_mutex_unlock(&d->mu);
	snprintf(url, sizeof(url), "http://docker%s%s", prefix, path);
	buf_init(&req, 1u << 20);
	h.method = method;
	h.url = url;
	h.unix_socket = d->socket_path;
	h.connect_timeout_ms = DOCKER_CONNECT_TIMEOUT_MS;
	h.timeout_s = timeout_s;
	h.on_body = c->on_line ? collect_lines : collect;
	h.arg = c;
	h.stop = c->stop;
	if (body) {
		jv_dump(body, &req);
		h.headers = json_hdr;
		h.body = req.data;
		h.body_len = req.len;
		h.send_body = true;
	} else if (strcmp(method, "POST") == 0) {
		h.send_body = true;
	}
	rc = http_perform(&h);
	buf_release(&req);
	if (rc < 0 && h.status == 0) {
		atomic_store(&d->up, false);
		snprintf(msg, DOCKER_MSG_LEN,
		         "docker engine unreachable at %s: %s", d->socket_path,
		         h.err);
		return DOCKER_DOWN;
	}
	atomic_store(&d->up, true);
	if (rc < 0 && !(c->stop && atomic_load(c->stop))) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: %s", h.err);
		return c->on_line ? DOCKER_DOWN : DOCKER_ERROR;
	}
	return status_result(h.status, &c->out, msg);
}

/* A plain call: the response body (if wanted) is parsed into *out. */
int
docker_call_json(struct docker *d, const char *method, const char *path,
                 const struct jv *body, long timeout_s, struct jv **out,
                 char msg[DOCKER_MSG_LEN])
{
	struct call c = {0};
	char err[128];
	int rc;

	buf_init(&c.out, DOCKER_MAX_RESPONSE_BYTES);
	rc = request(d, method, path, true, body, timeout_s, &c, msg);
	if (rc == DOCKER_OK && out) {
		*out = jv_parse(c.out.data ? c.out.data : "", c.out.len, 64,
		                err, sizeof(err));
		if (*out == NULL) {
			snprintf(msg, DOCKER_MSG_LEN,
			         "docker engine: bad JSON: %s", err);
			rc = DOCKER_ERROR;
		}
	}
	buf_release(&c.out);
	return rc;
}

static int
version_num(const char *v)
{
	int major = 0, minor = 0;

	if (v == NULL || sscanf(v, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 1000 + minor;
}

int
docker_ping(struct docker *d, char msg[DOCKER_MSG_LEN])
{
	struct call c = {0};
	struct jv *v;
	char err[64];
	int rc, max, min, want = 1041;

	buf_init(&c.out, 1u << 16);
	rc = request(d, "GET", "/version", false, NULL, 5, &c, msg);
	if (rc != DOCKER_OK)
		goto out;
	v = jv_parse(c.out.data ? c.out.data : "", c.out.len, 8, err,
	             sizeof(err));
	max = version_num(jv_str(jv_get(v, "ApiVersion")));
	min = version_num(jv_str(jv_get(v, "MinAPIVersion")));
	jv_free(v);
	if (max && max < want) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "docker engine API %d.%d is older than 1.41",
		         max / 1000, max % 1000);
		rc = DOCKER_ERROR;
		goto out;
	}
	if (min > want)
		want = min;
	pthread_mutex_lock(&d->mu);
	snprintf(d->prefix, sizeof(d->prefix), "/v%d.%d", want / 1000,
	         want % 1000);
	pthread_mutex_unlock(&d->mu);
out:
	buf_release(&c.out);
	return rc;
}

static struct jv *
str_array(const char *const *items, size_t max)
{
	struct jv *a = jv_arr();

	for (size_t i = 0; i < max && items[i]; i++)
		jv_push(a, jv_new_str(items[i]));
	return a;
}

static struct jv *
host_config(const struct docker_spec *s)
{
	struct jv *hc = jv_obj(), *tmpfs = jv_obj(), *ul = jv_obj(), *uls;
	struct jv *restart = jv_obj();

	jv_set(hc, "Binds", str_array(s->binds, 4));
	jv_set_bool(hc, "ReadonlyRootfs", s->read_only);
	jv_set(hc, "CapDrop", str_array((const char *[]){"ALL", NULL}, 1));
	jv_set(hc, "SecurityOpt",
	       str_array((const char *[]){"no-new-privileges", NULL}, 1));
	jv_set_int(hc, "Memory", s->memory_bytes);
	jv_set_int(hc, "MemorySwap", s->memory_bytes);
	jv_set_int(hc, "PidsLimit", s->pids_limit);
	jv_set_str(ul, "Name", "nofile");
	jv_set_int(ul, "Soft", s->nofile);
	jv_set_int(ul, "Hard", s->nofile);
	uls = jv_arr();
	jv_push(uls, ul);
	jv_set(hc, "Ulimits", uls);
	for (size_t i = 0; i < 4 && s->tmpfs[i]; i++) {
		const char *colon = strchr(s->tmpfs[i], ':');
		char path[256];
		size_t len =
		    colon ? (size_t)(colon - s->tmpfs[i]) : strlen(s->tmpfs[i]);
		snprintf(path, sizeof(path), "%.*s", (int)len, s->tmpfs[i]);
		jv_set_str(tmpfs, path, colon ? colon + 1 : "");
	}
	jv_set(hc, "Tmpfs", tmpfs);
	if (s->runtime && *s->runtime)
		jv_set_str(hc, "Runtime", s->runtime);
	if (s->network && *s->network)
		jv_set_str(hc, "NetworkMode", s->network);
	jv_set_str(restart, "Name",
	           s->restart && *s->restart ? s->restart : "no");
	jv_set(hc, "RestartPolicy", restart);
	if (s->init)
		jv_set_bool(hc, "Init", true);
	return hc;
}

int
docker_create(struct docker *d, const struct docker_spec *s, char id[72],
              char msg[DOCKER_MSG_LEN])
{
	struct jv *body = jv_obj(), *labels = jv_obj(), *resp = NULL, *env;
	char path[512];
	int rc;

	jv_set_str(body, "Image", s->image);
	jv_set_str(body, "Hostname", s->hostname);
	jv_set_str(body, "User", s->user);
	env = str_array(s->env, DOCKER_MAX_KV);
	for (size_t i = 0; s->env_more && s->env_more[i]; i++)
		jv_push(env, jv_new_str(s->env_more[i]));
	jv_set(body, "Env", env);
	if (s->entrypoint[0])
		jv_set(body, "Entrypoint", str_array(s->entrypoint, 4));
	if (s->cmd[0])
		jv_set(body, "Cmd", str_array(s->cmd, 8));
	if (s->workdir && *s->workdir)
		jv_set_str(body, "WorkingDir", s->workdir);
	for (size_t i = 0; i < DOCKER_MAX_KV && s->labels[i].key; i++)
		jv_set_str(labels, s->labels[i].key, s->labels[i].value);
	jv_set(body, "Labels", labels);
	jv_set(body, "HostConfig", host_config(s));
	snprintf(path, sizeof(path), "/containers/create?name=%s", s->name);
	rc = docker_call_json(d, "POST", path, body, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc == DOCKER_OK)
		snprintf(id, 72, "%s",
		         jv_str(jv_get(resp, "Id")) ? jv_str(jv_get(resp, "Id"))
		                                    : "");
	jv_free(resp);
	jv_free(body);
	return rc;
}

/* A call without a body whose answer only says whether it worked. */
static int __attribute__((format(printf, 5, 6)))
simple(struct docker *d, const char *method, long timeout_s,
       char msg[DOCKER_MSG_LEN], const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return docker_call_json(d, method, path, NULL, timeout_s, NULL, msg);
}

int
docker_start(struct docker *d, const char *id, char msg[DOCKER_MSG_LEN])
{
	return simple(d, "POST", DOCKER_CALL_TIMEOUT_S, msg,
	              "/containers/%s/start", id);
}

int
docker_stop(struct docker *d, const char *id, int grace_s,
            char msg[DOCKER_MSG_LEN])
{
	char path[512];

	snprintf(path, sizeof(path), "/containers/%s/stop?t=%d", id, grace_s);
	return docker_call_json(d, "POST", path, NULL,
	                        grace_s + DOCKER_CALL_TIMEOUT_S, NULL, msg);
}

int
docker_remove(struct docker *d, const char *id, char msg[DOCKER_MSG_LEN])
{
	return simple(d, "DELETE", DOCKER_CALL_TIMEOUT_S, msg,
	              "/containers/%s?force=true&v=true", id);
}

static void
copy_str(char *out, size_t len, const struct jv *v)
{
	snprintf(out, len, "%s", jv_str(v) ? jv_str(v) : "");
}

static void
state_ip(const struct jv *net, struct docker_state *st)
{
	const char *key, *ip = jv_str(jv_get(net, "IPAddress"));
	struct jv *networks = jv_get(net, "Networks"), *val;
	void *it = NULL;

	while ((ip == NULL || *ip == '\0') && networks &&
	       jv_each(networks, &it, &key, &val)) {
		ip = jv_str(jv_get(val, "IPAddress"));
		if (st->network_id[0] == '\0')
			copy_str(st->network_id, sizeof(st->network_id),
			         jv_get(val, "NetworkID"));
	}
	snprintf(st->ip, sizeof(st->ip), "%s", ip ? ip : "");
}

int
docker_inspect(struct docker *d, const char *id, struct docker_state *st,
               char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL, *state;
	char path[512];
	const char *s;
	int rc;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/containers/%s/json", id);
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc != DOCKER_OK)
		return rc;
	state = jv_get(resp, "State");
	s = jv_str(jv_get(resp, "Id"));
	snprintf(st->id, sizeof(st->id), "%s", s ? s : "");
	st->running = jv_is_true(jv_get(state, "Running"));
	st->paused = jv_is_true(jv_get(state, "Paused"));
	st->oom_killed = jv_is_true(jv_get(state, "OOMKilled"));
	st->exit_code = (int)jv_int(jv_get(state, "ExitCode"));
	s = jv_str(jv_get(state, "Status"));
	snprintf(st->status, sizeof(st->status), "%s", s ? s : "");
	state_ip(jv_get(resp, "NetworkSettings"), st);
	copy_str(st->image_id, sizeof(st->image_id), jv_get(resp, "Image"));
	jv_free(resp);
	return DOCKER_OK;
}

/* The first IPv4 entry of a network's IPAM configuration. */
static void
network_ipam(const struct jv *cfg, struct docker_network *n)
{
	for (size_t i = 0; i < jv_len(cfg); i++) {
		const char *sub = jv_str(jv_get(jv_at(cfg, i), "Subnet"));
		const char *gw = jv_str(jv_get(jv_at(cfg, i), "Gateway"));
		if (sub == NULL || strchr(sub, '.') == NULL)
			continue; /* IPv6 */
		snprintf(n->subnet, sizeof(n->subnet), "%s", sub);
		snprintf(n->gateway, sizeof(n->gateway), "%s",
		         gw && strchr(gw, '.') ? gw : "");
		return;
	}
}

/* Appends n bytes to the ring out (cap bytes, *used so far), keeping
 * the last ones; control bytes but newline and tab become '?'. */
static void
tail_add(char *out, size_t cap, size_t *used, const char *p, size_t n)
{
	if (n >= cap) {
		p += n - cap;
		n = cap;
	}
	if (*used + n > cap) {
		size_t drop = *used + n - cap;

		memmove(out, out + drop, *used - drop);
		*used -= drop;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		out[(*used)++] =
		    ch == '\n' || ch == '\t' || (ch >= 0x20 && ch != 0x7f)
		        ? (char)ch
		        : '?';
	}
}

int
docker_logs_tail(struct docker *d, const char *id, int lines, char *out,
                 size_t len, char msg[DOCKER_MSG_LEN])
{
	struct call c = {0};
	char path[512];
	size_t used = 0, off = 0;
	int rc;

	if (len == 0)
		return DOCKER_ERROR;
	out[0] = '\0';
	buf_init(&c.out, DOCKER_LOGS_MAX);
	snprintf(path, sizeof(path),
	         "/containers/%s/logs?stdout=1&stderr=1&tail=%d", id, lines);
	rc =
	    request(d, "GET", path, true, NULL, DOCKER_CALL_TIMEOUT_S, &c, msg);
	/* Frames of 8 bytes of head (stream, 0, 0, 0, big-endian length),
	 * else (a container with a terminal) the bytes as they are. */
	while (rc == DOCKER_OK && off + DOCKER_MUX_HEAD <= c.out.len) {
		const unsigned char *h =
		    (const unsigned char *)c.out.data + off;
		size_t n = (size_t)h[4] << 24 | (size_t)h[5] << 16 |
		           (size_t)h[6] << 8 | h[7];

		if (h[0] > 2 || h[1] || h[2] || h[3])
			break;
		off += DOCKER_MUX_HEAD;
		n = n < c.out.len - off ? n : c.out.len - off;
		tail_add(out, len - 1, &used, c.out.data + off, n);
		off += n;
	}
	if (rc == DOCKER_OK && off < c.out.len && used == 0)
		tail_add(out, len - 1, &used, c.out.data + off,
		         c.out.len - off);
	out[used] = '\0';
	buf_release(&c.out);
	return rc;
}

int
docker_network_inspect(struct docker *d, const char *name,
                       struct docker_network *n, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL, *opts, *labels, *cs;
	char path[512], esc[400];
	const char *icc, *key;
	struct jv *val;
	void *it = NULL;
	int rc;

	memset(n, 0, sizeof(*n));
	if (http_escape(name, esc, sizeof(esc)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "/networks/%s", esc);
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc != DOCKER_OK)
		return rc;
	opts = jv_get(resp, "Options");
	labels = jv_get(resp, "Labels");
	copy_str(n->id, sizeof(n->id), jv_get(resp, "Id"));
	copy_str(n->driver, sizeof(n->driver), jv_get(resp, "Driver"));
	copy_str(n->bridge, sizeof(n->bridge),
	         jv_get(opts, "com.docker.network.bridge.name"));
	copy_str(n->instance, sizeof(n->instance),
	         jv_get(labels, "sandboxd.instance"));
	n->managed =
	    jv_str(jv_get(labels, "sandboxd.network")) &&
	    strcmp(jv_str(jv_get(labels, "sandboxd.network")), "true") == 0;
	icc = jv_str(jv_get(opts, "com.docker.network.bridge.enable_icc"));
	n->icc = icc == NULL || strcmp(icc, "false") != 0;
	network_ipam(jv_get(jv_get(resp, "IPAM"), "Config"), n);
	copy_str(n->scope, sizeof(n->scope), jv_get(resp, "Scope"));
	n->config_only = jv_is_true(jv_get(resp, "ConfigOnly"));
	n->attachable = jv_is_true(jv_get(resp, "Attachable"));
	copy_str(n->config_from, sizeof(n->config_from),
	         jv_get(jv_get(resp, "ConfigFrom"), "Network"));
	cs = jv_get(resp, "Containers");
	while (cs && jv_each(cs, &it, &key, &val))
		n->containers++;
	jv_free(resp);
	return DOCKER_OK;
}

int
docker_network_create(struct docker *d, const struct docker_network_spec *s,
                      char msg[DOCKER_MSG_LEN])
{
	struct jv *body = jv_obj(), *ipam = jv_obj(), *cfgs = jv_arr();
	struct jv *cfg = jv_obj(), *opts = jv_obj(), *labels = jv_obj();
	int rc;

	jv_set_str(body, "Name", s->name);
	jv_set_str(body, "Driver", "bridge");
	jv_set_bool(body, "CheckDuplicate", true);
	if (s->config_from && *s->config_from) {
		/* No labels, options or IPAM: the engine refuses them on a
		 * network that takes its configuration from another.
		 * Attachable: the containers that are not services (a
		 * publish's build and production containers) join it too. */
		jv_set_str(body, "Scope", "swarm");
		jv_set_bool(body, "Attachable", true);
		jv_set_str(cfg, "Network", s->config_from);
		jv_set(body, "ConfigFrom", cfg);
		jv_free(ipam);
		jv_free(cfgs);
		jv_free(opts);
		jv_free(labels);
		goto send;
	}
	if (s->config_only)
		jv_set_bool(body, "ConfigOnly", true);
	jv_set_bool(body, "Internal", false);
	jv_set_bool(body, "EnableIPv6", false);
	jv_set_str(cfg, "Subnet", s->subnet);
	jv_set_str(cfg, "Gateway", s->gateway);
	jv_push(cfgs, cfg);
	jv_set_str(ipam, "Driver", "default");
	jv_set(ipam, "Config", cfgs);
	jv_set(body, "IPAM", ipam);
	jv_set_str(opts, "com.docker.network.bridge.name", s->bridge);
	jv_set_str(opts, "com.docker.network.bridge.enable_icc", "false");
	jv_set_str(opts, "com.docker.network.bridge.enable_ip_masquerade",
	           "true");
	jv_set(body, "Options", opts);
	jv_set_str(labels, "sandboxd.network", "true");
	jv_set_str(labels, "sandboxd.instance", s->instance);
	jv_set(body, "Labels", labels);
send:
	rc = docker_call_json(d, "POST", "/networks/create", body,
	                      DOCKER_CALL_TIMEOUT_S, NULL, msg);
	jv_free(body);
	return rc;
}

int
docker_network_remove(struct docker *d, const char *name,
                      char msg[DOCKER_MSG_LEN])
{
	char esc[400];

	if (http_escape(name, esc, sizeof(esc)) < 0)
		return DOCKER_ERROR;
	return simple(d, "DELETE", DOCKER_CALL_TIMEOUT_S, msg, "/networks/%s",
	              esc);
}

int
docker_network_subnets(struct docker *d, void (*fn)(const char *, void *),
                       void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	int rc;

	rc = docker_call_json(d, "GET", "/networks", NULL,
	                      DOCKER_CALL_TIMEOUT_S, &resp, msg);
	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *cfg =
		    jv_get(jv_get(jv_at(resp, i), "IPAM"), "Config");
		for (size_t k = 0; k < jv_len(cfg); k++) {
			const char *sub =
			    jv_str(jv_get(jv_at(cfg, k), "Subnet"));
			if (sub && strchr(sub, '.'))
				fn(sub, arg);
		}
	}
	jv_free(resp);
	return rc;
}

int
docker_label_filter(const char *label, const char *value, bool events,
                    char *out, size_t len)
{
	char raw[512];

	snprintf(raw, sizeof(raw), "{\"label\":[\"%s=%s\"]%s}", label, value,
	         events ? ",\"type\":[\"container\"]" : "");
	return http_escape(raw, out, len);
}

int
docker_get_labelled(struct docker *d, const char *base, const char *label,
                    const char *value, struct jv **resp,
                    char msg[DOCKER_MSG_LEN])
{
	char q[1024], path[1200];

	*resp = NULL;
	if (docker_label_filter(label, value, false, q, sizeof(q)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "%s%s", base, q);
	return docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                        resp, msg);
}

int
docker_list(struct docker *d, const char *label, const char *value,
            void (*fn)(const char *id, const struct jv *labels, void *),
            void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp;
	int rc = docker_get_labelled(
	    d, "/containers/json?all=true&filters=", label, value, &resp, msg);

	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++) {
		struct jv *c = jv_at(resp, i);
		const char *id = jv_str(jv_get(c, "Id"));
		if (id)
			fn(id, jv_get(c, "Labels"), arg);
	}
	jv_free(resp);
	return rc;
}

int
docker_events(struct docker *d, const char *label, const char *value,
              int64_t since, void (*fn)(const struct jv *ev, void *), void *arg,
              const atomic_bool *stop)
{
	struct call c = {.stop = stop, .on_line = fn, .arg = arg};
	char q[1024], path[1200], msg[DOCKER_MSG_LEN];
	int rc;

	if (docker_label_filter(label, value, true, q, sizeof(q)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "/events?since=%lld&filters=%s",
	         (long long)since, q);
	buf_init(&c.out, DOCKER_EVENT_LINE_BYTES);
	rc = request(d, "GET", path, true, NULL, 0, &c, msg);
	if (rc != DOCKER_OK && !*stop)
		log_warn("docker events: %s", msg);
	buf_release(&c.out);
	return rc;
}
