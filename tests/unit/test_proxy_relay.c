/*
 * The credential proxy's relay socket (src/proxy/relay.c): a connection
 * relayed from another node reaches the same server as a TCP one, with
 * the address and node of its SBXPEER line (what admit.c checks a token
 * against); a connection without the line, or with a bad one, is
 * closed; a TCP connection is this node's ("").  The server here is a
 * libmicrohttpd daemon of the test's own with the proxy's connection
 * notifications, answering each request with what the proxy would see.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proxy/internal.h"
#include "unit.h"

static struct proxy px;
static char dir[64];
static uint16_t tcp_port;

static enum MHD_Result
on_req(void *cls, struct MHD_Connection *conn, const char *url,
       const char *method, const char *version, const char *data, size_t *size,
       void **ctx)
{
	struct in_addr in = {.s_addr = proxy_conn_ip(conn)};
	char node[64], body[160], ip[INET_ADDRSTRLEN] = "";
	struct MHD_Response *r;
	enum MHD_Result rc;

	(void)cls, (void)url, (void)method, (void)version, (void)data;
	(void)size, (void)ctx;
	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	proxy_conn_node(conn, node);
	snprintf(body, sizeof(body), "ip=%s node=%s", ip, node);
	r = MHD_create_response_from_buffer(strlen(body), body,
	                                    MHD_RESPMEM_MUST_COPY);
	rc = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return rc;
}

static void
setup(void)
{
	const union MHD_DaemonInfo *info;

	snprintf(dir, sizeof(dir), "/tmp/sbx-relay-XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	pthread_mutex_init(&px.mu, NULL);
	pthread_cond_init(&px.idle, NULL);
	px.mhd = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, 0,
	    NULL, NULL, on_req, NULL, MHD_OPTION_NOTIFY_CONNECTION,
	    admit_on_conn, &px, MHD_OPTION_SOCK_ADDR,
	    &(struct sockaddr_in){.sin_family = AF_INET,
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)},
	    MHD_OPTION_END);
	if (px.mhd == NULL || proxy_relay_start(&px, dir) < 0)
		abort();
	info = MHD_get_daemon_info(px.mhd, MHD_DAEMON_INFO_BIND_PORT);
	tcp_port = info ? info->port : 0;
}

/* Sends pre then a request on fd, and reads the whole answer. */
static void
ask(int fd, const char *pre, char *out, size_t len)
{
	char req[512];
	size_t n = 0;

	snprintf(req, sizeof(req), "%sGET / HTTP/1.0\r\nHost: x\r\n\r\n", pre);
	(void)!write(fd, req, strlen(req));
	out[0] = '\0';
	for (;;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t k;
		if (poll(&pf, 1, 5000) != 1 ||
		    (k = read(fd, out + n, len - 1 - n)) <= 0)
			break;
		n += (size_t)k;
	}
	out[n] = '\0';
	close(fd);
}

static int
relay_conn(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/run/%s", dir,
	         PROXY_RELAY_SOCK);
	CHECK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	return fd;
}

static void
test_relayed(void)
{
	char out[2048], p[160];
	struct stat st;

	ask(relay_conn(), "SBXPEER n2 10.213.0.7\n", out, sizeof(out));
	CHECK(strstr(out, "200") != NULL);
	CHECK(strstr(out, "ip=10.213.0.7 node=n2") != NULL);
	/* The socket is the daemon's alone. */
	snprintf(p, sizeof(p), "%s/run/%s", dir, PROXY_RELAY_SOCK);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
	snprintf(p, sizeof(p), "%s/run", dir);
	CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0700);
}

static void
test_bad_lines_closed(void)
{
	static const char *const bad[] = {
	    "",                              /* no line: the request itself */
	    "SBXPEER n2\n",                  /* no address */
	    "SBXPEER n2 10.213.0.7 extra\n", /* a word too many */
	    "SBXPEER n/2 10.213.0.7\n",      /* not a node's name */
	    "SBXPEER n2 0.0.0.0\n",          /* no address */
	    "SBXPEER n2 example.com\n",      /* not an address */
	    "SBX n2 10.213.0.7\n",           /* not the word */
	};
	char out[2048];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ask(relay_conn(), bad[i], out, sizeof(out));
		if (out[0] != '\0') {
			fprintf(stderr, "  answered after \"%s\"\n", bad[i]);
			unit_failed = 1;
		}
	}
}

static void
test_tcp_is_this_node(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_port = htons(tcp_port),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char out[2048];

	CHECK(tcp_port != 0);
	CHECK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ask(fd, "", out, sizeof(out));
	CHECK(strstr(out, "ip=127.0.0.1 node=") != NULL);
	CHECK(strstr(out, "node=n") == NULL);
}

static void
teardown(void)
{
	char *const argv[] = {"rm", "-rf", dir, NULL};
	pid_t pid;
	int st;

	atomic_store(&px.stopping, true);
	proxy_relay_stop(&px);
	MHD_stop_daemon(px.mhd);
	if ((pid = fork()) == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
}

static const struct unit_test tests[] = {
    {"a relayed connection has its line's address and node", test_relayed},
    {"a bad or missing line is closed", test_bad_lines_closed},
    {"a TCP connection is this node's", test_tcp_is_this_node},
};

int
main(void)
{
	int rc;

	setup();
	rc = UNIT_RUN("proxy_relay", tests);
	teardown();
	return rc;
}
