/*
 * nodelink over real TLS on loopback TCP, in one process: a control
 * plane (a CA, its server taking "enroll" and "proxy") and an agent
 * enrolled through it (its server taking control-only ops), then each
 * door a peer could knock on: a node calling a control op, no
 * certificate, another CA's certificate, an expired one, an oversized
 * header, the wrong pin, and the preview tunnel.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "nodelink/nlint.h"
#include "unit.h"

static char root[64], cadir[128], nodedir[128], ca2dir[128];
static char cp_addr[64], agent_addr[64];
static struct nodelink *cp, *node;
static struct nl_server *cp_srv, *agent_srv;
static char token_hash[65];
static atomic_int enrolls;
static char last_in[256];
static atomic_int last_in_done;

/* CP ops. */
static int
op_enroll(void *arg, const struct nl_peer *p, const struct jv *req,
          struct jv **ans, struct err *e)
{
	char pin[65], sh[65], *cert = NULL;

	(void)arg;
	atomic_fetch_add(&enrolls, 1);
	if (p->role != NL_ROLE_NONE)
		return ERR_BAD(e, "enroll without a certificate");
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
	jv_set_str(*ans, "swarm_token", "SWMTKN-test");
	free(cert);
	return 0;
}

static int
op_renew(void *arg, const struct nl_peer *p, const struct jv *req,
         struct jv **ans, struct err *e)
{
	char *cert = NULL;

	(void)arg;
	if (nl_ca_sign(cadir, jv_str(jv_get(req, "pubkey")), p->name,
	               "127.0.0.1:7443", &cert, e) < 0)
		return -1;
	*ans = jv_obj();
	jv_set_str(*ans, "cert", cert);
	free(cert);
	return 0;
}

/* Agent ops. */
static int
op_facts(void *arg, const struct nl_peer *p, const struct jv *req,
         struct jv **ans, struct err *e)
{
	(void)arg;
	(void)req;
	(void)e;
	*ans = jv_obj();
	jv_set_str(*ans, "name", "n1");
	jv_set_str(*ans, "peer", p->name);
	return 0;
}

static int
op_open(void *arg, const struct nl_peer *p, const struct jv *req,
        struct jv **ans, struct err *e)
{
	(void)arg;
	(void)req;
	(void)e;
	*ans = jv_obj();
	jv_set_int(*ans, "role", p->role);
	return 0;
}

static int
op_big(void *arg, const struct nl_peer *p, const struct jv *req,
       struct jv **ans, struct err *e)
{
	char *s = malloc(NL_ANS_MAX + 10);

	(void)arg;
	(void)p;
	(void)req;
	(void)e;
	memset(s, 'a', NL_ANS_MAX + 9);
	s[NL_ANS_MAX + 9] = '\0';
	*ans = jv_obj();
	jv_set_str(*ans, "data", s);
	free(s);
	return 0;
}

static int
op_refuse(void *arg, const struct nl_peer *p, const struct jv *req,
          struct jv **ans, struct err *e)
{
	(void)arg;
	(void)p;
	(void)req;
	(void)ans;
	return ERR_CONFLICT(e, "no: %s", "busy");
}

/* Reads fd to EOF into out (at most cap - 1 bytes, NUL-terminated). */
static size_t
read_all(int fd, char *out, size_t cap)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, out + n, cap - 1 - n);

		if (r < 0 && errno == EAGAIN) {
			struct pollfd p = {.fd = fd, .events = POLLIN};

			if (poll(&p, 1, 5000) <= 0)
				break;
			continue;
		}
		if (r <= 0 || n + (size_t)r >= cap - 1) {
			n += r > 0 ? (size_t)r : 0;
			break;
		}
		n += (size_t)r;
	}
	out[n] = '\0';
	return n;
}

/* echo: reads to EOF, then answers "got N: <bytes>" and closes. */
static void *
echo_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char in[256], out[300];
	size_t n = read_all(fd, in, sizeof(in));
	int m = snprintf(out, sizeof(out), "got %zu: %s", n, in);

	if (write(fd, out, (size_t)m) < 0) {
		/* the test sees it */
	}
	close(fd);
	return NULL;
}

