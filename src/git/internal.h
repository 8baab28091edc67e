/* Shared by the git module's own files only (they alone include git2.h). */
#ifndef GIT_INTERNAL_H
#define GIT_INTERNAL_H

#include <git2.h>
#include <stdbool.h>

#include "git/git.h"
#include "lib/err.h"

/* open.c: libgit2 initialized once with our settings; 0 or -1. */
int gitws_init(void);
/* The app's lock (one stripe per key), held across a helper's run. */
void gitws_lock(const char *key);
void gitws_unlock(const char *key);

/*
 * Under the app's lock and with the sandbox user's fsuid, opens ws's app
 * repository as hostile input and calls fn(repo, arg).  Returns fn's
 * result, GITWS_NOT_REPO, or -1 with e filled.
 */
int gitws_with_repo(const char *key, const char *ws,
                    int (*fn)(git_repository *, void *, struct err *),
                    void *arg, struct err *e);
/* Fills e with libgit2's last error; returns -1. */
int gitws_lib_err(struct err *e, const char *what);

/*
 * The token for a transport: given from the credentials callback only
 * when the URL's host is cred_host, and only once (a second ask means it
 * was refused: fail instead of looping).
 */
struct gitws_auth {
	const char *cred_host; /* NULL: no credential */
	const char *username;  /* NULL or "": x-access-token */
	const char *token;
	int asked;
	bool refused;
};

int gitws_auth_cb(git_credential **out, const char *url, const char *user,
                  unsigned int allowed, void *payload);
/* The authority (host[:port]) of an http(s) URL, without userinfo. */
void gitws_url_authority(const char *url, char *out, size_t len);
/* msg with every occurrence of token replaced by [redacted], into out. */
void gitws_redact(const char *msg, const char *token, char *out, size_t len);
/* {<flag>:false, reason, message} with the token redacted. */
struct jv *gitws_failure(const char *flag, const char *reason, const char *msg,
                         const char *token);
/*
 * "tls_failed" (the server's certificate was refused, or TLS failed),
 * "unreachable" (no connection), or NULL, for libgit2's last error.
 */
const char *gitws_net_reason(int rc);
/* Whether a failed call was about authentication. */
bool gitws_auth_failed(int rc, const struct gitws_auth *a, const char *msg);

/* The push itself, run in the helper (remote.c). */
int gitws_push_here(const char *key, const char *ws, const struct gitws_push *p,
                    struct jv **out, struct err *e);
/* The clone itself, run in the helper (clone.c). */
int gitws_clone_here(const char *dir, const struct gitws_clone *c,
                     struct jv **out, struct err *e);
/*
 * Refuses (reason blocked_host, 0 with *out set) a URL whose host
 * resolves to a loopback, private, link-local or otherwise non-public
 * address, unless allow_private (or, for loopback addresses only,
 * allow_loopback); 1 when the URL may be used.
 */
int gitws_host_check(const char *flag, const char *url, bool allow_private,
                     bool allow_loopback, struct jv **out);

#endif
