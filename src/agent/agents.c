/*
 * The agents table (see agents.h).  Each row's hooks live in the
 * agent's own file (opencode.c, claude.c); this file only lists them, so
 * the table reads as the whole of what sandboxd knows about its agents.
 * The names a recipe needs of its own row are macros of internal.h, so
 * the agent files never read the table back.
 */
#include "agent/agents.h"

#include <stdio.h>
#include <string.h>

#include "agent/internal.h"

/*
 * OpenCode's models name their provider (opencode_route); Claude Code
 * speaks only to Anthropic, so its key (an Anthropic key, or the Claude
 * subscription login) goes nowhere else.
 */
static const char *const opencode_upstreams[] = {"zen", "openai", "anthropic",
                                                 "compat", NULL};
static const char *const claude_upstreams[] = {"anthropic", NULL};

const struct agent_def agents[] = {
    [AGENT_OPENCODE] =
        {
            .name = AGENT_OPENCODE_NAME,
            .label = "OpenCode",
            .kind = AGENT_OPENCODE,
            .api_key = true,
            .oauth = false,
            .upstreams = opencode_upstreams,
            .free_upstream = "zen",
            .free_model = "opencode/big-pickle",
            .default_model = AGENT_OPENCODE_DEFAULT_MODEL,
            .argv = agent_opencode_argv,
            .env = agent_opencode_env,
            .line = agent_opencode_line,
            .text = NULL,
            .final = agent_opencode_final,
        },
    [AGENT_CLAUDE] =
        {
            .name = AGENT_CLAUDE_NAME,
            .label = "Claude Code",
            .kind = AGENT_CLAUDE,
            .api_key = true,
            .oauth = true,
            .upstreams = claude_upstreams,
            .free_upstream = NULL,
            .free_model = NULL,
            .default_model = NULL,
            .argv = agent_claude_argv,
            .env = agent_claude_env,
            .line = agent_claude_line,
            .text = agent_claude_text,
            .final = agent_claude_final,
        },
};

const size_t agents_count = sizeof(agents) / sizeof(agents[0]);

const struct agent_def *
agent_find(const char *name)
{
	for (size_t i = 0; name && i < agents_count; i++)
		if (strcmp(agents[i].name, name) == 0)
			return &agents[i];
	return NULL;
}

bool
agent_uses_upstream(const struct agent_def *a, const char *upstream)
{
	for (size_t i = 0; a && a->upstreams && a->upstreams[i]; i++)
		if (strcmp(a->upstreams[i], upstream) == 0)
			return true;
	return false;
}

const struct agent_def *
agent_of(enum agent_kind kind)
{
	return (size_t)kind < agents_count ? &agents[kind] : NULL;
}

void
agent_names(const char *sep, char *out, size_t len)
{
	size_t used = 0;

	if (len > 0)
		out[0] = '\0';
	for (size_t i = 0; i < agents_count && used < len; i++) {
		int n = snprintf(out + used, len - used, "%s%s", i ? sep : "",
		                 agents[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int
agent_kind_parse(const char *name)
{
	const struct agent_def *d = agent_find(name);

	return d ? (int)d->kind : -1;
}

const char *
agent_kind_name(enum agent_kind k)
{
	const struct agent_def *d = agent_of(k);

	return d ? d->name : NULL;
}
