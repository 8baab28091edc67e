/*
 * The agent's side of a join.  The agent has no CA yet, so it cannot
 * verify the CP the usual way: the join token pins the CA (the SHA-256
 * of its certificate), the CP sends its chain (its certificate, then
 * the CA's), and the agent accepts the connection only when the last
 * certificate of the chain hashes to the pin, is a CA, and signed the
 * first, whose role is control.  Only then is the token's secret sent.
 * The key is made here and never leaves the node; the answer's
 * certificate must be for that key, of role node, signed by the pinned
 * CA, before ca.pem, cert.pem and key.pem are written.
 */
#include "nodelink/nlint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
crt_of(gnutls_x509_crt_t *c, const gnutls_datum_t *d, gnutls_x509_crt_fmt_t f)
{
	if (gnutls_x509_crt_init(c) < 0)
		return -1;
	if (gnutls_x509_crt_import(*c, d, f) < 0) {
		gnutls_x509_crt_deinit(*c);
		return -1;
	}
	return 0;
}

/* leaf signed by ca, in its validity, with the role want (and the
 * name, when not NULL). */
static int
leaf_ok(gnutls_x509_crt_t ca, const gnutls_datum_t *der, enum nl_role want,
        const char *want_name)
{
	gnutls_x509_crt_t c;
	unsigned status = 1;
	enum nl_role role = NL_ROLE_NONE;
	char name[64];

	if (crt_of(&c, der, GNUTLS_X509_FMT_DER) < 0)
		return -1;
	if (gnutls_x509_crt_verify(c, &ca, 1, 0, &status) < 0)
		status = 1;
	gnutls_x509_crt_deinit(c);
	if (status != 0 || nl_crt_ident(der, &role, name, NULL) < 0 ||
	    role != want || (want_name != NULL && strcmp(name, want_name) != 0))
		return -1;
	return 0;
}

/* The server's chain against the pin: its CA into *ca. */
static int
pinned(gnutls_session_t s, const char *pin, gnutls_x509_crt_t *ca)
{
	unsigned n = 0;
	const gnutls_datum_t *l = gnutls_certificate_get_peers(s, &n);
	unsigned char h[32];
	size_t hl = sizeof(h);
	char hx[65];

	if (l == NULL || n < 2 ||
	    crt_of(ca, &l[n - 1], GNUTLS_X509_FMT_DER) < 0)
		return -1;
	if (gnutls_x509_crt_get_fingerprint(*ca, GNUTLS_DIG_SHA256, h, &hl) <
	        0 ||
	    hl != 32)
		goto fail;
	for (size_t i = 0; i < 32; i++)
		snprintf(hx + 2 * i, 3, "%02x", h[i]);
	if (strcmp(hx, pin) != 0 ||
	    gnutls_x509_crt_get_ca_status(*ca, NULL) <= 0)
		goto fail;
	if (leaf_ok(*ca, &l[0], NL_ROLE_CONTROL, NULL) < 0)
		goto fail;
	return 0;
fail:
	gnutls_x509_crt_deinit(*ca);
	return -1;
}

int
nl_cert_check(gnutls_x509_crt_t ca, const char *pem, gnutls_x509_privkey_t k,
              const char *name)
{
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)}, der;
	gnutls_x509_crt_t c;
	unsigned char a[64], b[64];
	size_t al = sizeof(a), bl = sizeof(b);
	int rc = -1;

	if (crt_of(&c, &d, GNUTLS_X509_FMT_PEM) < 0)
		return -1;
	if (gnutls_x509_crt_get_key_id(c, 0, a, &al) == 0 &&
	    gnutls_x509_privkey_get_key_id(k, 0, b, &bl) == 0 && al == bl &&
	    memcmp(a, b, al) == 0 &&
	    gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_DER, &der) == 0) {
		rc = leaf_ok(ca, &der, NL_ROLE_NODE, name);
		gnutls_free(der.data);
	}
	gnutls_x509_crt_deinit(c);
	return rc;
}

static struct jv *
enroll_req(const char *token, const char *name, const char *addr,
           const struct jv *facts, gnutls_x509_privkey_t k)
{
	gnutls_pubkey_t pub;
	gnutls_datum_t d;
	struct jv *r;

	if (nl_key_pub(k, &pub) < 0)
		return NULL;
	if (gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_PEM, &d) < 0) {
		gnutls_pubkey_deinit(pub);
		return NULL;
	}
	r = jv_obj();
	jv_set_str(r, "op", "enroll");
	jv_set_str(r, "token", token);
	jv_set_str(r, "name", name);
	jv_set_str(r, "addr", addr);
	jv_set(r, "pubkey", jv_new_str_lossy((const char *)d.data, d.size));
	if (facts != NULL)
		jv_set(r, "facts", jv_copy((struct jv *)facts));
	gnutls_free(d.data);
	gnutls_pubkey_deinit(pub);
	return r;
}

