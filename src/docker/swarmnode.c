/*
 * Swarm nodes and the swarm itself (swarm.h), and what a node's engine
 * is asked about its own containers and images in swarm mode: memory
 * with swap (services set no MemorySwap), the container's PID (the
 * post-start checks read its /proc status), and images over a stream
 * (a joining node gets the sandbox image from the manager's engine, as
 * there is no registry).
 *
 * `docker load` takes the tar as the request's body, which libcurl would
 * need whole or from a callback it pulls: the body is written by hand,
 * chunked, on a unix socket of its own (as exec.c's start), so a 1 GB
 * image goes through in bounded memory.
 */
#include "docker/swarm.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/limits.h"
#include "net/http.h"
#include "docker/internal.h"

#define SWARM_IMAGE_IO_MS 300000 /* a load's answer: the engine unpacks */
#define SWARM_IMAGE_CHUNK (64u << 10)

static void
copy_str(char *out, size_t len, const struct jv *v)
{
	snprintf(out, len, "%s", jv_str(v) ? jv_str(v) : "");
}

static bool
label_is(const struct jv *labels, const char *key, const char *value)
{
	const char *v = jv_str(jv_get(labels, key));

	return v && strcmp(v, value) == 0;
}

int
swarm_info(struct docker *d, struct swarm_info *out, char msg[DOCKER_MSG_LEN])
{
	struct jv *info = NULL, *sw, *tok;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = docker_call_json(d, "GET", "/info", NULL, DOCKER_CALL_TIMEOUT_S,
	                      &info, msg);
	if (rc != DOCKER_OK)
		return rc;
	sw = jv_get(info, "Swarm");
	copy_str(out->state, sizeof(out->state), jv_get(sw, "LocalNodeState"));
	copy_str(out->node_id, sizeof(out->node_id), jv_get(sw, "NodeID"));
	copy_str(out->node_addr, sizeof(out->node_addr),
	         jv_get(sw, "NodeAddr"));
	copy_str(out->cluster_id, sizeof(out->cluster_id),
	         jv_get(jv_get(sw, "Cluster"), "ID"));
	out->manager = jv_is_true(jv_get(sw, "ControlAvailable"));
	jv_free(info);
	if (!out->manager)
		return DOCKER_OK;
	rc = docker_call_json(d, "GET", "/swarm", NULL, DOCKER_CALL_TIMEOUT_S,
	                      &info, msg);
	if (rc != DOCKER_OK)
		return rc;
	tok = jv_get(info, "JoinTokens");
	copy_str(out->worker_token, sizeof(out->worker_token),
	         jv_get(tok, "Worker"));
	copy_str(out->manager_token, sizeof(out->manager_token),
	         jv_get(tok, "Manager"));
	jv_free(info);
	return DOCKER_OK;
}

int
swarm_node_parse(const struct jv *n, struct swarm_node *out)
{
	struct jv *spec = jv_get(n, "Spec"), *labels, *st;

	memset(out, 0, sizeof(*out));
	if (jv_type(n) != JV_OBJECT || jv_str(jv_get(n, "ID")) == NULL)
		return -1;
	labels = jv_get(spec, "Labels");
	st = jv_get(n, "Status");
	copy_str(out->id, sizeof(out->id), jv_get(n, "ID"));
	copy_str(out->hostname, sizeof(out->hostname),
	         jv_get(jv_get(n, "Description"), "Hostname"));
	copy_str(out->name, sizeof(out->name), jv_get(labels, "sandboxd.node"));
	copy_str(out->state, sizeof(out->state), jv_get(st, "State"));
	copy_str(out->addr, sizeof(out->addr), jv_get(st, "Addr"));
	copy_str(out->availability, sizeof(out->availability),
	         jv_get(spec, "Availability"));
	copy_str(out->role, sizeof(out->role), jv_get(spec, "Role"));
	out->agent = label_is(labels, "sandboxd.agent", "1");
	out->drain = label_is(labels, "sandboxd.drain", "1");
	out->disk_full = label_is(labels, "sandboxd.disk", "full");
	out->leader = jv_is_true(jv_get(jv_get(n, "ManagerStatus"), "Leader"));
	out->mem_bytes = jv_int(jv_get(
	    jv_get(jv_get(n, "Description"), "Resources"), "MemoryBytes"));
	out->version = (uint64_t)jv_int(jv_get(jv_get(n, "Version"), "Index"));
	return 0;
}

