/*
 * http: the HTTP client, over libcurl (the only module that includes it).
 * One call is one transfer on its own handle, so calls from several
 * threads stay independent.  Used for the Docker Engine API (a unix
 * socket, plain HTTP), by the credential proxy towards the model
 * providers (HTTPS) and by the command-line client towards the API.
 *
 * libcurl is initialised without its TLS globals (CURL_GLOBAL_NOTHING;
 * TLS is set up on first use) to keep the daemon's resident memory
 * small.  We build against the GnuTLS flavour, so the process carries
 * one TLS library (the one libmicrohttpd already links), not two.
 * libssh2, which libcurl and libgit2 link, is initialised here first
 * without its crypto (see http_global_init).
 */
#ifndef NET_HTTP_H
#define NET_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define HTTP_ERR_LEN 256

/* What kind of failure ended a transfer that got no answer (the
 * credential proxy and doctor tell the user which one). */
enum http_fail {
	HTTP_FAIL_NONE,
	HTTP_FAIL_RESOLVE, /* the host name did not resolve */
	HTTP_FAIL_CONNECT, /* refused, unreachable */
	HTTP_FAIL_TLS,     /* handshake or certificate */
	HTTP_FAIL_TIMEOUT, /* connect or transfer timed out */
	HTTP_FAIL_OTHER,
};

struct http_call {
	const char *method;
	const char *url;
	const char *unix_socket;    /* NULL: TCP */
	bool https;                 /* allow https: as well as http: */
	const char *const *headers; /* "Name: value", NULL-terminated */
	const void *body;           /* sent when send_body (POST "" if none) */
	size_t body_len;
	bool send_body;
	long connect_timeout_ms;
	long timeout_s;   /* 0: none */
	long low_speed_s; /* >0: abort when nothing moves for this long */
	/* Each chunk of the response body; return n, or 0 to abort. */
	size_t (*on_body)(const char *p, size_t n, void *arg);
	/* Each header line of the response ("\r\n" included). */
	size_t (*on_header)(const char *p, size_t n, void *arg);
	void *arg;
	const atomic_bool *stop; /* aborts the transfer when it turns true */
	/* Called often while the transfer runs (a client's spinner). */
	void (*on_tick)(void *arg);
	/* Out: */
	long status;            /* 0 when no HTTP answer came */
	char err[HTTP_ERR_LEN]; /* set when the transfer failed */
	enum http_fail fail;    /* its kind (HTTP_FAIL_NONE on success) */
};

int http_global_init(void);
void http_global_cleanup(void);
/*
 * Performs the call.  0 when the transfer completed, -1 when it failed
 * (c->err says why; c->status tells whether an answer had started).
 */
int http_perform(struct http_call *c);
/* The failure kind's short name: "dns", "connect", "tls", "timeout",
 * "other" ("" for none). */
const char *http_fail_name(enum http_fail f);
/* What it means, in words ("does not resolve", ...). */
const char *http_fail_words(enum http_fail f);
/*
 * The host (and port, when the URL names one) of an http(s) URL into
 * out: "api.anthropic.com", "127.0.0.1:8080".  -1 when it has none or
 * does not fit.
 */
int http_url_host(const char *url, char *out, size_t len);
/* URL-encodes s into out; -1 when it does not fit. */
int http_escape(const char *s, char *out, size_t len);

#endif
