/*
 * The agents' stream parsers: one line of a coding agent CLI's stdout in,
 * zero or more canonical task events out.  Pure functions of the lines
 * fed so far: no I/O, no clock, no threads.  One parser per agent run,
 * used by one thread at a time.
 *
 * Events reach the caller through an agent_emit_fn; each data object is
 * a new reference the callee owns.  Shapes (compact, keys in this order):
 *   message  {"role":"agent"|"agent_error","text":…}
 *   tool     {"name":…,"status":"pending|running|completed|error","path":…}
 *            ("path" left out when the tool's input names no target)
 *   status   {"phase":"model","model":…}                   (claude only)
 * Every string in them is valid UTF-8, whatever bytes came in.
 */
#ifndef AGENT_AGENT_H
#define AGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/jv.h"

/*
 * What one run may make the parser hold or hand out.  Longer input is
 * skipped (lines) or cut on a UTF-8 boundary (everything else), so a
 * misbehaving agent costs bounded memory.  docs/limits.md lists them.
 */
#define AGENT_LINE_MAX   (1u << 20)   /* bytes per line; longer: skipped */
#define AGENT_JSON_DEPTH 64           /* nesting per line; deeper: skipped */
#define AGENT_TEXT_MAX   (64u << 10)  /* text of one message event */
#define AGENT_FINAL_MAX  (256u << 10) /* final message, all parts together */
#define AGENT_PATH_MAX   200          /* a tool event's path */
#define AGENT_NAME_MAX   200          /* a tool's name, a model id */
#define AGENT_ID_MAX     128          /* a part or tool-use id we track */
#define AGENT_PARTS_MAX  4096         /* distinct ids tracked per run */

enum agent_kind { AGENT_OPENCODE, AGENT_CLAUDE };

/* "opencode" / "claude-code" <-> kind; agent_kind_parse returns -1 for
 * anything else. */
int agent_kind_parse(const char *name);
const char *agent_kind_name(enum agent_kind k);

struct agent_tokens {
	int64_t input, output, reasoning, cache_read, cache_write;
	double cost;
};

/* Called for each canonical event; data is a new jv object the callee
 * takes (steals).  type is "message", "tool" or "status". */
typedef void agent_emit_fn(void *ctx, const char *type, struct jv *data);

struct agent_parser;
struct agent_parser *agent_parser_new(enum agent_kind kind); /* NULL: ENOMEM */
void agent_parser_free(struct agent_parser *p);

/*
 * One line of the CLI's stdout, without its '\n' (a trailing '\r' is
 * ignored).  Emits zero or more events through emit.  Never fails: lines
 * that are not JSON, too long, too deep or of an unknown shape are
 * skipped.  Safe on arbitrary bytes.
 */
void agent_parse_line(struct agent_parser *p, const char *line, size_t len,
                      agent_emit_fn *emit, void *ctx);

/*
 * After the agent process ended; exit_code is its exit status (128+signal
 * when killed).  Fills out; its strings are malloc'd and released with
 * agent_outcome_release().
 *   final_message  the agent's last words, or NULL
 *   error          NULL when the run counts as a success, else one of
 *                  "agent error: <msg>" (an API error in the stream),
 *                  "agent exited with code N", "agent produced no output"
 *                  (exit 0 without any text or tool), in that order
 *   tokens         summed over the run
 *   any_output     whether any text or tool was seen
 * Out of memory, a string may be left NULL (error too: check the exit
 * code as well if that matters).  The parser is left as it was:
 * finishing twice gives the same outcome.
 */
struct agent_outcome {
	char *final_message;
	char *error;
	struct agent_tokens tokens;
	bool any_output;
};
void agent_parser_finish(struct agent_parser *p, int exit_code,
                         struct agent_outcome *out);
void agent_outcome_release(struct agent_outcome *out);

#endif