/* banner: writes first and half-closes, then reads to EOF. */
static void *
banner_main(void *arg)
{
	int fd = (int)(intptr_t)arg;

	if (write(fd, "banner", 6) < 0) {
		/* the test sees it */
	}
	shutdown(fd, SHUT_WR);
	read_all(fd, last_in, sizeof(last_in));
	atomic_store(&last_in_done, 1);
	close(fd);
	return NULL;
}

static int
stream_with(void *(*fn)(void *), int *fd, struct err *e)
{
	int sp[2];
	pthread_t t;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return ERR_INTERNAL(e, "socketpair");
	pthread_create(&t, NULL, fn, (void *)(intptr_t)sp[1]);
	pthread_detach(t);
	*fd = sp[0];
	return 0;
}

static int
op_echo(void *arg, const struct nl_peer *p, const struct jv *req,
        struct jv **ans, int *fd, struct err *e)
{
	(void)arg;
	(void)p;
	(void)req;
	(void)ans;
	return stream_with(echo_main, fd, e);
}

static int
op_banner(void *arg, const struct nl_peer *p, const struct jv *req,
          struct jv **ans, int *fd, struct err *e)
{
	(void)arg;
	(void)p;
	(void)req;
	(void)ans;
	return stream_with(banner_main, fd, e);
}

/* preview: says what it was asked for, then echoes. */
static void *
preview_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char in[200];
	size_t n = read_all(fd, in, sizeof(in));

	if (write(fd, in, n) < 0) {
		/* the test sees it */
	}
	close(fd);
	return NULL;
}

static int
op_preview(void *arg, const struct nl_peer *p, const struct jv *req,
           struct jv **ans, int *fd, struct err *e)
{
	(void)arg;
	(void)p;
	if (strcmp(jv_str(jv_get(req, "sandbox")), "sb1") != 0 ||
	    jv_int(jv_get(req, "port")) != 8080)
		return ERR_NOTFOUND(e, "no such sandbox");
	*ans = jv_obj();
	jv_set_str(*ans, "ip", "10.0.0.2");
	return stream_with(preview_main, fd, e);
}

#define CTL (1u << NL_ROLE_CONTROL)
static const struct nl_op cp_ops[] = {
    {.name = "enroll", .roles = 1u << NL_ROLE_NONE, .unary = op_enroll},
    {.name = "proxy", .roles = 1u << NL_ROLE_NODE, .stream = op_echo},
    {.name = "renew", .roles = 1u << NL_ROLE_NODE, .unary = op_renew},
};
static const struct nl_op agent_ops[] = {
    {.name = "facts", .roles = CTL, .unary = op_facts},
    {.name = "open",
     .roles = CTL | 1u << NL_ROLE_NODE | 1u << NL_ROLE_NONE,
     .unary = op_open},
    {.name = "big", .roles = CTL, .unary = op_big},
    {.name = "refuse", .roles = CTL, .unary = op_refuse},
    {.name = "echo", .roles = CTL, .stream = op_echo},
    {.name = "banner", .roles = CTL, .stream = op_banner},
    {.name = "preview", .roles = CTL, .stream = op_preview},
    {.name = "quiet", .roles = CTL, .stream = op_echo, .idle_ms = 300},
    {.name = "forever", .roles = CTL, .stream = op_echo, .idle_ms = -1},
};

static struct jv *
req_of(const char *op)
{
	struct jv *r = jv_obj();

	jv_set_str(r, "op", op);
	return r;
}

