/*
 * Renewal of a node's certificate before its 90 days run out: the
 * agent makes a new key, asks the CP's "renew" op with its current
 * certificate (which says who it is: the CP signs for that CN only),
 * checks the answer as enroll does, then replaces its files.  Two files
 * cannot be renamed at once, so the new pair is written beside the old
 * (key.pem.new, cert.pem.new) and renamed key first: a crash between
 * the renames leaves the new key with the old certificate, which
 * nl_open repairs by taking cert.pem.new (nl_finish_renewal).
 */
#include "nodelink/nlint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gnutls_x509_crt_t
load_ca(const char *dir)
{
	size_t len = 0;
	char *pem = nl_file_read(dir, "ca.pem", false, &len);
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
	gnutls_x509_crt_t c = NULL;

	if (pem != NULL && gnutls_x509_crt_init(&c) == 0 &&
	    gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM) < 0) {
		gnutls_x509_crt_deinit(c);
		c = NULL;
	}
	free(pem);
	return c;
}

static struct jv *
renew_req(gnutls_x509_privkey_t k)
{
	gnutls_pubkey_t pub;
	gnutls_datum_t d;
	struct jv *r = NULL;

	if (nl_key_pub(k, &pub) < 0)
		return NULL;
	if (gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_PEM, &d) == 0) {
		r = jv_obj();
		jv_set_str(r, "op", "renew");
		jv_set(r, "pubkey",
		       jv_new_str_lossy((const char *)d.data, d.size));
		gnutls_free(d.data);
	}
	gnutls_pubkey_deinit(pub);
	return r;
}

static int
replace(const char *dir, const char *cert, gnutls_x509_privkey_t k)
{
	if (nl_key_save(dir, "key.pem.new", k) < 0 ||
	    nl_file_write(dir, "cert.pem.new", cert, strlen(cert), 0644) < 0 ||
	    nl_rename_in(dir, "key.pem.new", "key.pem") < 0)
		return -1;
	return nl_finish_renewal(dir);
}

int
nl_renew(struct nodelink *nl, const char *dir, const char *control_addr,
         struct err *e)
{
	gnutls_x509_privkey_t k;
	gnutls_x509_crt_t ca = NULL;
	struct jv *req = NULL, *ans = NULL;
	const char *cert;
	int rc = -1;

	if (nl->role != NL_ROLE_NODE)
		return ERR_INTERNAL(e, "only a node renews this way");
	if (nl_key_new(&k) < 0)
		return ERR_INTERNAL(e, "cannot make a key");
	req = renew_req(k);
	ca = load_ca(dir);
	if (req == NULL || ca == NULL) {
		ERR_INTERNAL(e, "cannot read the credentials in %s", dir);
		goto out;
	}
	if (nl_call(nl, control_addr, NL_ROLE_CONTROL, req, &ans, 0, e) < 0)
		goto out;
	cert = jv_str(jv_get(ans, "cert"));
	if (cert == NULL || nl_cert_check(ca, cert, k, nl->name) < 0) {
		err_set(e, 503, "node_down",
		        "the control plane's renewed certificate is not valid");
		goto out;
	}
	if (replace(dir, cert, k) < 0) {
		ERR_INTERNAL(e, "cannot write the credentials in %s", dir);
		goto out;
	}
	rc = 0;
out:
	jv_free(req);
	jv_free(ans);
	if (ca != NULL)
		gnutls_x509_crt_deinit(ca);
	gnutls_x509_privkey_deinit(k);
	return rc;
}
