/*
 * The coding agents sandboxd runs, as one table: what the API lists,
 * which credentials connect them, the models they fall back to, how
 * their command line and environment are made, and which parser reads
 * their output.  The API, the proxy's paths, the configuration, the task
 * defaults and the command builder all read it; a new agent is a row
 * here, a kind in agent.h and one file with its parser and its recipe.
 * Constant data and pure functions: any thread.
 */
#ifndef AGENT_AGENTS_H
#define AGENT_AGENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "lib/buf.h"

/*
 * The CLI's argv, each argument followed by a NUL byte.  model NULL or
 * "" leaves the CLI's default; with cont the agent continues its
 * previous session and gets the bare prompt.  files: images to attach
 * (paths inside the sandbox, NULL-ended; NULL for none), given as the
 * CLI takes them.
 */
typedef int agent_argv_fn(const char *model, bool cont,
                          const char *system_prompt, const char *prompt,
                          const char *const *files, struct buf *out);
/*
 * The environment that points the CLI at the credential proxy
 * (proxy_url "http://<addr>:<port>", token the sandbox's proxy token):
 * NAME=value entries, each followed by a NUL.  *model_arg gets what
 * --model must say ("" to leave the CLI's default).
 */
typedef int agent_env_fn(const char *proxy_url, const char *token,
                         const char *model, struct buf *env, char *model_arg,
                         size_t len);

struct agent_def {
	const char *name;  /* API id, proxy path segment, settings key */
	const char *label; /* what a person reads */
	enum agent_kind kind;
	bool api_key; /* connects with an API key */
	bool oauth;   /* or with a Claude subscription login */
	/* The proxy upstreams its credential may be sent to (NULL-ended):
	 * the proxy refuses any other, so a key never reaches a provider it
	 * was not made for. */
	const char *const *upstreams;
	/* The proxy upstream it may use with no credential, or NULL. */
	const char *free_upstream;
	/* The model of its free upstream: SANDBOXD_OPENCODE_FREE_MODEL's
	 * default, and what a task without a model or a key runs; NULL
	 * when it has none. */
	const char *free_model;
	/* The model its recipe names when nothing else does; NULL: the
	 * CLI's own default. */
	const char *default_model;
	agent_argv_fn *argv;
	agent_env_fn *env;
	/* Its stream parser (internal.h): an object line; a line that is
	 * not JSON (NULL: skipped); the final message. */
	void (*line)(struct agent_parser *p, const struct jv *line);
	void (*text)(struct agent_parser *p, const char *line, size_t len);
	char *(*final)(const struct agent_parser *p);
};

/* In display order, indexed by kind. */
extern const struct agent_def agents[];
extern const size_t agents_count;

/* The agent with this name, or NULL. */
const struct agent_def *agent_find(const char *name);
/* Whether the agent may use the proxy upstream named upstream. */
bool agent_uses_upstream(const struct agent_def *a, const char *upstream);
/* The agent of a kind, or NULL for a kind out of range. */
const struct agent_def *agent_of(enum agent_kind kind);
/* "opencode, claude-code" (sep between names) into out, for messages. */
void agent_names(const char *sep, char *out, size_t len);

#endif