static void
setup(void)
{
	struct err e = {0};
	char token[NL_TOKEN_LEN];
	struct jv *ans = NULL;

	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "/tmp/nodelink-XXXXXX");
	if (mkdtemp(root) == NULL)
		abort();
	snprintf(cadir, sizeof(cadir), "%s/ca", root);
	snprintf(nodedir, sizeof(nodedir), "%s/node", root);
	snprintf(ca2dir, sizeof(ca2dir), "%s/ca2", root);
	if (nl_ca_init(cadir, "cp", "127.0.0.1:7444", &e) < 0 ||
	    nl_open(&cp, cadir, &e) < 0 ||
	    nl_server_start(&cp_srv, cp, "127.0.0.1:0", cp_ops, 3, NULL, &e) <
	        0) {
		fprintf(stderr, "setup: %s\n", e.msg);
		abort();
	}
	snprintf(cp_addr, sizeof(cp_addr), "127.0.0.1:%u",
	         nl_server_port(cp_srv));
	if (nl_token_new(cadir, token, token_hash, &e) < 0 ||
	    nl_enroll(nodedir, cp_addr, token, "n1", "127.0.0.1:7443", NULL,
	              &ans, &e) < 0 ||
	    nl_open(&node, nodedir, &e) < 0 ||
	    nl_server_start(&agent_srv, node, "127.0.0.1:0", agent_ops,
	                    sizeof(agent_ops) / sizeof(agent_ops[0]), NULL,
	                    &e) < 0) {
		fprintf(stderr, "setup: %s\n", e.msg);
		abort();
	}
	CHECK_STR(jv_str(jv_get(ans, "swarm_token")), "SWMTKN-test");
	jv_free(ans);
	snprintf(agent_addr, sizeof(agent_addr), "127.0.0.1:%u",
	         nl_server_port(agent_srv));
}

static void
enroll_gives_a_node_its_credentials(void)
{
	struct stat st;
	char path[256];

	CHECK(nl_role(cp) == NL_ROLE_CONTROL);
	CHECK_STR(nl_name(cp), "cp");
	CHECK(nl_role(node) == NL_ROLE_NODE);
	CHECK_STR(nl_name(node), "n1");
	snprintf(path, sizeof(path), "%s/key.pem", nodedir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	snprintf(path, sizeof(path), "%s/ca.key", nodedir);
	CHECK(stat(path, &st) < 0); /* the CA's key stays on the CP */
}

static void
call_answers_a_unary_op(void)
{
	struct err e = {0};
	struct jv *r = req_of("facts"), *ans = NULL;

	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, &ans, 0, &e) == 0);
	CHECK(jv_is_true(jv_get(ans, "ok")));
	CHECK_STR(jv_str(jv_get(ans, "name")), "n1");
	CHECK_STR(jv_str(jv_get(ans, "peer")), "cp");
	jv_free(ans);
	jv_free(r);
	/* A handler's error reaches the caller as it was set. */
	r = req_of("refuse");
	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK(e.status == 409);
	CHECK_STR(e.code, "conflict");
	CHECK_STR(e.msg, "no: busy");
	jv_free(r);
	/* An answer over NL_ANS_MAX is a 500, not a broken frame. */
	r = req_of("big");
	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK(e.status == 500);
	jv_free(r);
}

