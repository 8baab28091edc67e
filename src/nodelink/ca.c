/*
 * The control plane's CA for the node channel, and join tokens.
 *
 * <dir> (the CP's <data>/state/nodeca) holds ca.pem and ca.key (the CA,
 * ten years), and the CP's own cert.pem and key.pem (role control, 90
 * days); an agent's dir holds ca.pem, cert.pem and key.pem only.  Keys
 * are ECDSA P-256, written 0600; a key readable by others is refused
 * when loaded.  A node's certificate says its role in the OU
 * ("sandboxd-node"), its name in the CN, its address in the SAN, and is
 * signed for the public key the node made itself: its private key
 * never leaves the node.
 *
 * A join token is "SBXJ1-<hex SHA-256 of the CA certificate's DER>-
 * <32 random bytes in base32>".  The first part is the pin: an
 * enrolling agent accepts only a server whose chain ends in that CA
 * (no trust on first use).  The second is the secret; the CP stores
 * only its hash (SHA-256 of the base32 text, hex).
 *
 * Renewal: nl_ca_init makes the CP's own certificate again when it has
 * less than NL_RENEW_DAYS to run (at each start of the CP); a node
 * renews its own with nl_renew (renew.c) through the CP's "renew" op.
 */
#include "nodelink/nlint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "lib/fileio.h"
#include "lib/limits.h"

#define NL_CA_DAYS      3650
#define NL_LEAF_DAYS    90
#define NL_RENEW_DAYS   30 /* the CP remakes its own certificate */
#define B32             "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
#define NL_SECRET_LEN   32
#define NL_SECRET_CHARS 52 /* ceil(256 / 5) */

static bool
file_exists(const char *dir, const char *name)
{
	char path[WORKSPACE_PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

int
nl_key_new(gnutls_x509_privkey_t *k)
{
	if (gnutls_x509_privkey_init(k) < 0)
		return -1;
	if (gnutls_x509_privkey_generate(
	        *k, GNUTLS_PK_ECDSA,
	        GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0) {
		gnutls_x509_privkey_deinit(*k);
		return -1;
	}
	return 0;
}

/* A key or certificate as PEM into dir/name. */
int
nl_key_save(const char *dir, const char *name, gnutls_x509_privkey_t k)
{
	gnutls_datum_t d;
	int rc;

	if (gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, &d) < 0)
		return -1;
	rc = nl_file_write(dir, name, d.data, d.size, 0600);
	explicit_bzero(d.data, d.size);
	gnutls_free(d.data);
	return rc;
}

static int
save_crt(const char *dir, const char *name, gnutls_x509_crt_t c)
{
	gnutls_datum_t d;
	int rc;

	if (gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &d) < 0)
		return -1;
	rc = nl_file_write(dir, name, d.data, d.size, 0644);
	gnutls_free(d.data);
	return rc;
}

/* Version, serial, validity and subject of a new certificate. */
static int
crt_base(gnutls_x509_crt_t c, const char *ou, const char *cn, int days)
{
	unsigned char serial[16];
	time_t now = time(NULL);

	if (gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)) < 0)
		return -1;
	serial[0] &= 0x7f; /* a positive INTEGER */
	serial[0] |= 0x01;
	if (gnutls_x509_crt_set_version(c, 3) < 0 ||
	    gnutls_x509_crt_set_serial(c, serial, sizeof(serial)) < 0 ||
	    gnutls_x509_crt_set_activation_time(c, now - 300) < 0 ||
	    gnutls_x509_crt_set_expiration_time(c, now + (time_t)days * 86400) <
	        0 ||
	    gnutls_x509_crt_set_dn_by_oid(
	        c, GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME, 0, ou,
	        (unsigned)strlen(ou)) < 0 ||
	    gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
	                                  (unsigned)strlen(cn)) < 0)
		return -1;
	return 0;
}

