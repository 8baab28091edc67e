/*
 * Shared by the agent module's own files only: the table (agents.c),
 * the line dispatcher and the outcome (parse.c), the id table (parts.c),
 * the helpers the formats and recipes share (util.c) and one file per
 * agent with its format and its recipe (opencode.c, claude.c).  The
 * calls between them go one way: parse.c → agents.c → the agent files →
 * parts.c → util.c.
 */
#ifndef AGENT_INTERNAL_H
#define AGENT_INTERNAL_H

#include "agent/agent.h"
#include "agent/agents.h"
#include "lib/buf.h"

/* What a recipe needs of its own row of the table, named here so that
 * the agent files do not read the table that names their hooks. */
#define AGENT_OPENCODE_NAME          "opencode"
#define AGENT_OPENCODE_DEFAULT_MODEL "opencode/big-pickle"
#define AGENT_CLAUDE_NAME            "claude-code"

/* Hash slots for the id table: twice the entries, a power of two. */
#define AGENT_PARTS_SLOTS (2 * AGENT_PARTS_MAX)

enum agent_tool_status {
	AGENT_TOOL_PENDING,
	AGENT_TOOL_RUNNING,
	AGENT_TOOL_COMPLETED,
	AGENT_TOOL_ERROR,
};

/*
 * One id seen in the stream: an opencode part (text or tool) or a
 * claude tool_use.  Strings are owned and already cut to their limits.
 */
struct agent_part {
	char *id;   /* NULL: anonymous, never found again */
	char *text; /* opencode: latest text of the part, or NULL */
	size_t text_len;
	char *name;       /* claude: the tool_use's name, or NULL */
	char *path;       /* claude: its target, or NULL */
	unsigned emitted; /* bit (1 << status): tool event already sent */
};

/* Ids in first-seen order, at most AGENT_PARTS_MAX of them. */
struct agent_parts {
	struct agent_part *v;
	size_t n, cap;
	uint32_t *slot;    /* index + 1 into v, 0: empty; AGENT_PARTS_SLOTS */
	size_t text_total; /* sum of text_len: at most AGENT_FINAL_MAX */
};

struct agent_parser {
	enum agent_kind kind;
	struct agent_parts parts;
	struct buf text; /* claude: assistant text so far */
	char *result;    /* claude: the result line's text, or NULL */
	char *api_error; /* the first API error, or NULL */
	struct agent_tokens tokens;
	bool any_output;
	agent_emit_fn *emit; /* of the agent_parse_line call under way */
	void *ctx;
};

/* parts.c */
/* The entry for id (len bytes), added when add is true and there is
 * room.  id NULL, empty or longer than AGENT_ID_MAX: a new anonymous
 * entry when add is true, else NULL.  NULL when full or out of memory. */
struct agent_part *agent_parts_get(struct agent_parts *t, const char *id,
                                   size_t len, bool add);
/* Replaces the part's text, cut so that all texts stay within
 * AGENT_FINAL_MAX. */
void agent_parts_set_text(struct agent_parts *t, struct agent_part *part,
                          const char *s, size_t len);
void agent_parts_release(struct agent_parts *t);

/* util.c, for the format files */
/* "pending" … "error" → enum agent_tool_status; -1 for anything else. */
int agent_tool_status_parse(const char *s);
char *agent_strndup(const char *s, size_t len, size_t max);
void agent_buf_add(struct buf *b, const char *s, size_t len);
const char *agent_str(const struct jv *obj, const char *key, size_t *len);
const char *agent_tool_path(const struct jv *input, size_t *len);
void agent_add_count(int64_t *sum, const struct jv *v);
void agent_add_cost(double *sum, const struct jv *v);
void agent_emit_message(struct agent_parser *p, bool error, const char *s,
                        size_t len);
void agent_emit_tool(struct agent_parser *p, struct agent_part *part,
                     const char *name, size_t name_len,
                     enum agent_tool_status st, const char *path,
                     size_t path_len);
void agent_api_error(struct agent_parser *p, const char *s, size_t len);

/* util.c, for the recipes */
/* Appends s and its NUL (one argv entry); -1 when it does not fit. */
int agent_arg(struct buf *out, const char *s);
/* Appends NAME=value and a NUL (one env entry). */
int agent_env_add(struct buf *env, const char *name, const char *value);

/* One file per agent, the hooks of its row in agents.c: opencode.c and
 * claude.c. */
/* One parsed line of its format, an object. */
void agent_opencode_line(struct agent_parser *p, const struct jv *line);
void agent_claude_line(struct agent_parser *p, const struct jv *line);
/* A claude line that is not JSON ("Not logged in", …). */
void agent_claude_text(struct agent_parser *p, const char *line, size_t len);
/* The final message (malloc'd), or NULL. */
char *agent_opencode_final(const struct agent_parser *p);
char *agent_claude_final(const struct agent_parser *p);
/* The command line and the environment (agents.h). */
agent_argv_fn agent_opencode_argv, agent_claude_argv;
agent_env_fn agent_opencode_env, agent_claude_env;

#endif
