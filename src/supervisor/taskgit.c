/*
 * taskgit.c - the git steps of a task, as sh scripts.
 *
 * A checkpoint is a commit of the app dir's whole worktree (what `git add
 * -A` sees: ignored files are not in it) made without touching anything
 * the user or the agent works with: the tree is built in a throwaway index
 * inside .git (a copy of the real one, so git's stat cache spares it from
 * hashing every file again), the commit is made with commit-tree (its
 * parent is HEAD when there is one) and kept alive by a ref of its own,
 * refs/sandboxd/checkpoints/<task id>.  HEAD, the branch, the real index
 * and the stash are never written.  Only the newest TASK_CHECKPOINTS_KEPT
 * refs are kept; task ids are ULIDs, so name order is age order.
 *
 * The files step builds the worktree's tree the same way and lists what
 * differs from the checkpoint (renames as a deletion and an addition, so
 * both paths are listed).  A revert makes the worktree match the
 * checkpoint again: with a throwaway index holding the worktree as it is
 * now, `read-tree --reset -u <checkpoint>` rewrites what changed, brings
 * back what was deleted and removes what was added since; ignored files
 * are in neither tree and stay where they are.
 *
 * Every git call disables hooks, commit signing and fsmonitor (all of
 * which would run programs or wait for a device), and never prompts; git
 * variables inherited from the container are cleared.  The user's git
 * config otherwise applies: the supervisor runs as the same user as the
 * agent, so it does not defend against that user, it only must not run
 * the user's hooks behind their back.
 *
 * Rejected: doing this in C with libgit2 (a library in PID 1; the
 * supervisor is libc only); `git stash create` (it touches nothing either,
 * but leaves untracked files out); writing checkpoints to a branch (the
 * user would see and push them).
 */
#include "taskgit.h"

/* Shared by every script: stdout is kept for the step's result (fd 3);
 * index() leaves the worktree's tree in $tree and a throwaway index in
 * $GIT_INDEX_FILE. */
#define TASKGIT_PRELUDE                                                        \
	"exec 3>&1 1>&2\n"                                                     \
	"unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY\n"    \
	"unset GIT_COMMON_DIR GIT_NAMESPACE\n"                                 \
	"GIT_TERMINAL_PROMPT=0\n"                                              \
	"export GIT_TERMINAL_PROMPT\n"                                         \
	"g() {\n"                                                              \
	"\tgit -c core.hooksPath=/dev/null -c commit.gpgsign=false \\\n"       \
	"\t    -c core.fsmonitor= -c user.name=sandboxd \\\n"                  \
	"\t    -c user.email=sandboxd@localhost \"$@\"\n"                      \
	"}\n"                                                                  \
	"index() {\n"                                                          \
	"\tif [ ! -e .git ]; then\n"                                           \
	"\t\techo 'no .git in the app dir' >&2\n"                              \
	"\t\texit 1\n"                                                         \
	"\tfi\n"                                                               \
	"\tdir=$(g rev-parse --absolute-git-dir) || exit\n"                    \
	"\tidx=$dir/sandboxd-index.$$\n"                                       \
	"\ttrap 'rm -f \"$idx\" \"$idx.lock\"' EXIT\n"                         \
	"\tif [ -f \"$dir/index\" ]; then\n"                                   \
	"\t\tcp \"$dir/index\" \"$idx\" || exit\n"                             \
	"\telif g rev-parse -q --verify 'HEAD^{commit}' >/dev/null; then\n"    \
	"\t\tGIT_INDEX_FILE=$idx g read-tree HEAD || exit\n"                   \
	"\tfi\n"                                                               \
	"\tGIT_INDEX_FILE=$idx\n"                                              \
	"\texport GIT_INDEX_FILE\n"                                            \
	"\tg add -A || exit\n"                                                 \
	"\ttree=$(g write-tree) || exit\n"                                     \
	"}\n"

/* $1: the task id, $2: how many checkpoint refs to keep. */
static const char taskgit_checkpoint[] = TASKGIT_PRELUDE
    "if [ ! -e .git ]; then\n"
    "\tg init -q && g add -A &&\n"
    "\t    g commit -q --allow-empty -m 'sandboxd: baseline' || exit\n"
    "fi\n"
    "index\n"
    "m=\"sandboxd: checkpoint before task $1\"\n"
    "if head=$(g rev-parse -q --verify 'HEAD^{commit}'); then\n"
    "\tsha=$(g commit-tree \"$tree\" -p \"$head\" -m \"$m\") || exit\n"
    "else\n"
    "\tsha=$(g commit-tree \"$tree\" -m \"$m\") || exit\n"
    "fi\n"
    "g update-ref \"refs/sandboxd/checkpoints/$1\" \"$sha\" || exit\n"
    "echo \"$sha\" >&3\n"
    "g for-each-ref --sort=-refname --format='delete %(refname)' \\\n"
    "    refs/sandboxd/checkpoints/ | tail -n \"+$(($2 + 1))\" |\n"
    "    g update-ref --stdin\n"
    "exit 0\n";

/* $1: the task id, $2: the checkpoint. */
static const char taskgit_files[] =
    TASKGIT_PRELUDE "index\n"
                    "g diff --no-ext-diff --no-renames --name-only -z \\\n"
                    "    \"$2\" \"$tree\" -- >&3\n";

/* $1: the task id, $2: the checkpoint. */
static const char taskgit_revert[] = TASKGIT_PRELUDE
    "index\n"
    "if ! g rev-parse -q --verify \"$2^{commit}\" >/dev/null; then\n"
    "\techo \"checkpoint $2 is not in the repository\" >&2\n"
    "\texit 1\n"
    "fi\n"
    "g read-tree --reset -u \"$2\"\n";

const char *
taskgit_script(enum taskgit_step step)
{
	static const char *const scripts[] = {
	    [TASKGIT_CHECKPOINT] = taskgit_checkpoint,
	    [TASKGIT_FILES] = taskgit_files,
	    [TASKGIT_REVERT] = taskgit_revert,
	};

	return scripts[step];
}
