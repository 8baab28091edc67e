/*
 * A process in a running container (docker.h, exec.c): create, start
 * attached, resize, inspect.  The start is the one call libcurl cannot
 * make: the engine answers 101 and the connection becomes the process's
 * stream, so it is written by hand on a unix socket of its own, and the
 * socket is handed to the caller once the answer's head is read.
 */
#include "docker/docker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/jv.h"
#include "docker/internal.h"

/* How long the start's answer may take. */
#define DOCKER_EXEC_START_MS 10000

static struct jv *
str_list(const char *const *items)
{
	struct jv *a = jv_arr();

	for (size_t i = 0; items && items[i]; i++)
		jv_push(a, jv_new_str(items[i]));
	return a;
}

int
docker_exec_create(struct docker *d, const struct docker_exec_spec *s,
                   char id[72], char msg[DOCKER_MSG_LEN])
{
	struct jv *body = jv_obj(), *out = NULL;
	char path[256];
	int rc;

	jv_set_bool(body, "AttachStdin", true);
	jv_set_bool(body, "AttachStdout", true);
	jv_set_bool(body, "AttachStderr", true);
	jv_set_bool(body, "Tty", s->tty);
	jv_set_bool(body, "Privileged", false);
	jv_set_str(body, "User", s->user);
	if (s->workdir && s->workdir[0])
		jv_set_str(body, "WorkingDir", s->workdir);
	jv_set(body, "Env", str_list(s->env));
	jv_set(body, "Cmd", str_list(s->cmd));
	snprintf(path, sizeof(path), "/containers/%s/exec", s->container);
	rc = docker_call_json(d, "POST", path, body, 30, &out, msg);
	jv_free(body);
	if (rc == DOCKER_OK) {
		const char *v = jv_str(jv_get(out, "Id"));
		if (v == NULL || strlen(v) >= 72) {
			snprintf(msg, DOCKER_MSG_LEN,
			         "docker engine: no exec id");
			rc = DOCKER_ERROR;
		} else {
			snprintf(id, 72, "%s", v);
		}
	}
	jv_free(out);
	return rc;
}

int
docker_dial(const char *sock, char msg[DOCKER_MSG_LEN])
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(sock) >= sizeof(a.sun_path)) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "docker engine: socket path too long");
		return -1;
	}
	memcpy(a.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: %s",
		         strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Reads the answer's head one byte at a time (nothing of the stream
 * after it may be taken from the socket), within the deadline.  The
 * status code, or -1.
 */
static int
read_head(int fd, char *head, size_t cap)
{
	size_t n = 0;
	int status = -1;

	while (n + 1 < cap) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, DOCKER_EXEC_START_MS) <= 0)
			return -1;
		r = recv(fd, head + n, 1, 0);
		if (r <= 0)
			return -1;
		n++;
		head[n] = '\0';
		if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	if (sscanf(head, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

int
docker_exec_start(struct docker *d, const char *id, bool tty, int *fd,
                  char msg[DOCKER_MSG_LEN])
{
	char sock[4096], prefix[16], req[512], body[64], head[2048];
	int s, status, n;

	docker_endpoint(d, sock, prefix);
	s = docker_dial(sock, msg);
	if (s < 0)
		return DOCKER_DOWN;
	snprintf(body, sizeof(body), "{\"Detach\":false,\"Tty\":%s}",
	         tty ? "true" : "false");
	n = snprintf(req, sizeof(req),
	             "POST %s/exec/%s/start HTTP/1.1\r\nHost: docker\r\n"
	             "Content-Type: application/json\r\n"
	             "Connection: Upgrade\r\nUpgrade: tcp\r\n"
	             "Content-Length: %zu\r\n\r\n%s",
	             prefix, id, strlen(body), body);
	if (fileio_send_all(s, req, (size_t)n) < 0 ||
	    (status = read_head(s, head, sizeof(head))) < 0) {
		snprintf(msg, DOCKER_MSG_LEN,
		         "docker engine: exec start: no answer");
		close(s);
		return DOCKER_ERROR;
	}
	if (status != 101 && status != 200) {
		snprintf(msg, DOCKER_MSG_LEN, "docker engine: exec start: %d",
		         status);
		close(s);
		return status == 404   ? DOCKER_NOT_FOUND
		       : status == 409 ? DOCKER_CONFLICT
		                       : DOCKER_ERROR;
	}
	*fd = s;
	return DOCKER_OK;
}

int
docker_exec_resize(struct docker *d, const char *id, int cols, int rows,
                   char msg[DOCKER_MSG_LEN])
{
	char path[256];

	snprintf(path, sizeof(path), "/exec/%s/resize?h=%d&w=%d", id, rows,
	         cols);
	return docker_call_json(d, "POST", path, NULL, 10, NULL, msg);
}

int
docker_exec_inspect(struct docker *d, const char *id, bool *running,
                    int *exit_code, char msg[DOCKER_MSG_LEN])
{
	char path[256];
	struct jv *out = NULL;
	int rc;

	snprintf(path, sizeof(path), "/exec/%s/json", id);
	rc = docker_call_json(d, "GET", path, NULL, 10, &out, msg);
	if (rc == DOCKER_OK) {
		*running = jv_is_true(jv_get(out, "Running"));
		*exit_code = (int)jv_int(jv_get(out, "ExitCode"));
	}
	jv_free(out);
	return rc;
}