/* SAN: the host of addr ("host:port" or a bare host), IP or DNS name. */
static int
crt_san(gnutls_x509_crt_t c, const char *addr)
{
	char host[256], port[8];
	unsigned char ip[16];

	if (addr == NULL || addr[0] == '\0')
		return 0;
	if (nl_split_addr(addr, host, port) < 0)
		snprintf(host, sizeof(host), "%s", addr);
	if (inet_pton(AF_INET, host, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(
		    c, GNUTLS_SAN_IPADDRESS, ip, 4, GNUTLS_FSAN_APPEND);
	if (inet_pton(AF_INET6, host, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(
		    c, GNUTLS_SAN_IPADDRESS, ip, 16, GNUTLS_FSAN_APPEND);
	return gnutls_x509_crt_set_subject_alt_name(c, GNUTLS_SAN_DNSNAME, host,
	                                            (unsigned)strlen(host),
	                                            GNUTLS_FSAN_APPEND);
}

static int
ca_make(const char *dir)
{
	gnutls_x509_privkey_t k;
	gnutls_x509_crt_t c = NULL;
	unsigned char id[64];
	size_t idl = sizeof(id);
	int rc = -1;

	if (nl_key_new(&k) < 0)
		return -1;
	if (gnutls_x509_crt_init(&c) < 0)
		goto out;
	if (crt_base(c, NL_OU_CA, "sandboxd node CA", NL_CA_DAYS) < 0 ||
	    gnutls_x509_crt_set_key(c, k) < 0 ||
	    gnutls_x509_crt_set_basic_constraints(c, 1, 0) < 0 ||
	    gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_KEY_CERT_SIGN |
	                                         GNUTLS_KEY_CRL_SIGN) < 0 ||
	    gnutls_x509_crt_get_key_id(c, 0, id, &idl) < 0 ||
	    gnutls_x509_crt_set_subject_key_id(c, id, idl) < 0 ||
	    gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0) < 0)
		goto out;
	if (nl_key_save(dir, "ca.key", k) == 0 &&
	    save_crt(dir, "ca.pem", c) == 0)
		rc = 0;
out:
	if (c != NULL)
		gnutls_x509_crt_deinit(c);
	gnutls_x509_privkey_deinit(k);
	return rc;
}

struct ca {
	gnutls_x509_crt_t crt;
	gnutls_x509_privkey_t key;
};

static void
ca_close(struct ca *ca)
{
	if (ca->crt != NULL)
		gnutls_x509_crt_deinit(ca->crt);
	if (ca->key != NULL)
		gnutls_x509_privkey_deinit(ca->key);
}

static int
ca_load(const char *dir, struct ca *ca)
{
	size_t cl = 0, kl = 0;
	char *c = nl_file_read(dir, "ca.pem", false, &cl);
	char *k = nl_file_read(dir, "ca.key", true, &kl);
	gnutls_datum_t dc = {(unsigned char *)c, (unsigned)cl};
	gnutls_datum_t dk = {(unsigned char *)k, (unsigned)kl};
	int rc = -1;

	ca->crt = NULL;
	ca->key = NULL;
	if (c != NULL && k != NULL && gnutls_x509_crt_init(&ca->crt) == 0 &&
	    gnutls_x509_privkey_init(&ca->key) == 0 &&
	    gnutls_x509_crt_import(ca->crt, &dc, GNUTLS_X509_FMT_PEM) == 0 &&
	    gnutls_x509_privkey_import(ca->key, &dk, GNUTLS_X509_FMT_PEM) == 0)
		rc = 0;
	if (k != NULL)
		explicit_bzero(k, kl);
	free(c);
	free(k);
	if (rc < 0)
		ca_close(ca);
	return rc;
}

/* A leaf certificate for pub, signed by ca, as PEM (malloc'd). */
static char *
issue(struct ca *ca, gnutls_pubkey_t pub, const char *ou, const char *cn,
      const char *addr)
{
	gnutls_x509_crt_t c;
	gnutls_datum_t d = {NULL, 0};
	unsigned char id[64];
	size_t idl = sizeof(id);
	char *pem = NULL;

	if (gnutls_x509_crt_init(&c) < 0)
		return NULL;
	if (crt_base(c, ou, cn, NL_LEAF_DAYS) < 0 ||
	    gnutls_x509_crt_set_pubkey(c, pub) < 0 ||
	    gnutls_x509_crt_set_basic_constraints(c, 0, -1) < 0 ||
	    gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_DIGITAL_SIGNATURE) <
	        0 ||
	    gnutls_x509_crt_set_key_purpose_oid(c, GNUTLS_KP_TLS_WWW_CLIENT,
	                                        0) < 0 ||
	    gnutls_x509_crt_set_key_purpose_oid(c, GNUTLS_KP_TLS_WWW_SERVER,
	                                        0) < 0 ||
	    crt_san(c, addr) < 0 ||
	    gnutls_x509_crt_get_subject_key_id(ca->crt, id, &idl, NULL) < 0 ||
	    gnutls_x509_crt_set_authority_key_id(c, id, idl) < 0 ||
	    gnutls_x509_crt_sign2(c, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0) <
	        0 ||
	    gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &d) < 0)
		goto out;
	pem = malloc(d.size + 1);
	if (pem != NULL) {
		memcpy(pem, d.data, d.size);
		pem[d.size] = '\0';
	}
out:
	gnutls_free(d.data);
	gnutls_x509_crt_deinit(c);
	return pem;
}

