/* nodelink's CA: the files it makes, the certificates it signs, and
 * join tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nodelink/nlint.h"
#include "unit.h"

static char root[64], cadir[128], ca2dir[128];

static int
mode_of(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

static gnutls_x509_crt_t
crt_from(const char *pem)
{
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
	gnutls_x509_crt_t c;

	gnutls_x509_crt_init(&c);
	if (gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM) < 0) {
		gnutls_x509_crt_deinit(c);
		return NULL;
	}
	return c;
}

static gnutls_x509_crt_t
ca_crt(const char *dir)
{
	size_t len = 0;
	char *pem = nl_file_read(dir, "ca.pem", false, &len);
	gnutls_x509_crt_t c = pem ? crt_from(pem) : NULL;

	free(pem);
	return c;
}

/* A fresh P-256 public key as PEM (malloc'd). */
static char *
pubkey_pem(void)
{
	gnutls_x509_privkey_t k;
	gnutls_pubkey_t pub;
	gnutls_datum_t d;
	char *out;

	nl_key_new(&k);
	nl_key_pub(k, &pub);
	gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_PEM, &d);
	out = strndup((const char *)d.data, d.size);
	gnutls_free(d.data);
	gnutls_pubkey_deinit(pub);
	gnutls_x509_privkey_deinit(k);
	return out;
}

static void
ca_init_makes_the_ca_and_the_control_cert(void)
{
	struct err e = {0};
	char h1[65], h2[65];
	struct nodelink *nl = NULL;
	gnutls_x509_crt_t ca;
	time_t now = time(NULL);

	CHECK(nl_ca_init(cadir, "cp", "10.1.2.3:7444", &e) == 0);
	CHECK(mode_of(cadir, "ca.key") == 0600);
	CHECK(mode_of(cadir, "key.pem") == 0600);
	CHECK(mode_of(cadir, "ca.pem") == 0644);
	CHECK(nl_ca_hash(cadir, h1, &e) == 0);
	CHECK(strlen(h1) == 64 && strspn(h1, "0123456789abcdef") == 64);
	/* Again: nothing is replaced. */
	CHECK(nl_ca_init(cadir, "cp", "10.1.2.3:7444", &e) == 0);
	CHECK(nl_ca_hash(cadir, h2, &e) == 0);
	CHECK_STR(h1, h2);
	CHECK(nl_open(&nl, cadir, &e) == 0);
	CHECK(nl != NULL && nl_role(nl) == NL_ROLE_CONTROL);
	CHECK(nl != NULL && strcmp(nl_name(nl), "cp") == 0);
	nl_free(nl);
	ca = ca_crt(cadir);
	CHECK(ca != NULL);
	if (ca == NULL)
		return;
	CHECK(gnutls_x509_crt_get_ca_status(ca, NULL) > 0);
	CHECK(gnutls_x509_crt_get_expiration_time(ca) > now + 3640L * 86400);
	gnutls_x509_crt_deinit(ca);
	/* Bad names are refused before anything is made. */
	CHECK(nl_ca_init(ca2dir, "", "x", &e) == -1);
	CHECK(nl_ca_init(ca2dir, "a/b", "x", &e) == -1);
	CHECK(access(ca2dir, F_OK) < 0);
}

static void
ca_sign_issues_a_node_cert(void)
{
	struct err e = {0};
	char *pub = pubkey_pem(), *pem = NULL, ou[64], cn[64], san[64];
	size_t n = sizeof(ou), cl = sizeof(cn), sl = sizeof(san);
	unsigned status = 1, type = 0;
	gnutls_x509_crt_t ca = ca_crt(cadir), c;
	time_t now = time(NULL);

	CHECK(nl_ca_sign(cadir, pub, "node-2", "192.0.2.7:7443", &pem, &e) ==
	      0);
	c = pem ? crt_from(pem) : NULL;
	CHECK(c != NULL);
	if (c == NULL || ca == NULL)
		goto out;
	gnutls_x509_crt_get_dn_by_oid(
	    c, GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME, 0, 0, ou, &n);
	gnutls_x509_crt_get_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn,
	                              &cl);
	CHECK_STR(ou, "sandboxd-node");
	CHECK_STR(cn, "node-2");
	CHECK(gnutls_x509_crt_get_subject_alt_name2(c, 0, san, &sl, &type,
	                                            NULL) >= 0);
	CHECK(type == GNUTLS_SAN_IPADDRESS && sl == 4 &&
	      memcmp(san, "\xc0\x00\x02\x07", 4) == 0);
	CHECK(gnutls_x509_crt_get_ca_status(c, NULL) == 0);
	CHECK(gnutls_x509_crt_get_expiration_time(c) <= now + 90L * 86400);
	CHECK(gnutls_x509_crt_get_expiration_time(c) > now + 89L * 86400);
	CHECK(gnutls_x509_crt_verify(c, &ca, 1, 0, &status) == 0 &&
	      status == 0);
	gnutls_x509_crt_deinit(ca);
	/* Another CA does not vouch for it. */
	CHECK(nl_ca_init(ca2dir, "cp2", "10.1.2.4:7444", &e) == 0);
	ca = ca_crt(ca2dir);
	status = 0;
	CHECK(ca != NULL &&
	      gnutls_x509_crt_verify(c, &ca, 1, 0, &status) == 0 &&
	      status != 0);
	gnutls_x509_crt_deinit(c);
