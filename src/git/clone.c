/*
 * clone.c - an app's import: a clone of its repository into the new
 * sandbox's empty workspace/app, in the helper process (helper.c: the
 * sandbox user's uid, killed at its timeout, private hosts refused).
 *
 * The repository comes from anywhere, so its size is bounded twice: the
 * download stops once it passes max_bytes, and the fetched tree's blob
 * sizes are added up from the object headers before a single file is
 * written, so a small pack of highly compressible files cannot fill the
 * disk either.  Checkout is libgit2's: paths that would escape the work
 * tree or write into .git are refused by it, no filter or hook runs
 * (none is registered, and the helper reads no config but the new
 * repository's), submodules are not fetched, and symbolic links are made
 * as links, never followed, by a process that can only write what the
 * sandbox user can.  The origin remote keeps the URL as given, which has
 * no credentials; the token only ever reaches the transport (auth.c).
 *
 * Rejected: a shallow clone (libgit2 1.5 cannot make one; a full history
 * also lets a push be checked against the import branch).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "git/git.h"
#include "git/internal.h"

#define CLONE_MAX_ENTRIES 1000000 /* files in the checked-out tree */

struct clone_ctx {
	struct gitws_auth auth; /* first: the callbacks' payload is both */
	uint64_t max_bytes;
	bool too_large;
	uint64_t tree_bytes;
	size_t entries;
	git_odb *odb;
};

static int
progress_cb(const git_indexer_progress *st, void *payload)
{
	struct clone_ctx *c = payload;

	if (c->max_bytes && st->received_bytes > c->max_bytes) {
		c->too_large = true;
		return -1;
	}
	return 0;
}

/* 1 empty, 0 not, -1 cannot tell. */
static int
dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int empty = 1;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

static int
size_cb(const char *root, const git_tree_entry *ent, void *payload)
{
	struct clone_ctx *c = payload;
	git_object_t type;
	size_t len;

	(void)root;
	if (++c->entries > CLONE_MAX_ENTRIES) {
		c->too_large = true;
		return -1;
	}
	if (git_tree_entry_type(ent) != GIT_OBJECT_BLOB)
		return 0;
	if (git_odb_read_header(&len, &type, c->odb, git_tree_entry_id(ent)) <
	    0)
		return -1;
	c->tree_bytes += len;
	if (c->max_bytes && c->tree_bytes > c->max_bytes) {
		c->too_large = true;
		return -1;
	}
	return 0;
}

/* Adds up HEAD's tree, then writes it: 0, or -1 (c->too_large maybe). */
static int
checkout_bounded(git_repository *repo, struct clone_ctx *c)
{
	git_checkout_options co;
	git_commit *head = NULL;
	git_tree *tree = NULL;
	git_oid id;
	int rc;

	if (git_reference_name_to_id(&id, repo, "HEAD") < 0 ||
	    git_commit_lookup(&head, repo, &id) < 0 ||
	    git_commit_tree(&tree, head) < 0 ||
	    git_repository_odb(&c->odb, repo) < 0) {
		rc = -1;
		goto out;
	}
	rc = git_tree_walk(tree, GIT_TREEWALK_PRE, size_cb, c);
	if (rc < 0)
		goto out;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	/* the work tree is empty but for .git: nothing to keep */
	co.checkout_strategy = GIT_CHECKOUT_FORCE;
	rc = git_checkout_tree(repo, (git_object *)tree, &co);
out:
	git_odb_free(c->odb);
	c->odb = NULL;
	git_tree_free(tree);
	git_commit_free(head);
	return rc;
}

static struct jv *
classify(int rc, const struct clone_ctx *c, const struct gitws_clone *req)
{
	const git_error *ge = git_error_last();
	const char *m = ge && ge->message ? ge->message : "unknown error";
	const char *reason = "clone_failed";
	char msg[512];

	if (c->too_large) {
		snprintf(msg, sizeof(msg),
		         "the repository is larger than the import limit "
		         "(%llu MiB; SANDBOXD_GIT_IMPORT_MAX_MB)",
		         (unsigned long long)(c->max_bytes >> 20));
		return gitws_failure("imported", "too_large", msg, NULL);
	}
	snprintf(msg, sizeof(msg), "cloning %s: %s", req->r.url, m);
	if (gitws_auth_failed(rc, &c->auth, m))
		reason = "auth_failed";
	else if (strstr(m, "404"))
		reason = "repo_not_found";
	else if (req->branch && (rc == GIT_ENOTFOUND ||
	                         (ge && ge->klass == GIT_ERROR_REFERENCE)))
		reason = "branch_not_found";
	else if (gitws_net_reason(rc))
		reason = gitws_net_reason(rc);
	return gitws_failure("imported", reason, msg, req->r.token);
}

