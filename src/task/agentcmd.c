/* The agents' command lines and the system prompt (see agentcmd.h). */
#include "task/agentcmd.h"

#include <stdio.h>
#include <string.h>

#include "agent/agents.h"

static const char prompt_text[] =
    "You are a coding agent working inside a sandboxd sandbox: an "
    "isolated Linux container that holds exactly one app. Make the "
    "changes the task asks for; they are expected and kept.\n"
    "\n"
    "## Where things are\n"
    "- The app lives in %APP_DIR% (your working directory). Everything "
    "outside it except /tmp is read-only or is not yours.\n"
    "- sandboxd's supervisor runs the app from %APP_DIR%/sandbox.yaml: "
    "the `web` process (command, port, health_path), optional background "
    "`workers`, and an optional `build` check it runs after your task.\n"
    "- The web process must listen on 0.0.0.0:%PORT% (not localhost or "
    "127.0.0.1): the preview URL forwards to that port. Check your work "
    "with `curl -s %LOCAL_URL%%HEALTH%`.\n"
    "- Processes are restarted by the supervisor; their output is in "
    "/home/sandbox/.sandboxd/logs/<name>.log.\n"
    "\n"
    "## Rules\n"
    "- Keep sandbox.yaml true. If you change how the app starts, which "
    "port it uses or how it is built, update sandbox.yaml in the same "
    "change. Do not delete it.\n"
    "- Never read, print or store secrets, keys or tokens.\n"
    "- Do not rewrite git history (no reset --hard, rebase, force or "
    "branch deletion). sandboxd takes a checkpoint before every task, so "
    "the user can undo it.\n"
    "- Prefer small, focused changes and the dependencies already "
    "installed. Before you finish, make sure the app still starts and "
    "answers on port %PORT%.\n"
    "- If %APP_DIR%/AGENTS.md exists, read it first and follow it.\n";

static int
put(struct buf *out, const char *s)
{
	return buf_append(out, s, strlen(s));
}

int
agentcmd_system_prompt(const struct manifest *m, struct buf *out)
{
	char port[16], url[64];
	const char *health =
	    m->has_web && m->web.health_path[0] ? m->web.health_path : "/";
	int p = m->has_web && m->web.port ? m->web.port : 3000;

	snprintf(port, sizeof(port), "%d", p);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", p);
	for (const char *s = prompt_text; *s;) {
		const char *v = NULL;
		size_t skip = 0;
		if (strncmp(s, "%APP_DIR%", 9) == 0)
			v = AGENTCMD_APP_DIR, skip = 9;
		else if (strncmp(s, "%PORT%", 6) == 0)
			v = port, skip = 6;
		else if (strncmp(s, "%LOCAL_URL%", 11) == 0)
			v = url, skip = 11;
		else if (strncmp(s, "%HEALTH%", 8) == 0)
			v = health, skip = 8;
		if (v) {
			if (put(out, v) < 0)
				return -1;
			s += skip;
		} else {
			if (buf_append(out, s, 1) < 0)
				return -1;
			s++;
		}
	}
	return 0;
}

int
agentcmd_argv(enum agent_kind kind, const char *model, bool cont,
              const char *system_prompt, const char *prompt,
              const char *const *files, struct buf *out)
{
	const struct agent_def *d = agent_of(kind);

	return d ? d->argv(model, cont, system_prompt, prompt, files, out) : -1;
}

int
agentcmd_env(enum agent_kind kind, const char *proxy_url, const char *token,
             const char *model, struct buf *env, char *model_arg, size_t len)
{
	const struct agent_def *d = agent_of(kind);

	return d ? d->env(proxy_url, token, model, env, model_arg, len) : -1;
}