static void
call_refuses_unknown_ops_and_wrong_roles(void)
{
	struct err e = {0};
	struct jv *r = req_of("nope");

	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK(e.status == 404);
	CHECK_STR(e.code, "unknown_op");
	jv_free(r);
	/* A node calling a control-only op of another node. */
	r = req_of("facts");
	memset(&e, 0, sizeof(e));
	CHECK(nl_call(node, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK(e.status == 401);
	CHECK_STR(e.code, "unauthorized");
	/* The CP expected where a node answers: the client refuses. */
	memset(&e, 0, sizeof(e));
	CHECK(nl_call(cp, agent_addr, NL_ROLE_CONTROL, r, NULL, 0, &e) == -1);
	CHECK_STR(e.code, "node_down");
	/* Nobody listening. */
	memset(&e, 0, sizeof(e));
	CHECK(nl_call(cp, "127.0.0.1:1", NL_ROLE_NODE, r, NULL, 500, &e) == -1);
	CHECK(e.status == 503);
	CHECK_STR(e.code, "node_down");
	jv_free(r);
	/* A node may use the CP's proxy op; the CP's enroll is not for
	 * certificate holders' roles but NONE. */
	r = req_of("enroll");
	memset(&e, 0, sizeof(e));
	CHECK(nl_call(node, cp_addr, NL_ROLE_CONTROL, r, NULL, 0, &e) == -1);
	CHECK(e.status == 401);
	jv_free(r);
}

/* A raw TLS client with cred (none, another CA's, an expired one):
 * sends req, returns the answer or NULL when the server closed. */
static struct jv *
raw_call(gnutls_certificate_credentials_t cred, const char *addr,
         const struct jv *req)
{
	struct err e = {0};
	int64_t dl = nl_deadline(5000);
	int fd = nl_dial(addr, dl, &e);
	gnutls_session_t s;
	struct jv *a = NULL;

	if (fd < 0)
		return NULL;
	if (nl_tls_open(&s, cred, fd, false, dl) == 0) {
		if (nl_tls_put(s, fd, req, NL_HDR_MAX, dl) == 0)
			a = nl_tls_get(s, fd, NL_ANS_MAX, NULL, dl);
		gnutls_deinit(s);
	}
	close(fd);
	return a;
}

static void
no_certificate_only_for_none_ops(void)
{
	gnutls_certificate_credentials_t anon;
	struct jv *r = req_of("facts"), *a;

	gnutls_certificate_allocate_credentials(&anon);
	a = raw_call(anon, agent_addr, r);
	CHECK(a != NULL && !jv_is_true(jv_get(a, "ok")));
	CHECK(jv_int(jv_get(a, "status")) == 401);
	jv_free(a);
	jv_free(r);
	r = req_of("open");
	a = raw_call(anon, agent_addr, r);
	CHECK(a != NULL && jv_is_true(jv_get(a, "ok")));
	CHECK(jv_int(jv_get(a, "role")) == NL_ROLE_NONE);
	jv_free(a);
	jv_free(r);
	gnutls_certificate_free_credentials(anon);
}

static void
another_cas_certificate_is_refused(void)
{
	struct err e = {0};
	struct nodelink *other = NULL;
	struct jv *r = req_of("open"), *a;

	CHECK(nl_ca_init(ca2dir, "evil", "127.0.0.1:7444", &e) == 0);
	CHECK(nl_open(&other, ca2dir, &e) == 0);
	if (other == NULL)
		return;
	/* The server closes before reading a header: even an op that
	 * takes NONE is not served to a certificate it cannot verify. */
	a = raw_call(other->cred, agent_addr, r);
	CHECK(a == NULL);
	jv_free(a);
	/* And nl_call refuses the agent, whose CA it does not know. */
	CHECK(nl_call(other, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK_STR(e.code, "node_down");
	jv_free(r);
	nl_free(other);
}

/* Credentials with a certificate our CA signed for ou, valid now or
 * expired a day ago. */
static gnutls_certificate_credentials_t
forged_cred(const char *ou, bool expired)
{
	size_t cl = 0, kl = 0;
	char *cpem = nl_file_read(cadir, "ca.pem", false, &cl);
	char *kpem = nl_file_read(cadir, "ca.key", true, &kl);
	gnutls_datum_t dc = {(unsigned char *)cpem, (unsigned)cl};
	gnutls_datum_t dk = {(unsigned char *)kpem, (unsigned)kl};
	gnutls_x509_crt_t ca, c;
	gnutls_x509_privkey_t cakey, k;
	gnutls_certificate_credentials_t cred = NULL;
	unsigned char serial[4] = {1, 2, 3, 4};
	time_t now = time(NULL);

	gnutls_x509_crt_init(&ca);
	gnutls_x509_privkey_init(&cakey);
	gnutls_x509_crt_import(ca, &dc, GNUTLS_X509_FMT_PEM);
	gnutls_x509_privkey_import(cakey, &dk, GNUTLS_X509_FMT_PEM);
	nl_key_new(&k);
	gnutls_x509_crt_init(&c);
	gnutls_x509_crt_set_version(c, 3);
	gnutls_x509_crt_set_serial(c, serial, sizeof(serial));
	gnutls_x509_crt_set_activation_time(c, now - 10 * 86400);
	gnutls_x509_crt_set_expiration_time(c, expired ? now - 86400
	                                               : now + 86400);
	gnutls_x509_crt_set_dn_by_oid(c,
	                              GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME,
	                              0, ou, (unsigned)strlen(ou));
	gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, "n9",
	                              2);
	gnutls_x509_crt_set_key(c, k);
	gnutls_x509_crt_set_basic_constraints(c, 0, -1);
	if (gnutls_x509_crt_sign2(c, ca, cakey, GNUTLS_DIG_SHA256, 0) == 0 &&
	    gnutls_certificate_allocate_credentials(&cred) == 0) {
		gnutls_certificate_set_x509_trust_mem(cred, &dc,
		                                      GNUTLS_X509_FMT_PEM);
		gnutls_certificate_set_x509_key(cred, &c, 1, k);
	}
	gnutls_x509_crt_deinit(c);
	gnutls_x509_crt_deinit(ca);
	gnutls_x509_privkey_deinit(k);
	gnutls_x509_privkey_deinit(cakey);
	free(cpem);
	free(kpem);
	return cred;
}

static void
expired_or_roleless_certificates_are_refused(void)
{
	gnutls_certificate_credentials_t good = forged_cred(NL_OU_NODE, false);
	gnutls_certificate_credentials_t old = forged_cred(NL_OU_NODE, true);
	gnutls_certificate_credentials_t odd = forged_cred("sandboxd-x", false);
	struct jv *r = req_of("open"), *a;

	/* The forging works: a valid one is served as a node. */
	a = raw_call(good, agent_addr, r);
	CHECK(a != NULL && jv_int(jv_get(a, "role")) == NL_ROLE_NODE);
	jv_free(a);
	a = raw_call(old, agent_addr, r);
	CHECK(a == NULL);
	jv_free(a);
	a = raw_call(odd, agent_addr, r);
	CHECK(a == NULL);
	jv_free(a);
	jv_free(r);
	gnutls_certificate_free_credentials(good);
	gnutls_certificate_free_credentials(old);
	gnutls_certificate_free_credentials(odd);
}

static void
oversized_header_closes_the_connection(void)
{
	struct err e = {0};
	int64_t dl = nl_deadline(5000);
	int fd = nl_dial(agent_addr, dl, &e);
	gnutls_session_t s;
	unsigned char h[4] = {0, 1, 0, 1}; /* NL_HDR_MAX + 1 */
	char junk[64] = "{\"op\":\"facts\"}";
	unsigned char b;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(nl_tls_open(&s, cp->cred, fd, false, dl) == 0);
	CHECK(nl_tls_send(s, fd, h, 4, dl) == 0);
	nl_tls_send(s, fd, junk, sizeof(junk), dl);
	/* No answer: the server hung up. */
	CHECK(nl_tls_recv(s, fd, &b, 1, dl) == -1);
	CHECK(clock_mono_ms() < dl); /* closed, not timed out */
	gnutls_deinit(s);
	close(fd);
}

static void
stream_half_closes_both_ways(void)
{
	struct err e = {0};
	struct jv *r = req_of("echo"), *ans = NULL;
	char buf[512];
	int fd = -1;

	/* Client half-closes first, then reads the server's reply. */
	CHECK(nl_stream(cp, agent_addr, NL_ROLE_NODE, r, &ans, &fd, &e) == 0);
	CHECK(jv_is_true(jv_get(ans, "ok")));
	jv_free(ans);
	jv_free(r);
	if (fd < 0)
		return;
	CHECK(write(fd, "hello", 5) == 5);
	shutdown(fd, SHUT_WR);
	read_all(fd, buf, sizeof(buf));
	CHECK_STR(buf, "got 5: hello");
	close(fd);
	/* Server half-closes first; the client still writes after. */
	r = req_of("banner");
	atomic_store(&last_in_done, 0);
	CHECK(nl_stream(cp, agent_addr, NL_ROLE_NODE, r, NULL, &fd, &e) == 0);
	jv_free(r);
	if (fd < 0)
		return;
	read_all(fd, buf, sizeof(buf));
	CHECK_STR(buf, "banner");
	CHECK(write(fd, "after", 5) == 5);
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 500 && !atomic_load(&last_in_done); i++)
		usleep(10000);
	CHECK(atomic_load(&last_in_done));
	CHECK_STR(last_in, "after");
	close(fd);
	/* A node streams into the CP's proxy op. */
	r = req_of("proxy");
	CHECK(nl_stream(node, cp_addr, NL_ROLE_CONTROL, r, NULL, &fd, &e) == 0);
	jv_free(r);
	if (fd < 0)
		return;
	CHECK(write(fd, "GET", 3) == 3);
	shutdown(fd, SHUT_WR);
	read_all(fd, buf, sizeof(buf));
	CHECK_STR(buf, "got 3: GET");
	close(fd);
}

static void
idle_streams_end_unless_told_otherwise(void)
{
	struct err e = {0};
	struct jv *r = req_of("quiet");
	int64_t t0 = clock_mono_ms();
	char buf[64];
	int fd = -1;

	/* The server's side of "quiet" gives up after 300 ms of silence. */
	CHECK(nl_stream(cp, agent_addr, NL_ROLE_NODE, r, NULL, &fd, &e) == 0);
	jv_free(r);
	if (fd < 0)
		return;
	CHECK(read_all(fd, buf, sizeof(buf)) == 0);
	CHECK(clock_mono_ms() - t0 >= 250 && clock_mono_ms() - t0 < 4000);
	close(fd);
	/* "forever" has no limit on either side: after a silence longer
	 * than "quiet"'s, it still carries bytes. */
	r = req_of("forever");
	CHECK(nl_stream_idle(cp, agent_addr, NL_ROLE_NODE, r, NULL, &fd, -1,
	                     &e) == 0);
	jv_free(r);
	if (fd < 0)
		return;
	usleep(500000);
	CHECK(write(fd, "late", 4) == 4);
	shutdown(fd, SHUT_WR);
	read_all(fd, buf, sizeof(buf));
	CHECK_STR(buf, "got 4: late");
	close(fd);
}

static void
per_address_limit_spares_the_control_plane(void)
{
	struct err e = {0};
	struct jv *r = req_of("echo");
	int fds[NL_PEER_CONNS + 16], raw[NL_PEER_CONNS], ok = 0;

	/* More streams from the CP than one address may hold: its
	 * connections leave the count once its certificate is checked. */
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		fds[i] = -1;
		ok += nl_stream(cp, agent_addr, NL_ROLE_NODE, r, NULL, &fds[i],
		                &e) == 0;
	}
	CHECK(ok == (int)(sizeof(fds) / sizeof(fds[0])));
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	jv_free(r);
	/* NL_PEER_CONNS connections that never say who they are: the next
	 * one from that address is closed, whoever it is. */
	for (int i = 0; i < NL_PEER_CONNS; i++)
		raw[i] = nl_dial(agent_addr, nl_deadline(2000), &e);
	usleep(200000);
	r = req_of("facts");
	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 2000, &e) == -1);
	CHECK_STR(e.code, "node_down");
	for (int i = 0; i < NL_PEER_CONNS; i++)
		if (raw[i] >= 0)
			close(raw[i]);
	ok = 0;
	for (int i = 0; i < 100 && !ok; i++) {
		ok = nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 2000, &e) ==
		     0;
		if (!ok)
			usleep(20000);
	}
	CHECK(ok);
	jv_free(r);
}

