/*
 * The agent's `git` stream op: status, diff and commit of a sandbox's
 * app repository on this node, for the control plane's git API and
 * recipes.  The agent starts the git helper (`sandboxd git-helper`, this
 * binary) itself, confined to ITS path of the sandbox's workspace (the
 * id checked, never a path from the wire), and a worker relays the
 * stream's frames to it, each checked (git/relay.c: status, diff and
 * commit only; GITWS_LOCAL_TIMEOUT_S per request; the helper killed
 * when the stream ends).  There is no push or clone here: those need a
 * token, and a token never leaves the control plane.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git.h"
#include "nodeagent/internal.h"

struct git_job {
	struct agent *a;
	int fd;
	char id[72];
	char ws[PATH_MAX];
};

static void *
git_main(void *arg)
{
	struct git_job *j = arg;

	gitws_serve(j->fd, j->id, j->ws);
	shutdown(j->fd, SHUT_RDWR);
	close(j->fd);
	agent_worker_done(j->a);
	free(j);
	return NULL;
}

int
agent_op_git(void *arg, const struct nl_peer *p, const struct jv *req,
             struct jv **ans, int *fd, struct err *e)
{
	struct agent *a = arg;
	const char *id = jv_str(jv_get(req, "sandbox"));
	struct git_job *j;
	struct stat st;
	int sv[2];

	(void)p;
	(void)ans;
	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return ERR_INTERNAL(e, "out of memory");
	j->a = a;
	snprintf(j->id, sizeof(j->id), "%s", id);
	agent_ws_path(a, id, j->ws, sizeof(j->ws));
	if (lstat(j->ws, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(j);
		return ERR_NOTFOUND(e, "no workspace of %s on this node", id);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		free(j);
		return ERR_INTERNAL(e, "socketpair: %s", strerror(errno));
	}
	j->fd = sv[0];
	if (agent_spawn(a, git_main, j) < 0) {
		close(sv[0]);
		close(sv[1]);
		free(j);
		return err_set(e, 429, "rate_limited",
		               "the node agent has as many streams as it may");
	}
	*fd = sv[1];
	return 0;
}