int
swarm_nodes(struct docker *d, void (*fn)(const struct swarm_node *, void *),
            void *arg, char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	struct swarm_node n;
	int rc;

	rc = docker_call_json(d, "GET", "/nodes", NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	for (size_t i = 0; rc == DOCKER_OK && i < jv_len(resp); i++)
		if (swarm_node_parse(jv_at(resp, i), &n) == 0)
			fn(&n, arg);
	jv_free(resp);
	return rc;
}

static int
node_get(struct docker *d, const char *id, struct jv **out,
         char msg[DOCKER_MSG_LEN])
{
	char path[512], esc[200];

	if (http_escape(id, esc, sizeof(esc)) < 0)
		return DOCKER_ERROR;
	snprintf(path, sizeof(path), "/nodes/%s", esc);
	return docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                        out, msg);
}

int
swarm_node_inspect(struct docker *d, const char *id, struct swarm_node *out,
                   char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	int rc = node_get(d, id, &resp, msg);

	if (rc == DOCKER_OK && swarm_node_parse(resp, out) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: bad node %s", id);
		rc = DOCKER_ERROR;
	}
	jv_free(resp);
	return rc;
}

/* One read-modify-write of a node's spec; DOCKER_CONFLICT-ish races
 * ("out of sequence") are tried again. */
int
swarm_node_update(struct docker *d, const char *id, const char *label,
                  const char *value, const char *availability,
                  char msg[DOCKER_MSG_LEN])
{
	char path[512], esc[200];
	int rc = DOCKER_ERROR;

	if (http_escape(id, esc, sizeof(esc)) < 0)
		return DOCKER_ERROR;
	for (int i = 0; i < SWARM_UPDATE_TRIES; i++) {
		struct jv *resp = NULL, *spec, *labels, *now = jv_obj();
		const char *key;
		struct jv *val;
		void *it = NULL;

		rc = node_get(d, id, &resp, msg);
		if (rc != DOCKER_OK) {
			jv_free(now);
			return rc;
		}
		spec = jv_copy(jv_get(resp, "Spec"));
		labels = jv_get(spec, "Labels");
		while (labels && jv_each(labels, &it, &key, &val))
			if (label == NULL || strcmp(key, label) != 0)
				jv_set(now, key, jv_copy(val));
		if (label && value)
			jv_set_str(now, label, value);
		jv_set(spec, "Labels", now);
		if (availability)
			jv_set_str(spec, "Availability", availability);
		snprintf(path, sizeof(path), "/nodes/%s/update?version=%lld",
		         esc,
		         (long long)jv_int(
		             jv_get(jv_get(resp, "Version"), "Index")));
		jv_free(resp);
		rc = docker_call_json(d, "POST", path, spec,
		                      DOCKER_CALL_TIMEOUT_S, NULL, msg);
		jv_free(spec);
		if (rc == DOCKER_OK || strstr(msg, "out of sequence") == NULL)
			return rc;
	}
	return rc;
}

int
docker_container_update(struct docker *d, const char *id, int64_t memory,
                        int64_t memory_swap, char msg[DOCKER_MSG_LEN])
{
	struct jv *body = jv_obj();
	char path[512];
	int rc;

	jv_set_int(body, "Memory", memory);
	jv_set_int(body, "MemorySwap", memory_swap);
	snprintf(path, sizeof(path), "/containers/%s/update", id);
	rc = docker_call_json(d, "POST", path, body, DOCKER_CALL_TIMEOUT_S,
	                      NULL, msg);
	jv_free(body);
	return rc;
}

int
docker_container_pid(struct docker *d, const char *id, int *pid,
                     char msg[DOCKER_MSG_LEN])
{
	struct jv *resp = NULL;
	char path[512];
	int rc;

	*pid = 0;
	snprintf(path, sizeof(path), "/containers/%s/json", id);
	rc = docker_call_json(d, "GET", path, NULL, DOCKER_CALL_TIMEOUT_S,
	                      &resp, msg);
	if (rc == DOCKER_OK)
		*pid = (int)jv_int(jv_get(jv_get(resp, "State"), "Pid"));
	jv_free(resp);
	return rc;
}

/* docker save: the answer's body goes to the fd as it comes. */
struct save {
	int fd;
	int64_t bytes;
	int status; /* the last status line's: an error's body is not tar */
};