static void
enroll_refuses_the_wrong_pin_and_token(void)
{
	struct err e = {0};
	char token[NL_TOKEN_LEN], sh[65], dir[160], path[200], keep;
	int before;

	CHECK(nl_token_new(cadir, token, sh, &e) == 0);
	/* Another CA's hash in the token: refused before the secret is
	 * sent, so the CP's enroll never runs. */
	keep = token[6];
	token[6] = keep == 'a' ? 'b' : 'a';
	snprintf(dir, sizeof(dir), "%s/n2", root);
	before = atomic_load(&enrolls);
	CHECK(nl_enroll(dir, cp_addr, token, "n2", "127.0.0.1:1", NULL, NULL,
	                &e) == -1);
	CHECK_STR(e.code, "node_down");
	CHECK(atomic_load(&enrolls) == before);
	snprintf(path, sizeof(path), "%s/cert.pem", dir);
	CHECK(access(path, F_OK) < 0);
	/* The right pin, a secret the CP does not hold: its refusal. */
	token[6] = keep;
	memset(&e, 0, sizeof(e));
	CHECK(nl_enroll(dir, cp_addr, token, "n2", "127.0.0.1:1", NULL, NULL,
	                &e) == -1);
	CHECK(e.status == 401);
	CHECK(atomic_load(&enrolls) == before + 1);
	CHECK(access(path, F_OK) < 0);
	/* The agent's server is not a control plane: its pin check fails. */
	CHECK(nl_token_new(cadir, token, token_hash, &e) == 0);
	CHECK(nl_enroll(dir, agent_addr, token, "n2", "127.0.0.1:1", NULL, NULL,
	                &e) == -1);
	CHECK_STR(e.code, "node_down");
}

