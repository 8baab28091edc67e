/*
 * git: the app repository of a workspace, read and committed with
 * libgit2 in the control plane, always in a helper process confined to
 * that workspace as the sandbox user (helper.c, confine.c).  The
 * repository is written by code in the sandbox, so it is opened as
 * hostile input (see open.c).  Every function may be called from any
 * thread; operations on one key (the app id) are serialized.  Functions
 * return 0 with *out set (the JSON the API sends), GITWS_NOT_REPO when
 * workspace/app has no .git directory, or -1 with e filled.
 */
#ifndef GIT_GIT_H
#define GIT_GIT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/jv.h"

#define GITWS_NOT_REPO 1

#define GITWS_MAX_STATUS     200000       /* entries of a status answer */
#define GITWS_MAX_DIFF       (512u << 10) /* bytes of a diff answer */
#define GITWS_MAX_DIFF_FILES 10000        /* files listed by diff, commit */
#define GITWS_MAX_BLOB       (8u << 20)   /* larger files diff as binary */
#define GITWS_MAX_MESSAGE    4096         /* bytes of a commit message */

#define GITWS_LOCAL_TIMEOUT_S 60   /* a status, diff or commit; then killed */
#define GITWS_HELPER_MEM_MB   2048 /* a helper's address space (RLIMIT_AS) */
#define GITWS_HELPER_CPU_S    600  /* a helper's CPU seconds (RLIMIT_CPU) */

/*
 * ws is the workspace directory (<data>/workspaces/<sandbox id>); the
 * repository is ws/workspace/app.
 */
/* {available:true, branch, head_sha, clean, files[], truncated} */
int gitws_status(const char *key, const char *ws, struct jv **out,
                 struct err *e);
/* {diff, files[{path, additions, deletions, binary}], truncated} */
int gitws_diff(const char *key, const char *ws, struct jv **out, struct err *e);
/*
 * Stages everything (respecting .gitignore) and commits on the current
 * branch: {committed:true, sha, branch, files_committed[]} or
 * {committed:false, reason:"no_changes"}.  The message must be checked by
 * the caller (1..GITWS_MAX_MESSAGE bytes, no NUL).  With paths (a JSON
 * array of at most GITWS_MAX_COMMIT_PATHS repository-relative paths, at
 * most GITWS_MAX_COMMIT_PATH_BYTES together; NULL: everything), only
 * the changes at or below those paths are committed; a path that is not
 * inside the repository or has no change is a 400 naming it.
 */
#define GITWS_MAX_COMMIT_PATHS      1000
#define GITWS_MAX_COMMIT_PATH_BYTES (32u << 10)
int gitws_commit(const char *key, const char *ws, const char *message,
                 const struct jv *paths, struct jv **out, struct err *e);
/*
 * The same three for a workspace wherever it is: with dial NULL, ws is
 * the local workspace (as above); otherwise dial(arg, &fd, e) opens a
 * stream to a helper already started for that workspace elsewhere (a
 * node agent's, gitws_serve), and ws is not used.  One request frame
 * goes out and one answer comes back per call, under the app's lock,
 * within GITWS_LOCAL_TIMEOUT_S and GITWS_REMOTE_SLACK_S more; the
 * answer is the node's, read as hostile (bounded, parsed as JSON).  A
 * stream that ends without an answer is 503 node_down.
 */
#define GITWS_REMOTE_SLACK_S 15
struct gitws_at {
	const char *ws;
	int (*dial)(void *arg, int *fd, struct err *e);
	void *arg;
};

int gitws_status_at(const char *key, const struct gitws_at *at, struct jv **out,
                    struct err *e);
int gitws_diff_at(const char *key, const struct gitws_at *at, struct jv **out,
                  struct err *e);
int gitws_commit_at(const char *key, const struct gitws_at *at,
                    const char *message, const struct jv *paths,
                    struct jv **out, struct err *e);

/*
 * The node agent's side of the above (relay.c): a session helper for ws
 * (the agent's own path of sandbox key, never one from the wire), then
 * each request frame read from fd is checked (at most
 * GITWS_RELAY_REQ_MAX bytes of JSON whose op is status, diff or commit;
 * anything else, a push or a clone above all, is answered with a 400
 * error frame and ends the stream), rebuilt and given to the helper, and
 * its answer sent back.  Ends when fd closes, no request comes within
 * GITWS_LOCAL_TIMEOUT_S, or an answer does not (the helper is then
 * killed, and an error frame says so); the helper ends with it.  Blocks:
 * a worker thread's body.  fd stays the caller's.
 */
#define GITWS_RELAY_REQ_MAX (64u << 10)
void gitws_serve(int fd, const char *key, const char *ws);

/*
 * Each app's helper keeps its repository open between calls
 * (session.c); this ends the helpers unused for two minutes.  A periodic
 * job of serve() calls it every GITWS_CACHE_TRIM_S.
 */
#define GITWS_CACHE_TRIM_S 30
void gitws_cache_trim(void);

/*
 * A push of HEAD to a new branch of the app's stored remote (remote.c).
 * r.url is the app's repository URL (checked by the caller), never the
 * repository's own remotes.  branch is the checked target, or NULL for
 * prefix followed by HEAD's short sha.  The token is given to the
 * transport only when the server asks and the URL's host is cred_host
 * (cred_host NULL: no credential).  Never a force push.
 */
struct gitws_remote {
	const char *url;
	const char *cred_host;
	const char *username; /* NULL or "": x-access-token */
	const char *token;
	int timeout_s;       /* the helper is killed after this */
	bool allow_private;  /* hosts on loopback/private networks too */
	bool allow_loopback; /* loopback only (the tests' git servers) */
	const char *ca_file; /* NULL: the system's CA bundle */
};

struct gitws_push {
	struct gitws_remote r;
	const char *branch;
	const char *prefix;
};

#define GITWS_SHORT_SHA 7 /* hex digits of the default branch's sha */

/*
 * {pushed:true, branch, remote_url, head} or {pushed:false, reason,
 * message}; reason is auth_failed, branch_exists, non_fast_forward,
 * unreachable, push_failed or empty_repo.  No answer holds the token.
 */
int gitws_push(const char *key, const char *ws, const struct gitws_push *p,
               struct jv **out, struct err *e);

/*
 * An import: a clone of url's branch into ws/workspace/app, which must
 * be empty (clone.c).  The same rules for the token as a push.
 */
struct gitws_clone {
	struct gitws_remote r;
	const char *branch; /* NULL: the remote's default branch */
	uint64_t max_bytes; /* the download, and the checked-out tree */
};

/*
 * {imported:true, branch, head} or {imported:false, reason, message};
 * reason is auth_failed, unreachable, blocked_host, branch_not_found,
 * empty_repo, too_large, timeout, not_empty or clone_failed.
 */
int gitws_clone(const char *key, const char *ws, const struct gitws_clone *c,
                struct jv **out, struct err *e);

/*
 * The helper process: this binary run as `sandboxd git-helper`, confined
 * to one workspace as the sandbox user, killed at its timeout
 * (helper.c).  gitws_helper_main is that command's body; it reads its
 * requests from stdin and writes the answers to stdout.
 */
int gitws_helper_main(void);

#endif
