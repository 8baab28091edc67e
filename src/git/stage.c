/*
 * stage.c - a commit of chosen paths (POST …/git/commit with "paths"),
 * in the app's helper.  As `git commit --only -- <paths>` does: the new
 * tree is HEAD's with only those paths taken from the worktree (added,
 * changed or deleted), built in an index of its own, so changes staged
 * for other paths (say, by a `git add` in the sandbox) are neither
 * committed nor lost: they stay staged in the repository's index, which
 * gets the chosen paths as committed.
 *
 * A path names a file or a directory (every change below it), literally:
 * no glob, no "!" negation, matched against the status by this file
 * rather than by libgit2's pathspec, which would read both.  Each path
 * must be relative, inside the repository (not in .git) and match at
 * least one change (ignored files are not changes); otherwise the commit
 * is refused (400) naming the first path that fails.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "git/internal.h"
#include "lib/jv.h"

/* path is p, or below the directory p. */
static bool
covers(const char *p, const char *path)
{
	size_t n = strlen(p);

	return strncmp(path, p, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int
check_path(const char *p, struct err *e)
{
	size_t n = strlen(p);

	if (n == 0 || p[0] == '/' || p[n - 1] == '/' || strstr(p, "//") ||
	    strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 ||
	    strstr(p, "/../") || (n >= 3 && strcmp(p + n - 3, "/..") == 0) ||
	    strcmp(p, ".") == 0 || strncmp(p, "./", 2) == 0 || strstr(p, "/./"))
		return ERR_BAD(e,
		               "paths: %.200s is not a path inside the "
		               "repository",
		               p);
	if (covers(".git", p))
		return ERR_BAD(e, "paths: %.200s is inside .git", p);
	return 0;
}

static const char *
entry_path(const git_status_entry *s)
{
	const git_diff_delta *d =
	    s->index_to_workdir ? s->index_to_workdir : s->head_to_index;

	if (d == NULL)
		return NULL;
	return d->new_file.path ? d->new_file.path : d->old_file.path;
}

/*
 * Puts path's worktree state into both indexes: its blob when the file
 * is there (a symbolic link as a link), its removal when it is not.
 */
static int
take(git_repository *repo, git_index *real, git_index *mine, const char *path,
     struct err *e)
{
	char full[PATH_MAX];
	const git_index_entry *ie;
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", git_repository_workdir(repo),
	         path);
	if (lstat(full, &st) < 0 && errno == ENOENT) {
		git_index_remove_bypath(real, path);
		git_index_remove(mine, path, 0);
		return 0;
	}
	if (git_index_add_bypath(real, path) < 0 ||
	    (ie = git_index_get_bypath(real, path, 0)) == NULL ||
	    git_index_add(mine, ie) < 0)
		return gitws_lib_err(e, "staging a path");
	return 0;
}

static int
stage_listed(git_repository *repo, git_status_list *list,
             const struct jv *paths, git_index *real, git_index *mine,
             struct err *e)
{
	size_t np = jv_len(paths), n = git_status_list_entrycount(list);
	bool *hit = calloc(np ? np : 1, sizeof(*hit));
	int rc = 0;

	if (hit == NULL)
		return ERR_INTERNAL(e, "out of memory");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const git_status_entry *s = git_status_byindex(list, i);
		const char *path = entry_path(s);
		bool want = false;

		if (path == NULL || s->status == GIT_STATUS_CURRENT ||
		    (s->status & GIT_STATUS_IGNORED))
			continue;
		for (size_t j = 0; j < np; j++)
			if (covers(jv_str(jv_at(paths, j)), path))
				want = hit[j] = true;
		if (want)
			rc = take(repo, real, mine, path, e);
	}
	for (size_t j = 0; rc == 0 && j < np; j++)
		if (!hit[j])
			rc =
			    ERR_BAD(e,
			            "paths: %.200s has no changes to commit "
			            "(or is ignored, or not in the repository)",
			            jv_str(jv_at(paths, j)));
	free(hit);
	return rc;
}

int
gitws_stage_paths(git_repository *repo, git_tree *head, const struct jv *paths,
                  git_oid *tree_id, struct err *e)
{
	git_status_options so;
	git_status_list *list = NULL;
	git_index *real = NULL, *mine = NULL;
	int rc = -1;

	for (size_t j = 0; j < jv_len(paths); j++)
		if (jv_str(jv_at(paths, j)) == NULL ||
		    check_path(jv_str(jv_at(paths, j)), e) < 0)
			return e->status ? -1
			                 : ERR_BAD(e, "paths: not a string");
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	           GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
	           GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, repo, &so) < 0) {
		gitws_lib_err(e, "status");
		goto out;
	}
	if (git_repository_index(&real, repo) < 0 || git_index_new(&mine) < 0 ||
	    (head && git_index_read_tree(mine, head) < 0)) {
		gitws_lib_err(e, "reading the index");
		goto out;
	}
	if (stage_listed(repo, list, paths, real, mine, e) < 0)
		goto out;
	if (git_index_write(real) < 0 ||
	    git_index_write_tree_to(tree_id, mine, repo) < 0) {
		gitws_lib_err(e, "writing the index");
		goto out;
	}
	rc = 0;
out:
	git_index_free(mine);
	git_index_free(real);
	git_status_list_free(list);
	return rc;
}
