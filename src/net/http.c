/* The HTTP client over libcurl (see http.h). */
#include "net/http.h"

#include <curl/curl.h>
#include <libssh2.h>
#include <stdio.h>
#include <string.h>

/*
 * libcurl initialises libssh2 (for scp: and sftp:, which we never use),
 * and libssh2's crypto set-up loads OpenSSL's engines and configuration:
 * 1.5 MiB resident for nothing.  Initialising libssh2 first without its
 * crypto makes curl's (and libgit2's) libssh2_init a reference count;
 * OpenSSL initialises itself on first use should anything need it.
 */
int
http_global_init(void)
{
	if (libssh2_init(LIBSSH2_INIT_NO_CRYPTO) != 0)
		return -1;
	if (curl_global_init(CURL_GLOBAL_NOTHING) != 0) {
		libssh2_exit();
		return -1;
	}
	return 0;
}

void
http_global_cleanup(void)
{
	curl_global_cleanup();
	libssh2_exit();
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct http_call *c = arg;

	return c->on_body ? c->on_body(p, size * n, c->arg) : size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct http_call *c = arg;

	return c->on_header ? c->on_header(p, size * n, c->arg) : size * n;
}

static int
progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct http_call *c = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	if (c->on_tick)
		c->on_tick(c->arg);
	return c->stop && atomic_load(c->stop) ? 1 : 0;
}

static enum http_fail
fail_kind(CURLcode cc)
{
	switch (cc) {
	case CURLE_OK:
		return HTTP_FAIL_NONE;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return HTTP_FAIL_RESOLVE;
	case CURLE_COULDNT_CONNECT:
		return HTTP_FAIL_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return HTTP_FAIL_TIMEOUT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_USE_SSL_FAILED:
		return HTTP_FAIL_TLS;
	default:
		return HTTP_FAIL_OTHER;
	}
}

int
http_perform(struct http_call *c)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdr = NULL, *h2;
	CURLcode cc;
	CURL *h = curl_easy_init();

	c->status = 0;
	c->err[0] = '\0';
	c->fail = HTTP_FAIL_NONE;
	if (h == NULL) {
		c->fail = HTTP_FAIL_OTHER;
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -1;
	}
	for (const char *const *p = c->headers; p && *p; p++) {
		h2 = curl_slist_append(hdr, *p);
		if (h2 == NULL)
			break;
		hdr = h2;
	}
	if (c->unix_socket)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->unix_socket);
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR,
	                 c->https ? "http,https" : "http");
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, c->timeout_s);
	if (c->low_speed_s > 0) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->low_speed_s);
	}
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	if (c->stop || c->on_tick) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	if (hdr)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	if (c->send_body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS,
		                 c->body ? (const char *)c->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		                 (curl_off_t)c->body_len);
	}
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	if (cc == CURLE_OK)
		return 0;
	c->fail = fail_kind(cc);
	snprintf(c->err, sizeof(c->err), "%s",
	         errbuf[0] ? errbuf : curl_easy_strerror(cc));
	return -1;
}

static const struct {
	const char *name, *words;
} fail_text[] = {
    [HTTP_FAIL_NONE] = {"", ""},
    [HTTP_FAIL_RESOLVE] = {"dns", "does not resolve"},
    [HTTP_FAIL_CONNECT] = {"connect", "refused the connection or cannot "
                                      "be reached"},
    [HTTP_FAIL_TLS] = {"tls", "failed the TLS handshake"},
    [HTTP_FAIL_TIMEOUT] = {"timeout", "did not answer in time"},
    [HTTP_FAIL_OTHER] = {"other", "failed"},
};

const char *
http_fail_name(enum http_fail f)
{
	return f <= HTTP_FAIL_OTHER ? fail_text[f].name : "other";
}

const char *
http_fail_words(enum http_fail f)
{
	return f <= HTTP_FAIL_OTHER ? fail_text[f].words : "failed";
}

int
http_url_host(const char *url, char *out, size_t len)
{
	const char *p = strstr(url, "://");
	size_t n;

	if (p == NULL)
		return -1;
	p += 3;
	n = strcspn(p, "/?#");
	/* Credentials in a URL are not part of the name to show. */
	for (size_t i = 0; i < n; i++)
		if (p[i] == '@') {
			p += i + 1;
			n -= i + 1;
			i = (size_t)-1;
		}
	if (n == 0 || n >= len)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

int
http_escape(const char *s, char *out, size_t len)
{
	char *enc = curl_easy_escape(NULL, s, 0);
	int rc = -1;

	if (enc && strlen(enc) < len) {
		memcpy(out, enc, strlen(enc) + 1);
		rc = 0;
	}
	curl_free(enc);
	return rc;
}