/* The hex SHA-256 of dir's cert.pem, by a fresh nl_open: the
 * certificate a new connection would show. */
static void
cert_fp(const char *dir, char fp[72])
{
	struct err e = {0};
	struct nodelink *nl = NULL;
	size_t len = 0;
	char *pem = nl_file_read(dir, "cert.pem", false, &len);
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len}, der;
	gnutls_x509_crt_t c;
	enum nl_role role;
	char name[64];

	fp[0] = '\0';
	if (nl_open(&nl, dir, &e) < 0 || pem == NULL)
		goto out;
	gnutls_x509_crt_init(&c);
	if (gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM) == 0 &&
	    gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_DER, &der) == 0) {
		nl_crt_ident(&der, &role, name, fp);
		gnutls_free(der.data);
	}
	gnutls_x509_crt_deinit(c);
out:
	nl_free(nl);
	free(pem);
}

static void
a_node_renews_its_certificate(void)
{
	struct err e = {0};
	struct nodelink *fresh = NULL;
	struct jv *r = req_of("facts");
	char before[72], after[72], path[200], keep[200];
	FILE *f;

	cert_fp(nodedir, before);
	CHECK(nl_cert_expires(node) > time(NULL) + 89L * 86400);
	CHECK(nl_renew(node, nodedir, cp_addr, &e) == 0);
	cert_fp(nodedir, after);
	CHECK(before[0] != '\0' && after[0] != '\0');
	CHECK(strcmp(before, after) != 0);
	/* The new files work, and so does the node's open handle. */
	CHECK(nl_open(&fresh, nodedir, &e) == 0);
	CHECK(fresh != NULL && strcmp(nl_name(fresh), "n1") == 0);
	nl_free(fresh);
	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == 0);
	jv_free(r);
	/* Only a node renews. */
	CHECK(nl_renew(cp, cadir, cp_addr, &e) == -1);
	/* A crash between the renames: the new key with the old
	 * certificate, the new one beside it.  nl_open finishes. */
	snprintf(path, sizeof(path), "%s/cert.pem", nodedir);
	snprintf(keep, sizeof(keep), "%s/cert.pem.new", nodedir);
	CHECK(rename(path, keep) == 0);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		size_t len = 0;
		char *other = nl_file_read(cadir, "cert.pem", false, &len);

		fwrite(other, 1, len, f); /* a certificate not for this key */
		fclose(f);
		free(other);
	}
	CHECK(nl_open(&fresh, nodedir, &e) == 0);
	CHECK(fresh != NULL && nl_role(fresh) == NL_ROLE_NODE);
	CHECK(access(keep, F_OK) < 0);
	nl_free(fresh);
	cert_fp(nodedir, before);
	CHECK_STR(before, after);
}

