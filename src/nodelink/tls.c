/*
 * TLS sessions of the node channel and our credentials.  Every socket
 * is non-blocking and every wait is a poll(2) with a deadline, so no
 * peer holds a thread longer than the deadline its caller gave: a
 * handshake, a header, an answer.  TLS 1.3 only, ECDSA P-256 keys from
 * our own CA; the peer's certificate is verified against that CA and
 * nothing else (no system trust store), its role read from the OU.
 *
 * A node's certificate names the address it enrolled with (its SAN),
 * which is the address the CP's row keeps and dials: a client wanting
 * a node checks that the certificate is for the address it dialled
 * (nl_tls_peer_is), so one node's certificate cannot answer for
 * another's address.  The CP's own is not checked so: agents may reach
 * it by another name than the one it was made with, and only the CA's
 * holder has a control certificate.
 *
 * Rejected: blocking sockets with SO_RCVTIMEO (a slow peer trickling a
 * byte each timeout would hold a thread forever).
 */
#include "nodelink/nlint.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/x509.h>

#include "lib/clock.h"
#include "nodelink/frame.h"

int64_t
nl_deadline(int ms)
{
	return clock_mono_ms() + ms;
}

static int
left_ms(int64_t deadline)
{
	int64_t l = deadline - clock_mono_ms();

	if (l <= 0)
		return 0;
	return l > 1000000 ? 1000000 : (int)l;
}

int
nl_wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (;;) {
		int ms = left_ms(deadline), n;

		if (ms == 0)
			return -1;
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

int
nl_split_addr(const char *addr, char host[256], char port[8])
{
	const char *c;
	size_t hl;

	if (addr[0] == '[') {
		const char *b = strchr(addr, ']');

		if (b == NULL || b[1] != ':')
			return -1;
		hl = (size_t)(b - addr - 1);
		addr++;
		c = b + 1;
	} else {
		c = strrchr(addr, ':');
		if (c == NULL)
			return -1;
		hl = (size_t)(c - addr);
	}
	if (hl == 0 || hl >= 256 || strlen(c + 1) == 0 || strlen(c + 1) >= 8)
		return -1;
	memcpy(host, addr, hl);
	host[hl] = '\0';
	snprintf(port, 8, "%s", c + 1);
	return 0;
}

static int
dial_one(const struct addrinfo *ai, int64_t deadline)
{
	int fd = socket(ai->ai_family,
	                ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
	                ai->ai_protocol);
	int one = 1, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS ||
		    nl_wait_fd(fd, POLLOUT, deadline) < 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ||
		    soerr != 0) {
			close(fd);
			return -1;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int
nl_dial(const char *addr, int64_t deadline, struct err *e)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char host[256], port[8];
	int fd = -1;

	if (addr == NULL || nl_split_addr(addr, host, port) < 0)
		return err_set(e, 503, "node_down", "bad node address");
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return err_set(e, 503, "node_down", "cannot resolve %s", host);
	for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
		fd = dial_one(ai, deadline);
	freeaddrinfo(res);
	if (fd < 0)
		return err_set(e, 503, "node_down", "cannot connect to %s",
		               addr);
	return fd;
}

/* After GNUTLS_E_AGAIN: waits for the direction the session needs. */
static int
wait_tls(gnutls_session_t s, int fd, int64_t deadline)
{
	return nl_wait_fd(fd, gnutls_record_get_direction(s) ? POLLOUT : POLLIN,
	                  deadline);
}

int
nl_tls_open(gnutls_session_t *out, gnutls_certificate_credentials_t cred,
            int fd, bool server, int64_t deadline)
{
	unsigned flags = (server ? GNUTLS_SERVER : GNUTLS_CLIENT) |
	                 GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL | GNUTLS_NO_TICKETS;
	gnutls_session_t s;
	int rc;

	if (gnutls_init(&s, flags) < 0)
		return -1;
	if (gnutls_priority_set_direct(s, NL_PRIORITY, NULL) < 0 ||
	    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) < 0)
		goto fail;
	if (server)
		gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUEST);
	gnutls_transport_set_int(s, fd);
	do {
		rc = gnutls_handshake(s);
		if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
			if (wait_tls(s, fd, deadline) < 0)
				goto fail;
		} else if (rc < 0 && gnutls_error_is_fatal(rc)) {
			goto fail;
		}
	} while (rc < 0);
	*out = s;
	return 0;
fail:
	gnutls_deinit(s);
	return -1;
}

static int
dn_part(gnutls_x509_crt_t c, const char *oid, char *out, size_t cap)
{
	size_t n = cap;

	if (gnutls_x509_crt_get_dn_by_oid(c, oid, 0, 0, out, &n) < 0 ||
	    n >= cap)
		return -1;
	out[n] = '\0';
	return 0;
}

