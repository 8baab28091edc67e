/*
 * nodelink's insides, shared by its files only: the credentials, TLS
 * sessions on non-blocking sockets with deadlines, the pump.  GnuTLS
 * is included here and nowhere outside src/nodelink/.
 */
#ifndef NODELINK_NLINT_H
#define NODELINK_NLINT_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdatomic.h>
#include <stdint.h>

#include "lib/buf.h"
#include "nodelink/nodelink.h"

#define NL_HANDSHAKE_MS   10000            /* a TLS handshake, either side */
#define NL_HDR_READ_MS    10000            /* a request header after it */
#define NL_STREAM_IDLE_MS (10 * 60 * 1000) /* a stream with no byte */
#define NL_PEM_MAX        (64u << 10)      /* a PEM file we read */
#define NL_PRIORITY       "NORMAL:-VERS-ALL:+VERS-TLS1.3"
#define NL_OU_CONTROL     "sandboxd-control"
#define NL_OU_NODE        "sandboxd-node"
#define NL_OU_CA          "sandboxd-ca"

struct nodelink {
	gnutls_certificate_credentials_t cred;
	enum nl_role role;
	char name[64];
	int64_t expires; /* our certificate's end, unix seconds */
};

/* Streams pumped at once in this process (client and server sides). */
extern atomic_int nl_streams_open;

/* tls.c */
int64_t nl_deadline(int ms);
/* Waits until fd has events (POLLIN, POLLOUT); -1 at the deadline. */
int nl_wait_fd(int fd, short events, int64_t deadline);
int nl_split_addr(const char *addr, char host[256], char port[8]);
int nl_dial(const char *addr, int64_t deadline, struct err *e);
/* A session on fd (non-blocking) with nl's credentials (NULL: none),
 * TLS 1.3 only, handshaken by deadline.  -1 on any failure. */
int nl_tls_open(gnutls_session_t *out, gnutls_certificate_credentials_t cred,
                int fd, bool server, int64_t deadline);
/* The peer's certificate checked against the credentials' CA: 0 with
 * p filled (role NONE when it sent none), -1 when it is not ours. */
int nl_tls_peer(gnutls_session_t s, struct nl_peer *p);
/* The peer's certificate names addr's host (SAN IP or DNS): 0, else -1. */
int nl_tls_peer_is(gnutls_session_t s, const char *addr);
int nl_tls_send(gnutls_session_t s, int fd, const void *data, size_t n,
                int64_t deadline);
/* Exactly n bytes; -1 on EOF, error or deadline. */
int nl_tls_recv(gnutls_session_t s, int fd, void *data, size_t n,
                int64_t deadline);
void nl_tls_bye(gnutls_session_t s, int fd, int64_t deadline);
/* A frame out, a frame in (max bytes of body). */
int nl_tls_put(gnutls_session_t s, int fd, const struct jv *v, size_t max,
               int64_t deadline);
struct jv *nl_tls_get(gnutls_session_t s, int fd, size_t max, char *op,
                      int64_t deadline);
/* Identity of a certificate: role from OU, CN; -1 when neither role. */
int nl_crt_ident(const gnutls_datum_t *der, enum nl_role *role, char name[64],
                 char fp[72]);

/* The error of an answer {ok:false, status, code, message} into e. */
void nl_answer_err(const struct jv *a, struct err *e);

/* ca.c: an ECDSA P-256 key; its public half; a key as PEM (0600) into
 * dir/name; a node's name, 1 to 63 of [A-Za-z0-9._-]. */
int nl_key_new(gnutls_x509_privkey_t *k);
int nl_key_pub(gnutls_x509_privkey_t k, gnutls_pubkey_t *pub);
int nl_key_save(const char *dir, const char *name, gnutls_x509_privkey_t k);
bool nl_name_valid(const char *s);

/* enroll.c: pem is a certificate of ca for k's public key, role node,
 * CN name (any when NULL). */
int nl_cert_check(gnutls_x509_crt_t ca, const char *pem,
                  gnutls_x509_privkey_t k, const char *name);

/* files.c */
int nl_rename_in(const char *dir, const char *from, const char *to);
/* cert.pem.new into place after a renewal cut short; -1 when there is
 * none. */
int nl_finish_renewal(const char *dir);
/* A file of dir, at most NL_PEM_MAX bytes, NUL-terminated; a secret
 * one must not be readable by group or others.  NULL on failure. */
char *nl_file_read(const char *dir, const char *name, bool secret, size_t *len);
int nl_file_write(const char *dir, const char *name, const void *data,
                  size_t len, int mode);

/* pump.c: joins the TLS session on tcp with fd until both halves are
 * closed or idle_ms pass with no byte; closes nothing. */
void nl_tls_pump(gnutls_session_t s, int tcp, int fd, int idle_ms);
/* A detached thread with a small stack; -1 when none could start. */
int nl_spawn(void *(*fn)(void *), void *arg);

#endif