static void
no_branch(const char *branch)
{
	char m[320];

	snprintf(m, sizeof(m), "the remote has no branch %s", branch);
	git_error_set_str(GIT_ERROR_REFERENCE, m);
}

/* Whether the remote has no refs at all: 1, 0, or -1. */
static int
remote_empty(const char *url, struct clone_ctx *c)
{
	git_remote_connect_options co;
	const git_remote_head **heads;
	git_remote *r = NULL;
	size_t n = 0;
	int rc;

	c->auth.asked = 0;
	git_remote_connect_options_init(&co,
	                                GIT_REMOTE_CONNECT_OPTIONS_VERSION);
	co.callbacks.credentials = gitws_auth_cb;
	co.callbacks.payload = c;
	co.proxy_opts.type = GIT_PROXY_NONE;
	co.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	rc = git_remote_create_detached(&r, url);
	if (rc == 0)
		rc = git_remote_connect_ext(r, GIT_DIRECTION_FETCH, &co);
	if (rc == 0)
		rc = git_remote_ls(&heads, &n, r);
	git_remote_free(r);
	return rc < 0 ? -1 : n == 0;
}

/*
 * A repository without commits cannot be cloned with a branch named (it
 * has none): make what `git clone` makes of it, an empty repository
 * whose HEAD names the branch, with the remote as origin.
 */
static int
init_empty(const char *dir, const struct gitws_clone *req,
           git_repository **repo)
{
	git_repository_init_options io;

	git_repository_init_options_init(&io,
	                                 GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	io.flags = GIT_REPOSITORY_INIT_NO_REINIT;
	io.initial_head = req->branch;
	io.origin_url = req->r.url;
	return git_repository_init_ext(repo, dir, &io);
}

/* {imported:true, branch, head}: HEAD as the clone left it. */
static struct jv *
imported(git_repository *repo, const struct gitws_clone *req)
{
	struct jv *o = jv_obj();
	git_reference *ref = NULL;
	char sha[GIT_OID_HEXSZ + 1] = "";
	const char *t = NULL;
	git_oid id;

	if (git_reference_lookup(&ref, repo, "HEAD") == 0 &&
	    git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
		t = git_reference_symbolic_target(ref);
		if (strncmp(t, "refs/heads/", 11) == 0)
			t += 11;
	}
	jv_set_bool(o, "imported", true);
	jv_set_str(o, "branch", t ? t : req->branch ? req->branch : "main");
	if (git_reference_name_to_id(&id, repo, "HEAD") == 0) {
		git_oid_tostr(sha, sizeof(sha), &id);
		jv_set_str(o, "head", sha);
	} else {
		jv_set_bool(o, "empty", true);
	}
	git_reference_free(ref);
	return o;
}

int
gitws_clone_here(const char *dir, const struct gitws_clone *req,
                 struct jv **out, struct err *e)
{
	struct clone_ctx c = {.max_bytes = req->max_bytes};
	git_clone_options o;
	git_repository *repo = NULL;
	int rc, empty;

	*out = NULL;
	c.auth.cred_host = req->r.cred_host;
	c.auth.username = req->r.username;
	c.auth.token = req->r.token;
	if (gitws_init() < 0)
		return ERR_INTERNAL(e, "libgit2 did not initialize");
	if ((empty = dir_empty(dir)) != 1) {
		if (empty < 0)
			return ERR_INTERNAL(e, "git: cannot read %s: %s", dir,
			                    strerror(errno));
		*out = gitws_failure("imported", "not_empty",
		                     "workspace/app is not empty; an import "
		                     "needs a new sandbox",
		                     NULL);
		return 0;
	}
	git_clone_options_init(&o, GIT_CLONE_OPTIONS_VERSION);
	o.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
	o.checkout_branch = req->branch;
	o.fetch_opts.callbacks.credentials = gitws_auth_cb;
	o.fetch_opts.callbacks.transfer_progress = progress_cb;
	o.fetch_opts.callbacks.payload = &c;
	o.fetch_opts.proxy_opts.type = GIT_PROXY_NONE;
	o.fetch_opts.follow_redirects = GIT_REMOTE_REDIRECT_NONE;
	o.fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	rc = git_clone(&repo, req->r.url, dir, &o);
	if (rc == GIT_ENOTFOUND && req->branch && !c.too_large &&
	    dir_empty(dir) == 1 && remote_empty(req->r.url, &c) == 1)
		rc = init_empty(dir, req, &repo);
	else if (rc == GIT_ENOTFOUND && req->branch)
		no_branch(req->branch);
	if (rc == 0 && git_repository_head_unborn(repo) != 1)
		rc = checkout_bounded(repo, &c);
	else if (rc == 0 && req->branch == NULL) /* empty: our default */
		rc = git_repository_set_head(repo, "refs/heads/main");
	if (rc < 0)
		*out = classify(rc, &c, req);
	else
		*out = imported(repo, req);
	git_repository_free(repo);
	return 0;
}