out:
	if (ca != NULL)
		gnutls_x509_crt_deinit(ca);
	free(pem);
	free(pub);
}

static void
ca_sign_refuses_bad_input(void)
{
	struct err e = {0};
	char *pub = pubkey_pem(), *pem = NULL;

	CHECK(nl_ca_sign(cadir, "not a key", "n", "1.2.3.4", &pem, &e) == -1);
	CHECK(e.status == 400);
	CHECK(nl_ca_sign(cadir, NULL, "n", "1.2.3.4", &pem, &e) == -1);
	CHECK(nl_ca_sign(cadir, pub, "bad name", "1.2.3.4", &pem, &e) == -1);
	CHECK(nl_ca_sign(cadir, pub, "", "1.2.3.4", &pem, &e) == -1);
	CHECK(pem == NULL);
	/* A DNS name as the address. */
	CHECK(nl_ca_sign(cadir, pub, "n3", "node3.example:7443", &pem, &e) ==
	      0);
	free(pem);
	free(pub);
}

static void
open_refuses_a_key_others_can_read(void)
{
	struct err e = {0};
	struct nodelink *nl = NULL;
	char path[256];

	snprintf(path, sizeof(path), "%s/key.pem", cadir);
	CHECK(chmod(path, 0644) == 0);
	CHECK(nl_open(&nl, cadir, &e) == -1);
	CHECK(nl == NULL);
	CHECK(chmod(path, 0600) == 0);
	CHECK(nl_open(&nl, cadir, &e) == 0);
	nl_free(nl);
}

static void
tokens_pin_the_ca_and_hash_the_secret(void)
{
	struct err e = {0};
	char tok[NL_TOKEN_LEN], tok2[NL_TOKEN_LEN], sh[65], sh2[65], pin[65];
	char ca[65], bad[NL_TOKEN_LEN];

	CHECK(nl_token_new(cadir, tok, sh, &e) == 0);
	CHECK(nl_ca_hash(cadir, ca, &e) == 0);
	CHECK(strncmp(tok, "SBXJ1-", 6) == 0);
	CHECK(strlen(tok) == 6 + 64 + 1 + 52);
	CHECK(strncmp(tok + 6, ca, 64) == 0);
	CHECK(nl_token_parse(tok, pin, sh2, &e) == 0);
	CHECK_STR(pin, ca);
	CHECK_STR(sh, sh2);
	CHECK(strstr(tok, sh) == NULL); /* the hash is not in the token */
	CHECK(nl_token_new(cadir, tok2, sh2, &e) == 0);
	CHECK(strcmp(tok, tok2) != 0 && strcmp(sh, sh2) != 0);
	/* Malformed tokens. */
	CHECK(nl_token_parse("", pin, sh2, &e) == -1);
	CHECK(e.status == 400);
	snprintf(bad, sizeof(bad), "SBXJ2-%s", tok + 6);
	CHECK(nl_token_parse(bad, pin, sh2, &e) == -1);
	snprintf(bad, sizeof(bad), "%s", tok);
	bad[10] = 'G';
	CHECK(nl_token_parse(bad, pin, sh2, &e) == -1);
	snprintf(bad, sizeof(bad), "%s", tok);
	bad[80] = '1'; /* not base32 */
	CHECK(nl_token_parse(bad, pin, sh2, &e) == -1);
	snprintf(bad, sizeof(bad), "%sA", tok);
	CHECK(nl_token_parse(bad, pin, sh2, &e) == -1);
	snprintf(bad, sizeof(bad), "%s", tok);
	bad[strlen(bad) - 1] = '\0';
	CHECK(nl_token_parse(bad, pin, sh2, &e) == -1);
}