int
nl_crt_ident(const gnutls_datum_t *der, enum nl_role *role, char name[64],
             char fp[72])
{
	gnutls_x509_crt_t c;
	char ou[64];
	unsigned char h[32];
	size_t hl = sizeof(h);
	int rc = -1;

	if (gnutls_x509_crt_init(&c) < 0)
		return -1;
	if (gnutls_x509_crt_import(c, der, GNUTLS_X509_FMT_DER) < 0 ||
	    dn_part(c, GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME, ou,
	            sizeof(ou)) < 0 ||
	    dn_part(c, GNUTLS_OID_X520_COMMON_NAME, name, 64) < 0 ||
	    gnutls_x509_crt_get_fingerprint(c, GNUTLS_DIG_SHA256, h, &hl) < 0)
		goto out;
	if (strcmp(ou, NL_OU_CONTROL) == 0)
		*role = NL_ROLE_CONTROL;
	else if (strcmp(ou, NL_OU_NODE) == 0)
		*role = NL_ROLE_NODE;
	else
		goto out;
	for (size_t i = 0; i < hl && fp != NULL; i++)
		snprintf(fp + 2 * i, 3, "%02x", h[i]);
	rc = 0;
out:
	gnutls_x509_crt_deinit(c);
	return rc;
}

int
nl_tls_peer(gnutls_session_t s, struct nl_peer *p)
{
	unsigned n = 0, status = 0;
	const gnutls_datum_t *l = gnutls_certificate_get_peers(s, &n);

	p->role = NL_ROLE_NONE;
	p->name[0] = p->fp[0] = '\0';
	if (l == NULL || n == 0)
		return 0;
	if (gnutls_certificate_verify_peers2(s, &status) < 0 || status != 0)
		return -1;
	return nl_crt_ident(&l[0], &p->role, p->name, p->fp);
}

int
nl_tls_peer_is(gnutls_session_t s, const char *addr)
{
	unsigned n = 0;
	const gnutls_datum_t *l = gnutls_certificate_get_peers(s, &n);
	char host[256], port[8];
	gnutls_x509_crt_t c;
	int ok = 0;

	if (l == NULL || n == 0 || nl_split_addr(addr, host, port) < 0 ||
	    gnutls_x509_crt_init(&c) < 0)
		return -1;
	if (gnutls_x509_crt_import(c, &l[0], GNUTLS_X509_FMT_DER) == 0)
		ok = gnutls_x509_crt_check_hostname2(c, host, 0);
	gnutls_x509_crt_deinit(c);
	return ok ? 0 : -1;
}