int
nl_key_pub(gnutls_x509_privkey_t k, gnutls_pubkey_t *pub)
{
	gnutls_privkey_t pk;
	int rc = -1;

	if (gnutls_pubkey_init(pub) < 0)
		return -1;
	if (gnutls_privkey_init(&pk) == 0) {
		if (gnutls_privkey_import_x509(pk, k, 0) == 0 &&
		    gnutls_pubkey_import_privkey(*pub, pk, 0, 0) == 0)
			rc = 0;
		gnutls_privkey_deinit(pk);
	}
	if (rc < 0)
		gnutls_pubkey_deinit(*pub);
	return rc;
}

/* The CP's own key and certificate, signed by the CA in dir. */
static int
own_make(const char *dir, struct ca *ca, const char *name, const char *addr)
{
	gnutls_x509_privkey_t k;
	gnutls_pubkey_t pub;
	char *pem = NULL;
	int rc = -1;

	if (nl_key_new(&k) < 0)
		return -1;
	if (nl_key_pub(k, &pub) == 0) {
		pem = issue(ca, pub, NL_OU_CONTROL, name, addr);
		gnutls_pubkey_deinit(pub);
	}
	/* As a node's renewal: both beside the old pair, then the key
	 * first (nl_open finishes a pair a crash cut). */
	if (pem != NULL && nl_key_save(dir, "key.pem.new", k) == 0 &&
	    nl_file_write(dir, "cert.pem.new", pem, strlen(pem), 0644) == 0 &&
	    nl_rename_in(dir, "key.pem.new", "key.pem") == 0 &&
	    nl_finish_renewal(dir) == 0)
		rc = 0;
	free(pem);
	gnutls_x509_privkey_deinit(k);
	return rc;
}

bool
nl_name_valid(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '-' || s[i] == '_'))
			return false;
	return true;
}

/* The CP's own certificate has more than NL_RENEW_DAYS to run. */
static bool
own_fresh(const char *dir)
{
	size_t len = 0;
	char *pem = nl_file_read(dir, "cert.pem", false, &len);
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
	gnutls_x509_crt_t c;
	bool fresh = false;

	if (pem != NULL && gnutls_x509_crt_init(&c) == 0) {
		if (gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM) == 0)
			fresh = gnutls_x509_crt_get_expiration_time(c) >
			        time(NULL) + (time_t)NL_RENEW_DAYS * 86400;
		gnutls_x509_crt_deinit(c);
	}
	free(pem);
	return fresh;
}

int
nl_ca_init(const char *dir, const char *name, const char *addr, struct err *e)
{
	struct ca ca;
	int rc;

	if (!nl_name_valid(name))
		return ERR_BAD(e, "node name: 1 to 63 of [A-Za-z0-9._-]");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return ERR_INTERNAL(e, "cannot make %s: %s", dir,
		                    strerror(errno));
	if (!file_exists(dir, "ca.pem") && ca_make(dir) < 0)
		return ERR_INTERNAL(e, "cannot make the node CA in %s", dir);
	if (file_exists(dir, "cert.pem") && file_exists(dir, "key.pem") &&
	    own_fresh(dir))
		return 0;
	if (ca_load(dir, &ca) < 0)
		return ERR_INTERNAL(e, "cannot load the node CA in %s", dir);
	rc = own_make(dir, &ca, name, addr);
	ca_close(&ca);
	if (rc < 0)
		return ERR_INTERNAL(e, "cannot make the control certificate");
	return 0;
}