static int
save_all(const char *dir, gnutls_x509_crt_t ca, const char *cert,
         gnutls_x509_privkey_t k)
{
	gnutls_datum_t d;
	int rc;

	if (gnutls_x509_crt_export2(ca, GNUTLS_X509_FMT_PEM, &d) < 0)
		return -1;
	rc = nl_file_write(dir, "ca.pem", d.data, d.size, 0644);
	gnutls_free(d.data);
	if (rc < 0 || nl_key_save(dir, "key.pem", k) < 0 ||
	    nl_file_write(dir, "cert.pem", cert, strlen(cert), 0644) < 0)
		return -1;
	return 0;
}

struct enroll {
	gnutls_certificate_credentials_t cred;
	gnutls_session_t s;
	gnutls_x509_crt_t ca;
	gnutls_x509_privkey_t key;
	struct jv *req, *ans;
	int fd;
};

static void
enroll_close(struct enroll *x)
{
	if (x->s != NULL)
		gnutls_deinit(x->s);
	if (x->fd >= 0)
		close(x->fd);
	if (x->cred != NULL)
		gnutls_certificate_free_credentials(x->cred);
	if (x->ca != NULL)
		gnutls_x509_crt_deinit(x->ca);
	if (x->key != NULL)
		gnutls_x509_privkey_deinit(x->key);
	jv_free(x->req);
	jv_free(x->ans);
}

/* Connects and checks the CP against the pin; then sends x->req. */
static int
exchange(struct enroll *x, const char *addr, const char *pin, struct err *e)
{
	int64_t deadline = nl_deadline(NL_CALL_MS);

	x->fd = nl_dial(addr, deadline, e);
	if (x->fd < 0)
		return -1;
	if (gnutls_certificate_allocate_credentials(&x->cred) < 0 ||
	    nl_tls_open(&x->s, x->cred, x->fd, false, deadline) < 0)
		return err_set(e, 503, "node_down", "TLS with %s failed", addr);
	if (pinned(x->s, pin, &x->ca) < 0) {
		x->ca = NULL;
		return err_set(e, 503, "node_down",
		               "%s is not the control plane the token names "
		               "(its CA does not match the token's hash)",
		               addr);
	}
	if (nl_tls_put(x->s, x->fd, x->req, NL_HDR_MAX, deadline) < 0 ||
	    (x->ans = nl_tls_get(x->s, x->fd, NL_ANS_MAX, NULL, deadline)) ==
	        NULL)
		return err_set(e, 503, "node_down", "no answer from %s", addr);
	if (!jv_is_true(jv_get(x->ans, "ok"))) {
		nl_answer_err(x->ans, e);
		return -1;
	}
	return 0;
}

int
nl_enroll(const char *dir, const char *control_addr, const char *token,
          const char *name, const char *addr, const struct jv *facts,
          struct jv **ans, struct err *e)
{
	struct enroll x = {.fd = -1};
	char pin[65], sh[65];
	const char *cert;
	int rc = -1;

	if (ans != NULL)
		*ans = NULL;
	if (nl_token_parse(token, pin, sh, e) < 0)
		return -1;
	if (!nl_name_valid(name))
		return ERR_BAD(e, "node name: 1 to 63 of [A-Za-z0-9._-]");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return ERR_INTERNAL(e, "cannot make %s: %s", dir,
		                    strerror(errno));
	if (nl_key_new(&x.key) < 0) {
		x.key = NULL;
		return ERR_INTERNAL(e, "cannot make a key");
	}
	x.req = enroll_req(token, name, addr, facts, x.key);
	if (x.req == NULL) {
		ERR_INTERNAL(e, "cannot make a key");
		goto out;
	}
	if (exchange(&x, control_addr, pin, e) < 0)
		goto out;
	cert = jv_str(jv_get(x.ans, "cert"));
	if (cert == NULL || nl_cert_check(x.ca, cert, x.key, name) < 0) {
		err_set(e, 503, "node_down",
		        "the control plane's certificate for this node is not "
		        "valid");
		goto out;
	}
	if (save_all(dir, x.ca, cert, x.key) < 0) {
		ERR_INTERNAL(e, "cannot write the credentials in %s", dir);
		goto out;
	}
	if (ans != NULL) {
		*ans = x.ans;
		x.ans = NULL;
	}
	rc = 0;
out:
	enroll_close(&x);
	return rc;
}
