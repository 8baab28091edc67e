/*
 * The agents' command lines and our system prompt (pure functions).
 * The prompt tells the agent where the app lives, which port its preview
 * forwards to, and to keep sandbox.yaml true.
 */
#ifndef TASK_AGENTCMD_H
#define TASK_AGENTCMD_H

#include <stdbool.h>

#include "agent/agent.h"
#include "sandbox/manifest.h"
#include "lib/buf.h"

#define AGENTCMD_APP_DIR "/home/sandbox/workspace/app"

/* Renders the system prompt for the app's manifest into out. */
int agentcmd_system_prompt(const struct manifest *m, struct buf *out);
/*
 * The CLI's argv, each argument followed by a NUL byte (the supervisor's
 * `argv` file).  model NULL or "" leaves the CLI's default.  With cont
 * the agent continues its previous session and gets the bare prompt.
 * files: the images attached to the task (paths inside the sandbox,
 * NULL-ended; NULL for none).
 */
int agentcmd_argv(enum agent_kind kind, const char *model, bool cont,
                  const char *system_prompt, const char *prompt,
                  const char *const *files, struct buf *out);

/*
 * The agent's environment for reaching its model through the credential
 * proxy (proxy_url "http://<addr>:<port>", token the sandbox's proxy
 * token): NAME=value entries, each followed by a NUL (the supervisor's
 * `env` file).  For OpenCode the task's model "provider/id" becomes a
 * provider of its own config that points at the proxy; *model_arg gets
 * what --model must say ("" to leave the CLI's default).
 */
int agentcmd_env(enum agent_kind kind, const char *proxy_url, const char *token,
                 const char *model, struct buf *env, char *model_arg,
                 size_t len);

#endif