int
nl_ca_sign(const char *dir, const char *pubkey_pem, const char *name,
           const char *addr, char **cert_pem, struct err *e)
{
	gnutls_datum_t d = {(unsigned char *)pubkey_pem,
	                    pubkey_pem ? (unsigned)strlen(pubkey_pem) : 0};
	gnutls_pubkey_t pub;
	unsigned bits = 0;
	struct ca ca;
	char *pem = NULL;

	if (!nl_name_valid(name))
		return ERR_BAD(e, "node name: 1 to 63 of [A-Za-z0-9._-]");
	if (d.size == 0 || d.size > NL_PEM_MAX || gnutls_pubkey_init(&pub) < 0)
		return ERR_BAD(e, "no public key");
	if (gnutls_pubkey_import(pub, &d, GNUTLS_X509_FMT_PEM) < 0 ||
	    gnutls_pubkey_get_pk_algorithm(pub, &bits) != GNUTLS_PK_ECDSA) {
		gnutls_pubkey_deinit(pub);
		return ERR_BAD(e, "the public key is not an ECDSA key in PEM");
	}
	if (ca_load(dir, &ca) < 0) {
		gnutls_pubkey_deinit(pub);
		return ERR_INTERNAL(e, "cannot load the node CA in %s", dir);
	}
	pem = issue(&ca, pub, NL_OU_NODE, name, addr);
	ca_close(&ca);
	gnutls_pubkey_deinit(pub);
	if (pem == NULL)
		return ERR_INTERNAL(e, "cannot sign the node's certificate");
	*cert_pem = pem;
	return 0;
}

static void
hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

int
nl_ca_hash(const char *dir, char out[65], struct err *e)
{
	size_t len = 0;
	char *pem = nl_file_read(dir, "ca.pem", false, &len);
	gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
	gnutls_x509_crt_t c;
	unsigned char h[32];
	size_t hl = sizeof(h);
	int rc = -1;

	if (pem != NULL && gnutls_x509_crt_init(&c) == 0) {
		if (gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM) == 0 &&
		    gnutls_x509_crt_get_fingerprint(c, GNUTLS_DIG_SHA256, h,
		                                    &hl) == 0 &&
		    hl == 32)
			rc = 0;
		gnutls_x509_crt_deinit(c);
	}
	free(pem);
	if (rc < 0)
		return ERR_INTERNAL(e, "cannot read the node CA in %s", dir);
	hex(h, 32, out);
	return 0;
}

static void
secret_hash(const char *secret, char out[65])
{
	unsigned char h[32];

	gnutls_hash_fast(GNUTLS_DIG_SHA256, secret, strlen(secret), h);
	hex(h, 32, out);
}

int
nl_token_new(const char *dir, char token[NL_TOKEN_LEN], char sh[65],
             struct err *e)
{
	unsigned char raw[NL_SECRET_LEN];
	char pin[65], secret[NL_SECRET_CHARS + 1];
	unsigned acc = 0, nbits = 0;
	size_t o = 0;

	if (nl_ca_hash(dir, pin, e) < 0)
		return -1;
	if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof(raw)) < 0)
		return ERR_INTERNAL(e, "no random bytes");
	for (size_t i = 0; i < sizeof(raw); i++) {
		acc = (acc << 8) | raw[i];
		nbits += 8;
		while (nbits >= 5) {
			secret[o++] = B32[(acc >> (nbits - 5)) & 31];
			nbits -= 5;
		}
	}
	if (nbits > 0)
		secret[o++] = B32[(acc << (5 - nbits)) & 31];
	secret[o] = '\0';
	snprintf(token, NL_TOKEN_LEN, "SBXJ1-%s-%s", pin, secret);
	secret_hash(secret, sh);
	explicit_bzero(raw, sizeof(raw));
	explicit_bzero(secret, sizeof(secret));
	return 0;
}

int
nl_token_parse(const char *token, char ca_hash[65], char sh[65], struct err *e)
{
	const char *p = token, *s;

	if (p == NULL || strncmp(p, "SBXJ1-", 6) != 0)
		return ERR_BAD(e, "not a join token (SBXJ1-...)");
	p += 6;
	for (int i = 0; i < 64; i++)
		if (!((p[i] >= '0' && p[i] <= '9') ||
		      (p[i] >= 'a' && p[i] <= 'f')))
			return ERR_BAD(e, "a join token's CA hash is 64 hex");
	if (p[64] != '-')
		return ERR_BAD(e, "a join token's CA hash is 64 hex");
	s = p + 65;
	if (strlen(s) != NL_SECRET_CHARS || strspn(s, B32) != NL_SECRET_CHARS)
		return ERR_BAD(e, "a join token's secret is %d base32 letters",
		               NL_SECRET_CHARS);
	memcpy(ca_hash, p, 64);
	ca_hash[64] = '\0';
	secret_hash(s, sh);
	return 0;
}
