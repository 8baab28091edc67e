/*
 * ops.c - status, diff and commit of a workspace's app repository, in
 * the app's confined helper (helper.c): gitws_op_here runs each through
 * gitws_with_repo (open.c) on a repository it has checked, audited and
 * opened.  The daemon's side of these calls is git.c.
 *
 * Answers are bounded: the status stops at GITWS_MAX_STATUS entries, the
 * diff at GITWS_MAX_DIFF bytes of text and GITWS_MAX_DIFF_FILES files,
 * and a file larger than GITWS_MAX_BLOB diffs as binary; each says
 * `truncated`.  Status and diff refresh the index's stat data as `git
 * status` does; a commit stages every change (add, update, remove), or
 * only the paths it names (stage.c), and is made as sandboxd on HEAD, or
 * says no_changes.
 */
#include <git2.h>
#include <stdio.h>
#include <string.h>

#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

/* Branch name ("" when detached) and head commit (NULL when unborn). */
static int
head_info(git_repository *repo, char *branch, size_t len, git_commit **head,
          struct err *e)
{
	git_reference *ref = NULL;
	const char *t;
	git_oid id;

	*head = NULL;
	branch[0] = '\0';
	if (git_reference_lookup(&ref, repo, "HEAD") < 0)
		return gitws_lib_err(e, "reading HEAD");
	if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
		t = git_reference_symbolic_target(ref);
		if (strncmp(t, "refs/heads/", 11) == 0)
			t += 11;
		snprintf(branch, len, "%s", t);
	}
	git_reference_free(ref);
	if (git_repository_head_unborn(repo) == 1)
		return 0;
	if (git_reference_name_to_id(&id, repo, "HEAD") < 0 ||
	    git_commit_lookup(head, repo, &id) < 0)
		return gitws_lib_err(e, "reading the HEAD commit");
	return 0;
}

/* JSON null: jv has no constructor for it, the parser does. */
static struct jv *
jv_null_value(void)
{
	char err[64];

	return jv_parse("null", 4, 1, err, sizeof(err));
}

static const char *
status_name(unsigned s)
{
	if (s & (GIT_STATUS_INDEX_RENAMED | GIT_STATUS_WT_RENAMED))
		return "renamed";
	if (s & (GIT_STATUS_INDEX_TYPECHANGE | GIT_STATUS_WT_TYPECHANGE))
		return "typechange";
	if (s & GIT_STATUS_INDEX_NEW)
		return "added";
	if (s & GIT_STATUS_WT_NEW)
		return "untracked";
	if (s & (GIT_STATUS_INDEX_DELETED | GIT_STATUS_WT_DELETED))
		return "deleted";
	return "modified";
}

static struct jv *
file_json(const char *path, unsigned bits, bool staged)
{
	struct jv *f = jv_obj();

	jv_set_str(f, "path", path);
	jv_set_str(f, "status", status_name(bits));
	jv_set_bool(f, "staged", staged);
	return f;
}

static int
status_locked(git_repository *repo, struct jv **out, struct err *e)
{
	git_status_options so;
	git_status_list *list = NULL;
	git_commit *head = NULL;
	char branch[256];
	char sha[GIT_OID_HEXSZ + 1];
	const unsigned idx = GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED |
	                     GIT_STATUS_INDEX_DELETED |
	                     GIT_STATUS_INDEX_RENAMED |
	                     GIT_STATUS_INDEX_TYPECHANGE;
	size_t n, emitted = 0;
	bool truncated = false;
	struct jv *files, *o;

	if (head_info(repo, branch, sizeof(branch), &head, e) < 0)
		return -1;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	/* UPDATE_INDEX: stat data refreshed once, as `git status` does, so
	 * files whose stat changed but content did not (or a checkout's
	 * racily clean entries) are not hashed again on every call. */
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	           GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
	           GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX |
	           GIT_STATUS_OPT_EXCLUDE_SUBMODULES |
	           GIT_STATUS_OPT_UPDATE_INDEX;
	if (git_status_list_new(&list, repo, &so) < 0) {
		git_commit_free(head);
		return gitws_lib_err(e, "status");
	}
	files = jv_arr();
	n = git_status_list_entrycount(list);
	for (size_t i = 0; i < n; i++) {
		const git_status_entry *s = git_status_byindex(list, i);
		const git_diff_delta *d =
		    s->head_to_index ? s->head_to_index : s->index_to_workdir;
		const char *path;

		if (d == NULL || s->status == GIT_STATUS_CURRENT ||
		    (s->status & GIT_STATUS_IGNORED))
			continue;
		path = d->new_file.path ? d->new_file.path : d->old_file.path;
		if (emitted + 2 > GITWS_MAX_STATUS) {
			truncated = true;
			break;
		}
		if (s->status & idx) {
			jv_push(files, file_json(path, s->status & idx, true));
			emitted++;
		}
		if (s->status & ~idx) {
			jv_push(files,
			        file_json(path, s->status & ~idx, false));
			emitted++;
		}
	}
	o = jv_obj();
	jv_set_bool(o, "available", true);
	if (branch[0])
		jv_set_str(o, "branch", branch);
	else
		jv_set(o, "branch", jv_null_value());
	if (head) {
		git_oid_tostr(sha, sizeof(sha), git_commit_id(head));
		jv_set_str(o, "head_sha", sha);
	} else {
		jv_set(o, "head_sha", jv_null_value());
	}
	jv_set_bool(o, "clean", emitted == 0 && !truncated);
	jv_set(o, "files", files);
	jv_set_bool(o, "truncated", truncated);
	git_status_list_free(list);
	git_commit_free(head);
	*out = o;
	return 0;
}