/* cadir's cert.pem made again for key.pem, ending in days. */
static void
shorten_own_cert(int days)
{
	size_t cl = 0, kl = 0, ol = 0;
	char *cpem = nl_file_read(cadir, "ca.pem", false, &cl);
	char *kpem = nl_file_read(cadir, "ca.key", true, &kl);
	char *opem = nl_file_read(cadir, "key.pem", true, &ol);
	gnutls_datum_t dc = {(unsigned char *)cpem, (unsigned)cl};
	gnutls_datum_t dk = {(unsigned char *)kpem, (unsigned)kl};
	gnutls_datum_t dok = {(unsigned char *)opem, (unsigned)ol}, out;
	gnutls_x509_crt_t ca, c;
	gnutls_x509_privkey_t cakey, k;
	unsigned char serial[4] = {9, 8, 7, 6};
	time_t now = time(NULL);

	gnutls_x509_crt_init(&ca);
	gnutls_x509_privkey_init(&cakey);
	gnutls_x509_privkey_init(&k);
	gnutls_x509_crt_import(ca, &dc, GNUTLS_X509_FMT_PEM);
	gnutls_x509_privkey_import(cakey, &dk, GNUTLS_X509_FMT_PEM);
	gnutls_x509_privkey_import(k, &dok, GNUTLS_X509_FMT_PEM);
	gnutls_x509_crt_init(&c);
	gnutls_x509_crt_set_version(c, 3);
	gnutls_x509_crt_set_serial(c, serial, sizeof(serial));
	gnutls_x509_crt_set_activation_time(c, now - 86400);
	gnutls_x509_crt_set_expiration_time(c, now + (time_t)days * 86400);
	gnutls_x509_crt_set_dn_by_oid(c,
	                              GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME,
	                              0, NL_OU_CONTROL, strlen(NL_OU_CONTROL));
	gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, "cp",
	                              2);
	gnutls_x509_crt_set_key(c, k);
	if (gnutls_x509_crt_sign2(c, ca, cakey, GNUTLS_DIG_SHA256, 0) == 0 &&
	    gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &out) == 0) {
		nl_file_write(cadir, "cert.pem", out.data, out.size, 0644);
		gnutls_free(out.data);
	}
	gnutls_x509_crt_deinit(c);
	gnutls_x509_crt_deinit(ca);
	gnutls_x509_privkey_deinit(k);
	gnutls_x509_privkey_deinit(cakey);
	free(cpem);
	free(kpem);
	free(opem);
}

static int64_t
own_expiry(void)
{
	struct err e = {0};
	struct nodelink *nl = NULL;
	int64_t t = 0;

	if (nl_open(&nl, cadir, &e) == 0)
		t = nl_cert_expires(nl);
	nl_free(nl);
	return t;
}

static void
ca_init_renews_the_control_cert_near_its_end(void)
{
	struct err e = {0};
	time_t now = time(NULL);
	char h1[65], h2[65];

	CHECK(nl_ca_hash(cadir, h1, &e) == 0);
	shorten_own_cert(60); /* 60 days left: kept */
	CHECK(own_expiry() < now + 61L * 86400);
	CHECK(nl_ca_init(cadir, "cp", "10.1.2.3:7444", &e) == 0);
	CHECK(own_expiry() < now + 61L * 86400);
	shorten_own_cert(10); /* 10 days left: made again */
	CHECK(nl_ca_init(cadir, "cp", "10.1.2.3:7444", &e) == 0);
	CHECK(own_expiry() > now + 89L * 86400);
	CHECK(mode_of(cadir, "key.pem") == 0600);
	CHECK(nl_ca_hash(cadir, h2, &e) == 0);
	CHECK_STR(h1, h2); /* the CA itself stays */
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"ca init makes the CA and the control cert",
	     ca_init_makes_the_ca_and_the_control_cert},
	    {"ca sign issues a node cert", ca_sign_issues_a_node_cert},
	    {"ca sign refuses bad input", ca_sign_refuses_bad_input},
	    {"ca init renews the control cert near its end",
	     ca_init_renews_the_control_cert_near_its_end},
	    {"open refuses a key others can read",
	     open_refuses_a_key_others_can_read},
	    {"tokens pin the CA and hash the secret",
	     tokens_pin_the_ca_and_hash_the_secret},
	};
	char cmd[128];
	int rc;

	snprintf(root, sizeof(root), "/tmp/nodeca-XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	snprintf(cadir, sizeof(cadir), "%s/ca", root);
	snprintf(ca2dir, sizeof(ca2dir), "%s/ca2", root);
	rc = UNIT_RUN("nodeca", tests);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return rc;
}