int
nl_tls_send(gnutls_session_t s, int fd, const void *data, size_t n,
            int64_t deadline)
{
	const char *p = data;

	while (n > 0) {
		ssize_t w = gnutls_record_send(s, p, n);

		if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED) {
			/* GnuTLS keeps the record: the retry passes the
			 * same bytes. */
			if (nl_wait_fd(fd, POLLOUT, deadline) < 0)
				return -1;
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
nl_tls_recv(gnutls_session_t s, int fd, void *data, size_t n, int64_t deadline)
{
	char *p = data;

	while (n > 0) {
		ssize_t r = gnutls_record_recv(s, p, n);

		if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) {
			if (nl_wait_fd(fd, POLLIN, deadline) < 0)
				return -1;
			continue;
		}
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

void
nl_tls_bye(gnutls_session_t s, int fd, int64_t deadline)
{
	int rc;

	while ((rc = gnutls_bye(s, GNUTLS_SHUT_WR)) == GNUTLS_E_AGAIN ||
	       rc == GNUTLS_E_INTERRUPTED)
		if (wait_tls(s, fd, deadline) < 0)
			return;
}

int
nl_tls_put(gnutls_session_t s, int fd, const struct jv *v, size_t max,
           int64_t deadline)
{
	struct buf b;
	int rc;

	buf_init(&b, max + 8);
	rc = nl_frame_put(v, max, &b);
	if (rc == 0)
		rc = nl_tls_send(s, fd, b.data, b.len, deadline);
	buf_release(&b);
	return rc;
}

struct jv *
nl_tls_get(gnutls_session_t s, int fd, size_t max, char *op, int64_t deadline)
{
	unsigned char h[4];
	char *body, err[128];
	struct jv *v = NULL;
	long n;

	if (nl_tls_recv(s, fd, h, 4, deadline) < 0)
		return NULL;
	n = nl_frame_len(h, max);
	if (n < 0)
		return NULL;
	body = malloc((size_t)n);
	if (body == NULL)
		return NULL;
	if (nl_tls_recv(s, fd, body, (size_t)n, deadline) == 0)
		v = nl_frame_get(body, (size_t)n, op, err, sizeof(err));
	free(body);
	return v;
}

/* Our own certificate's role and name, from cert.pem's first block. */
static int
own_ident(struct nodelink *nl, const char *pem, size_t len)
{
	gnutls_datum_t in = {(unsigned char *)pem, (unsigned)len}, der;
	gnutls_x509_crt_t c;
	int rc = -1;

	if (gnutls_x509_crt_init(&c) < 0)
		return -1;
	if (gnutls_x509_crt_import(c, &in, GNUTLS_X509_FMT_PEM) == 0 &&
	    gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_DER, &der) == 0) {
		rc = nl_crt_ident(&der, &nl->role, nl->name, NULL);
		nl->expires = gnutls_x509_crt_get_expiration_time(c);
		gnutls_free(der.data);
	}
	gnutls_x509_crt_deinit(c);
	return rc;
}

static int
load_cred(struct nodelink *nl, char *ca, size_t cal, char *crt, size_t crtl,
          char *key, size_t keyl)
{
	gnutls_datum_t dca = {(unsigned char *)ca, (unsigned)cal};
	gnutls_datum_t dkey = {(unsigned char *)key, (unsigned)keyl};
	gnutls_datum_t dchain;
	struct buf chain;
	int rc = -1;

	/* The chain sent is ours then the CA's, so an enrolling agent,
	 * which has no CA yet, can check the CA against its pin. */
	buf_init(&chain, 2 * NL_PEM_MAX + 2);
	if (buf_append(&chain, crt, crtl) < 0 ||
	    buf_append(&chain, "\n", 1) < 0 || buf_append(&chain, ca, cal) < 0)
		goto out;
	dchain.data = (unsigned char *)chain.data;
	dchain.size = (unsigned)chain.len;
	if (gnutls_certificate_allocate_credentials(&nl->cred) < 0)
		goto out;
	if (gnutls_certificate_set_x509_trust_mem(nl->cred, &dca,
	                                          GNUTLS_X509_FMT_PEM) <= 0 ||
	    gnutls_certificate_set_x509_key_mem2(
	        nl->cred, &dchain, &dkey, GNUTLS_X509_FMT_PEM, NULL, 0) < 0)
		goto out;
	rc = own_ident(nl, crt, crtl);
out:
	buf_release(&chain);
	return rc;
}

/* The three files of dir into nl's credentials. */
static int
load_dir(struct nodelink *nl, const char *dir, struct err *e)
{
	char *ca = NULL, *crt = NULL, *key = NULL;
	size_t cal = 0, crtl = 0, keyl = 0;
	int rc = -1;

	ca = nl_file_read(dir, "ca.pem", false, &cal);
	crt = nl_file_read(dir, "cert.pem", false, &crtl);
	key = nl_file_read(dir, "key.pem", true, &keyl);
	if (ca == NULL || crt == NULL || key == NULL)
		ERR_INTERNAL(e,
		             "node credentials: cannot read %s/{ca,cert,key}"
		             ".pem (or key.pem is readable by others)",
		             dir);
	else if (load_cred(nl, ca, cal, crt, crtl, key, keyl) < 0)
		ERR_INTERNAL(e, "node credentials in %s are not valid", dir);
	else
		rc = 0;
	if (key != NULL)
		explicit_bzero(key, keyl);
	free(ca);
	free(crt);
	free(key);
	return rc;
}

int
nl_open(struct nodelink **out, const char *dir, struct err *e)
{
	struct nodelink *nl = calloc(1, sizeof(*nl));

	if (nl == NULL)
		return ERR_INTERNAL(e, "out of memory");
	if (load_dir(nl, dir, e) < 0) {
		/* A renewal cut between its renames: the new key is in
		 * place, its certificate beside. */
		if (nl->cred != NULL)
			gnutls_certificate_free_credentials(nl->cred);
		nl->cred = NULL;
		if (nl_finish_renewal(dir) < 0 || load_dir(nl, dir, e) < 0) {
			nl_free(nl);
			return -1;
		}
	}
	*out = nl;
	return 0;
}

void
nl_free(struct nodelink *nl)
{
	if (nl == NULL)
		return;
	if (nl->cred != NULL)
		gnutls_certificate_free_credentials(nl->cred);
	free(nl);
}

enum nl_role
nl_role(const struct nodelink *nl)
{
	return nl->role;
}

const char *
nl_name(const struct nodelink *nl)
{
	return nl->name;
}

int64_t
nl_cert_expires(const struct nodelink *nl)
{
	return nl->expires;
}