struct diffbuf {
	struct buf text;
	bool truncated;
};

static int
diff_line(const git_diff_delta *d, const git_diff_hunk *h,
          const git_diff_line *l, void *arg)
{
	struct diffbuf *db = arg;
	char origin = l->origin;

	(void)d;
	(void)h;
	if (db->text.len + l->content_len + 1 > GITWS_MAX_DIFF) {
		db->truncated = true;
		return 1; /* stops the walk */
	}
	if (origin == GIT_DIFF_LINE_CONTEXT ||
	    origin == GIT_DIFF_LINE_ADDITION ||
	    origin == GIT_DIFF_LINE_DELETION)
		buf_append(&db->text, &origin, 1);
	buf_append(&db->text, l->content, l->content_len);
	return 0;
}

static int
worktree_diff(git_repository *repo, git_commit *head, git_diff **out)
{
	git_diff_options o;
	git_tree *tree = NULL;
	int rc;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
	          GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_IGNORE_SUBMODULES |
	          GIT_DIFF_UPDATE_INDEX;
	o.max_size = GITWS_MAX_BLOB;
	if (head && git_commit_tree(&tree, head) < 0)
		return -1;
	rc = git_diff_tree_to_workdir_with_index(out, repo, tree, &o);
	git_tree_free(tree);
	return rc;
}

static int
diff_locked(git_repository *repo, struct jv **out, struct err *e)
{
	git_commit *head = NULL;
	git_diff *diff = NULL;
	struct diffbuf db = {.truncated = false};
	const char *failed = NULL;
	char branch[256];
	struct jv *files, *o;
	size_t n;

	if (head_info(repo, branch, sizeof(branch), &head, e) < 0)
		return -1;
	if (worktree_diff(repo, head, &diff) < 0) {
		git_commit_free(head);
		return gitws_lib_err(e, "diff");
	}
	/*
	 * One patch per file, made once: its stats, and its text while the
	 * text is under the cap (printing the whole diff and then making
	 * each patch again for its stats did every file's work twice).
	 */
	buf_init(&db.text, GITWS_MAX_DIFF + 1);
	files = jv_arr();
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n && i < GITWS_MAX_DIFF_FILES; i++) {
		git_patch *p = NULL;
		size_t ctx, add = 0, del = 0;
		const git_diff_delta *d;
		struct jv *f;

		if (git_patch_from_diff(&p, diff, i) < 0) {
			failed = "making the diff";
			break;
		}
		d = git_diff_get_delta(diff, i);
		if (p) {
			git_patch_line_stats(&ctx, &add, &del, p);
			if (!db.truncated &&
			    git_patch_print(p, diff_line, &db) < 0 &&
			    !db.truncated) {
				git_patch_free(p);
				failed = "printing the diff";
				break;
			}
		}
		f = jv_obj();
		jv_set_str(f, "path", d->new_file.path);
		jv_set_int(f, "additions", (int64_t)add);
		jv_set_int(f, "deletions", (int64_t)del);
		jv_set_bool(f, "binary",
		            (d->flags & GIT_DIFF_FLAG_BINARY) != 0);
		jv_push(files, f);
		git_patch_free(p);
	}
	if (failed) {
		gitws_lib_err(e, failed);
		jv_free(files);
	} else {
		o = jv_obj();
		jv_set(o, "diff",
		       jv_new_str_lossy(db.text.data ? db.text.data : "",
		                        db.text.len));
		jv_set(o, "files", files);
		jv_set_bool(o, "truncated",
		            db.truncated || n > GITWS_MAX_DIFF_FILES);
		*out = o;
	}
	buf_release(&db.text);
	git_diff_free(diff);
	git_commit_free(head);
	return failed ? -1 : 0;
}

/* Stages every change in the worktree; *tree_id is the index's tree. */
static int
stage_all(git_repository *repo, git_oid *tree_id, struct err *e)
{
	git_index *idx = NULL;
	int rc = -1;

	if (git_repository_index(&idx, repo) < 0 ||
	    git_index_add_all(idx, NULL, GIT_INDEX_ADD_DEFAULT, NULL, NULL) <
	        0 ||
	    git_index_update_all(idx, NULL, NULL, NULL) < 0 ||
	    git_index_write(idx) < 0 || git_index_write_tree(tree_id, idx) < 0)
		gitws_lib_err(e, "staging the changes");
	else
		rc = 0;
	git_index_free(idx);
	return rc;
}