static size_t
save_head(const char *p, size_t n, void *arg)
{
	struct save *s = arg;
	int st;

	if (n > 9 && strncmp(p, "HTTP/", 5) == 0 &&
	    sscanf(p, "HTTP/%*s %d", &st) == 1)
		s->status = st;
	return n;
}

static size_t
save_body(const char *p, size_t n, void *arg)
{
	struct save *s = arg;
	size_t off = 0;

	if (s->status != 200)
		return n; /* an error's message: read, not written */
	while (off < n) {
		ssize_t w = write(s->fd, p + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		off += (size_t)w;
	}
	s->bytes += (int64_t)n;
	return n;
}

int
docker_image_save(struct docker *d, const char *id, int fd, int64_t *bytes,
                  char msg[DOCKER_MSG_LEN])
{
	char sock[4096], prefix[16], url[600], esc[200];
	struct save s = {.fd = fd};
	struct http_call h = {0};
	int rc;

	*bytes = 0;
	if (http_escape(id, esc, sizeof(esc)) < 0)
		return DOCKER_ERROR;
	docker_endpoint(d, sock, prefix);
	snprintf(url, sizeof(url), "http://docker%s/images/%s/get", prefix,
	         esc);
	h.method = "GET";
	h.url = url;
	h.unix_socket = sock;
	h.connect_timeout_ms = DOCKER_CONNECT_TIMEOUT_MS;
	h.low_speed_s = 60;
	h.on_body = save_body;
	h.on_header = save_head;
	h.arg = &s;
	rc = http_perform(&h);
	*bytes = s.bytes;
	if (rc < 0 && h.status == 0) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: %s", h.err);
		rc = DOCKER_DOWN;
	} else if (h.status == 404) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: no image %s", id);
		rc = DOCKER_NOT_FOUND;
	} else if (rc < 0 || h.status != 200) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "docker engine: save: %s (HTTP %ld)",
		         rc < 0 ? h.err : "error", h.status);
		rc = DOCKER_ERROR;
	} else {
		rc = DOCKER_OK;
	}
	return rc;
}

static int
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The tar from in, chunked, to the engine; -1 on a read or write error. */
static int
load_send(int s, int in, int64_t *bytes)
{
	char *chunk = malloc(SWARM_IMAGE_CHUNK), head[32];
	int rc = -1;

	while (chunk) {
		ssize_t r = read(in, chunk, SWARM_IMAGE_CHUNK);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			rc = write_all(s, "0\r\n\r\n", 5);
			break;
		}
		snprintf(head, sizeof(head), "%zx\r\n", (size_t)r);
		if (write_all(s, head, strlen(head)) < 0 ||
		    write_all(s, chunk, (size_t)r) < 0 ||
		    write_all(s, "\r\n", 2) < 0)
			break;
		*bytes += r;
	}
	free(chunk);
	return rc;
}

/* The answer, up to 64 KiB: its status; msg gets an error line's text. */
static int
load_answer(int s, char msg[DOCKER_MSG_LEN])
{
	char ans[65536];
	size_t n = 0;
	int status = -1;
	char *err;

	while (n + 1 < sizeof(ans)) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, SWARM_IMAGE_IO_MS) <= 0)
			break;
		r = recv(s, ans + n, sizeof(ans) - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	ans[n] = '\0';
	if (sscanf(ans, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	err = strstr(ans, "\"error\":\"");
	if (err) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: load: %.*s",
		         (int)strcspn(err + 9, "\""), err + 9);
		return 500;
	}
	if (status != 200)
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: load: HTTP %d",
		         status);
	return status;
}

int
docker_image_load(struct docker *d, int fd, int64_t *bytes,
                  char msg[DOCKER_MSG_LEN])
{
	static const char head[] =
	    "POST %s/images/load?quiet=1 HTTP/1.1\r\nHost: docker\r\n"
	    "Content-Type: application/x-tar\r\nConnection: close\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n";
	char sock[4096], prefix[16], req[512];
	int s, status;

	*bytes = 0;
	docker_endpoint(d, sock, prefix);
	s = docker_dial(sock, msg);
	if (s < 0)
		return DOCKER_DOWN;
	snprintf(req, sizeof(req), head, prefix);
	if (write_all(s, req, strlen(req)) < 0 || load_send(s, fd, bytes) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: load: %s",
		         strerror(errno));
		close(s);
		return DOCKER_ERROR;
	}
	status = load_answer(s, msg);
	close(s);
	if (status == 200)
		return DOCKER_OK;
	if (status < 0)
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: load: no answer");
	return DOCKER_ERROR;
}
