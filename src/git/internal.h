/* Shared by the git module's own files only (they alone include git2.h). */
#ifndef GIT_INTERNAL_H
#define GIT_INTERNAL_H

#include <git2.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "git/git.h"
#include "lib/buf.h"
#include "lib/err.h"

#define GITWS_HELPER_OUT_MAX                                                   \
	(64u << 20)         /* an answer (a 200,000-entry status) */
#define GITWS_JAIL_WS "/ws" /* the workspace, in the helper */

/* open.c: libgit2 initialized once with our settings; 0 or -1. */
int gitws_init(void);
/* The app's lock (one stripe per key), held across a helper's run. */
void gitws_lock(const char *key);
void gitws_unlock(const char *key);

/*
 * In the confined helper and under the app's lock, opens ws's app
 * repository as hostile input and calls fn(repo, arg).  Returns fn's
 * result, GITWS_NOT_REPO, or -1 with e filled.
 */
int gitws_with_repo(const char *key, const char *ws,
                    int (*fn)(git_repository *, void *, struct err *),
                    void *arg, struct err *e);
/* Frees the open repositories idle too long (gitws_cache_trim, in
 * session.c, calls it with the helpers' trim). */
void gitws_repo_cache_trim(void);
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

/*
 * Status, diff or commit (op), in the app's helper (ops.c); a commit
 * with paths (a JSON array of strings, else NULL) commits those only.
 */
int gitws_op_here(const char *key, const char *ws, const char *op,
                  const char *message, const struct jv *paths, struct jv **out,
                  struct err *e);
/*
 * The tree of head (NULL: none yet) with the worktree's state of the
 * listed paths, into tree_id; the repository's index gets those paths
 * too (stage.c).  -1 with e (400 naming a path that is bad or has no
 * change).
 */
int gitws_stage_paths(git_repository *repo, git_tree *head,
                      const struct jv *paths, git_oid *tree_id, struct err *e);
/* The push itself, run in the helper (remote.c). */
int gitws_push_here(const char *key, const char *ws, const struct gitws_push *p,
                    struct jv **out, struct err *e);
/* The clone itself, run in the helper (clone.c). */
int gitws_clone_here(const char *dir, const struct gitws_clone *c,
                     struct jv **out, struct err *e);
/*
 * As gitws_host_check, and the approved addresses as /etc/hosts lines
 * ("addr host\n") into hosts (hostcheck.c).
 */
int gitws_host_resolve(const char *flag, const char *url, bool allow_private,
                       bool allow_loopback, char *hosts, size_t hosts_len,
                       struct jv **out);
/*
 * Refuses (reason blocked_host, 0 with *out set) a URL whose host
 * resolves to a loopback, private, link-local or otherwise non-public
 * address, unless allow_private (or, for loopback addresses only,
 * allow_loopback); 1 when the URL may be used.
 */
int gitws_host_check(const char *flag, const char *url, bool allow_private,
                     bool allow_loopback, struct jv **out);

/*
 * The helper's box (confine.c): a mount namespace whose root holds only
 * the workspace at GITWS_JAIL_WS (and, with net, an /etc/hosts of the
 * given lines), the sandbox user's ids, no new privileges and these
 * limits.  Without net, a network namespace of its own too.  0, or -1
 * with e filled (the process must then exit).
 */
struct gitws_jail {
	bool net;
	const char *hosts;
	rlim_t mem_bytes; /* RLIMIT_AS; 0: none */
	rlim_t cpu_s;     /* RLIMIT_CPU; 0: none */
};

int gitws_confine(const char *ws, const struct gitws_jail *j, struct err *e);

/* The frames of the helper's socket, both ends (frame.c). */
/* CLOCK_MONOTONIC in ms: the frames' deadlines. */
int64_t gitws_now_ms(void);
/* One frame: a 32-bit length, then the bytes; 0 or -1. */
int gitws_frame_send(int fd, const void *p, size_t n);
/*
 * One frame into b (at most b's cap), waiting until deadline (ms of
 * gitws_now_ms, -1: forever): 0, -1 (end, error, too large), 1 late.
 */
int gitws_frame_recv(int fd, struct buf *b, int64_t deadline);
/* v as one frame of JSON (at most GITWS_HELPER_OUT_MAX); 0 or -1. */
int gitws_frame_send_json(int fd, const struct jv *v);
/* {"error":{status, code, message}} of e as one frame; 0 or -1. */
int gitws_frame_send_err(int fd, const struct err *e);

/* A helper process and its end of the socketpair (spawn.c). */
struct gitws_helper {
	pid_t pid;
	int fd;
};

int gitws_helper_spawn(struct gitws_helper *h, struct err *e);
/* Closes and reaps (killed first when kill_now); the wait status. */
int gitws_helper_end(struct gitws_helper *h, bool kill_now);
/* The helper's answer frame as *out, GITWS_NOT_REPO, or -1 with e. */
int gitws_helper_answer(const struct buf *b, struct jv **out, struct err *e);
/* e for a helper that ended (wait status) without answering; -1. */
int gitws_helper_died(int status, struct err *e);
/* req to key's long-lived helper for ws (session.c); as gitws_status. */
int gitws_session_call(const char *key, const char *ws, const struct jv *req,
                       struct jv **out, struct err *e);

#endif