static struct jv *
changed_paths(git_repository *repo, git_tree *from, git_tree *to)
{
	git_diff *diff = NULL;
	struct jv *arr = jv_arr();
	size_t n;

	if (git_diff_tree_to_tree(&diff, repo, from, to, NULL) < 0)
		return arr;
	n = git_diff_num_deltas(diff);
	for (size_t i = 0; i < n && i < GITWS_MAX_DIFF_FILES; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		jv_push(arr, jv_new_str(d->status == GIT_DELTA_DELETED
		                            ? d->old_file.path
		                            : d->new_file.path));
	}
	git_diff_free(diff);
	return arr;
}

static int
commit_locked(git_repository *repo, const char *message, const struct jv *paths,
              struct jv **out, struct err *e)
{
	git_commit *head = NULL;
	git_tree *old = NULL, *tree = NULL;
	git_signature *sig = NULL;
	git_oid tree_id, id;
	char branch[256], sha[GIT_OID_HEXSZ + 1];
	struct jv *o = NULL;
	int rc = -1;

	if (head_info(repo, branch, sizeof(branch), &head, e) < 0)
		goto out;
	if (head && git_commit_tree(&old, head) < 0) {
		gitws_lib_err(e, "reading the HEAD tree");
		goto out;
	}
	if (paths ? gitws_stage_paths(repo, old, paths, &tree_id, e) < 0
	          : stage_all(repo, &tree_id, e) < 0)
		goto out;
	if (git_tree_lookup(&tree, repo, &tree_id) < 0) {
		gitws_lib_err(e, "reading the new tree");
		goto out;
	}
	o = jv_obj();
	if ((old && git_oid_equal(git_tree_id(old), &tree_id)) ||
	    (!old && git_tree_entrycount(tree) == 0)) {
		jv_set_bool(o, "committed", false);
		jv_set_str(o, "reason", "no_changes");
		rc = 0;
		goto out;
	}
	if (git_signature_now(&sig, "sandboxd", "sandboxd@localhost") < 0 ||
	    git_commit_create_v(&id, repo, "HEAD", sig, sig, NULL, message,
	                        tree, head ? 1 : 0, head) < 0) {
		gitws_lib_err(e, "committing");
		goto out;
	}
	git_oid_tostr(sha, sizeof(sha), &id);
	jv_set_bool(o, "committed", true);
	jv_set_str(o, "sha", sha);
	if (branch[0])
		jv_set_str(o, "branch", branch);
	else
		jv_set(o, "branch", jv_null_value());
	jv_set(o, "files_committed", changed_paths(repo, old, tree));
	rc = 0;
out:
	if (rc == 0)
		*out = o;
	else
		jv_free(o);
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(old);
	git_commit_free(head);
	return rc;
}

struct oparg;

/* The helper's operations on the app's repository, as a table. */
struct helper_op {
	const char *name;
	bool needs_message; /* refused without one */
	int (*run)(git_repository *repo, const struct oparg *a, struct err *e);
};

struct oparg {
	const struct helper_op *op;
	const char *message;
	const struct jv *paths;
	struct jv **out;
};

static int
op_status(git_repository *repo, const struct oparg *a, struct err *e)
{
	return status_locked(repo, a->out, e);
}

static int
op_diff(git_repository *repo, const struct oparg *a, struct err *e)
{
	return diff_locked(repo, a->out, e);
}

static int
op_commit(git_repository *repo, const struct oparg *a, struct err *e)
{
	return commit_locked(repo, a->message, a->paths, a->out, e);
}

static const struct helper_op helper_ops[] = {
    {"status", false, op_status},
    {"diff", false, op_diff},
    {"commit", true, op_commit},
};

static int
op_locked(git_repository *repo, void *arg, struct err *e)
{
	const struct oparg *a = arg;

	return a->op->run(repo, a, e);
}

int
gitws_op_here(const char *key, const char *ws, const char *op,
              const char *message, const struct jv *paths, struct jv **out,
              struct err *e)
{
	struct oparg a = {NULL, message,
	                  paths && jv_type(paths) == JV_ARRAY ? paths : NULL,
	                  out};

	*out = NULL;
	for (size_t i = 0; i < sizeof(helper_ops) / sizeof(helper_ops[0]); i++)
		if (strcmp(op, helper_ops[i].name) == 0 &&
		    (message || !helper_ops[i].needs_message))
			a.op = &helper_ops[i];
	if (a.op == NULL)
		return ERR_INTERNAL(e, "git: unknown helper op");
	return gitws_with_repo(key, ws, op_locked, &a, e);
}