static void
a_node_answers_only_for_its_own_address(void)
{
	struct err e = {0};
	char token[NL_TOKEN_LEN], dir[160], addr[64];
	struct nodelink *n4 = NULL;
	struct nl_server *srv = NULL;
	struct jv *r = req_of("open");

	/* n4 enrolled as 10.9.9.9 but listens here: the CP, which dials
	 * the address a node enrolled with, refuses it on 127.0.0.1. */
	snprintf(dir, sizeof(dir), "%s/n4", root);
	CHECK(nl_token_new(cadir, token, token_hash, &e) == 0);
	CHECK(nl_enroll(dir, cp_addr, token, "n4", "10.9.9.9:7443", NULL, NULL,
	                &e) == 0);
	CHECK(nl_open(&n4, dir, &e) == 0);
	if (n4 == NULL)
		goto out;
	CHECK(nl_server_start(&srv, n4, "127.0.0.1:0", agent_ops,
	                      sizeof(agent_ops) / sizeof(agent_ops[0]), NULL,
	                      &e) == 0);
	if (srv == NULL)
		goto out;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", nl_server_port(srv));
	CHECK(nl_call(cp, addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK_STR(e.code, "node_down");
	CHECK(strstr(e.msg, "another address") != NULL);
	/* n1, enrolled as 127.0.0.1, is served there (any port). */
	CHECK(nl_call(cp, agent_addr, NL_ROLE_NODE, r, NULL, 0, &e) == 0);
	/* A DNS name in the SAN is matched as a name: localhost is not
	 * 127.0.0.1 to the check. */
	snprintf(addr, sizeof(addr), "localhost:%u", nl_server_port(agent_srv));
	CHECK(nl_call(cp, addr, NL_ROLE_NODE, r, NULL, 0, &e) == -1);
	CHECK(strstr(e.msg, "another address") != NULL);
out:
	nl_server_stop(srv);
	nl_free(n4);
	jv_free(r);
}

static int
resolve(void *arg, const char *sandbox, char addr[128])
{
	(void)arg;
	if (strcmp(sandbox, "sb1") != 0 && strcmp(sandbox, "sb2") != 0)
		return -1;
	snprintf(addr, 128, "%s", agent_addr);
	return 0;
}

static int
tunnel_dial(unsigned port)
{
	char addr[64];
	struct err e = {0};
	int fd;

	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	fd = nl_dial(addr, nl_deadline(2000), &e);
	return fd;
}

static void
tunnel_relays_a_preview(void)
{
	struct nl_tunnel *t = NULL;
	struct err e = {0};
	const char *msg = "SBX sb1 8080\nGET / HTTP/1.1\r\n\r\n";
	char buf[256];
	int fd;

	CHECK(nl_tunnel_start(&t, cp, resolve, NULL, &e) == 0);
	if (t == NULL)
		return;
	fd = tunnel_dial(nl_tunnel_port(t));
	CHECK(fd >= 0);
	CHECK(write(fd, msg, strlen(msg)) == (ssize_t)strlen(msg));
	shutdown(fd, SHUT_WR);
	read_all(fd, buf, sizeof(buf));
	CHECK_STR(buf, "GET / HTTP/1.1\r\n\r\n"); /* the preamble is ours */
	close(fd);
	/* A bad preamble, an unknown sandbox, one the agent refuses: the
	 * connection closes with no byte. */
	const char *bad[] = {"GET / HTTP/1.1\r\n", "SBX sb1 0\n",
	                     "SBX sb1 65536\n",    "SBX ../x 80\n",
	                     "SBX nope 8080\n",    "SBX sb2 8080\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = tunnel_dial(nl_tunnel_port(t));
		CHECK(write(fd, bad[i], strlen(bad[i])) > 0);
		CHECK(read_all(fd, buf, sizeof(buf)) == 0);
		close(fd);
	}
	nl_tunnel_stop(t);
}

static void
teardown(void)
{
	char cmd[128];

	nl_server_stop(agent_srv);
	nl_server_stop(cp_srv);
	nl_free(node);
	nl_free(cp);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"enroll gives a node its credentials",
	     enroll_gives_a_node_its_credentials},
	    {"call answers a unary op", call_answers_a_unary_op},
	    {"call refuses unknown ops and wrong roles",
	     call_refuses_unknown_ops_and_wrong_roles},
	    {"no certificate only for NONE ops",
	     no_certificate_only_for_none_ops},
	    {"another CA's certificate is refused",
	     another_cas_certificate_is_refused},
	    {"expired or roleless certificates are refused",
	     expired_or_roleless_certificates_are_refused},
	    {"an oversized header closes the connection",
	     oversized_header_closes_the_connection},
	    {"a stream half-closes both ways", stream_half_closes_both_ways},
	    {"idle streams end unless told otherwise",
	     idle_streams_end_unless_told_otherwise},
	    {"the per-address limit spares the control plane",
	     per_address_limit_spares_the_control_plane},
	    {"enroll refuses the wrong pin and token",
	     enroll_refuses_the_wrong_pin_and_token},
	    {"the tunnel relays a preview", tunnel_relays_a_preview},
	    {"a node renews its certificate", a_node_renews_its_certificate},
	    {"a node answers only for its own address",
	     a_node_answers_only_for_its_own_address},
	};
	int rc;

	setup();
	rc = UNIT_RUN("nodelink_io", tests);
	teardown();
	return rc;
}
