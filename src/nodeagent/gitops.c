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
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
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

	(void)p;
	(void)ans;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return ERR_INTERNAL(e, "out of memory");
	j->a = a;
	snprintf(j->id, sizeof(j->id), "%s", id ? id : "");
	if (agent_ws_find(a, id, j->ws, sizeof(j->ws), e) < 0 ||
	    agent_stream_start(a, git_main, j, &j->fd, fd, e) < 0) {
		free(j);
		return -1;
	}
	return 0;
}
