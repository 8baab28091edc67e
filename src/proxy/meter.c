/*
 * The proxy's meter (see meter.h): tokens of one model answer, from the
 * provider's usage fields, as the bytes stream by.
 *
 * Where the counts are:
 *   Anthropic Messages   {"usage":{input_tokens,output_tokens,
 *                         cache_creation_input_tokens,
 *                         cache_read_input_tokens}}            level 1
 *   its SSE stream       message_start {"message":{"usage":…}} level 2,
 *                        provisional (output_tokens is a placeholder);
 *                        message_delta {"usage":…} level 1, cumulative
 *   OpenAI-compatible    {"usage":{prompt_tokens,completion_tokens,
 *                         prompt_tokens_details.cached_tokens}} level 1,
 *                        in the last chunk of a stream
 *   OpenAI Responses     response.completed {"response":{"usage":…}}
 * Each usage object seen replaces the fields it has (they are cumulative
 * in every protocol), so the last one wins.
 *
 * How: a small JSON scanner that knows only the nesting (a bit per
 * level: object or array, key or value next), the keys of the two
 * outermost levels and the current one, and whether it is inside a
 * string.  The bytes of a "usage" object found at level 2 or 3 are
 * copied (at most METER_CAPTURE_MAX; a bigger one is ignored) and parsed
 * with jansson when it closes; the model's name is copied likewise.  In
 * an SSE stream each "data:" line is one JSON document and the scanner
 * starts over on each; other lines are skipped.  Everything else is
 * looked at once and forgotten, so a hostile answer costs a few
 * comparisons per byte and no memory.
 *
 * A stream cut off before its final usage: input as message_start (or
 * any usage) said; output estimated from the bytes of the text, thinking
 * and tool-input deltas received (4 bytes a token, rounded up), or what
 * message_start said if more.  Rejected: buffering the answer and
 * parsing it at the end (memory per answer; no count for a cut stream).
 */
#include "proxy/meter.h"

#include <string.h>
#include <strings.h>

#include "lib/jv.h"

void
meter_init(struct meter *m, bool sse)
{
	memset(m, 0, sizeof(*m));
	m->sse = sse;
}

bool
meter_is_stream(const char *line, size_t n)
{
	static const char name[] = "content-type:";
	static const char want[] = "text/event-stream";
	size_t k = sizeof(name) - 1, w = sizeof(want) - 1;

	if (n < k || strncasecmp(line, name, k) != 0)
		return false;
	for (size_t i = k; i + w <= n; i++)
		if (strncasecmp(line + i, want, w) == 0)
			return true;
	return false;
}

/* ---- applying a usage object ----------------------------------------- */

static int64_t
count_of(const struct jv *v)
{
	int64_t n = jv_int(v);

	if (n < 0)
		return 0;
	return n > METER_TOKENS_MAX ? METER_TOKENS_MAX : n;
}

static bool
has(const struct jv *o, const char *k)
{
	return jv_type(jv_get(o, k)) == JV_INT;
}

static void
apply_usage(struct meter *m)
{
	struct jv *u = jv_parse(m->cap, m->cap_n, 4, NULL, 0);
	const struct jv *cached;
	int64_t c;

	if (u == NULL || jv_type(u) != JV_OBJECT) {
		jv_free(u);
		return;
	}
	m->seen = true;
	if (!m->cap_provisional)
		m->final_seen = true;
	if (has(u, "prompt_tokens") || has(u, "completion_tokens")) {
		/* OpenAI chat: prompt_tokens includes the cached ones. */
		cached =
		    jv_get(jv_get(u, "prompt_tokens_details"), "cached_tokens");
		c = count_of(cached);
		if (has(u, "prompt_tokens")) {
			int64_t p = count_of(jv_get(u, "prompt_tokens"));
			m->u.input = p > c ? p - c : 0;
			m->u.cache_read = c;
		}
		if (has(u, "completion_tokens"))
			m->u.output = count_of(jv_get(u, "completion_tokens"));
		jv_free(u);
		return;
	}
	cached = jv_get(jv_get(u, "input_tokens_details"), "cached_tokens");
	if (has(u, "input_tokens")) {
		int64_t p = count_of(jv_get(u, "input_tokens"));
		/* Responses: input_tokens includes the cached ones;
		 * Anthropic: they are apart. */
		c = count_of(cached);
		m->u.input = p > c ? p - c : 0;
		if (jv_type(cached) == JV_INT)
			m->u.cache_read = c;
	}
	if (has(u, "output_tokens"))
		m->u.output = count_of(jv_get(u, "output_tokens"));
	if (has(u, "cache_creation_input_tokens"))
		m->u.cache_write =
		    count_of(jv_get(u, "cache_creation_input_tokens"));
	if (has(u, "cache_read_input_tokens"))
		m->u.cache_read =
		    count_of(jv_get(u, "cache_read_input_tokens"));
	jv_free(u);
}

/* ---- the scanner ------------------------------------------------------- */

static bool
bit(uint64_t set, int depth)
{
	return depth >= 1 && depth <= METER_DEPTH_MAX &&
	       (set >> (depth - 1)) & 1u;
}

static void
set_bit(uint64_t *set, int depth, bool on)
{
	if (depth < 1 || depth > METER_DEPTH_MAX)
		return;
	if (on)
		*set |= (uint64_t)1 << (depth - 1);
	else
		*set &= ~((uint64_t)1 << (depth - 1));
}

/* The key whose value comes next at the current level ("" none). */
static const char *
cur_key(const struct meter *m)
{
	return bit(m->is_obj, m->depth) ? m->key[0] : "";
}

static bool
text_key(const char *k)
{
	static const char *const keys[] = {
	    "text",      "thinking", "partial_json",     "content",
	    "arguments", "delta",    "reasoning_content"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (strcmp(k, keys[i]) == 0)
			return true;
	return false;
}

static void
scan_reset(struct meter *m)
{
	m->depth = 0;
	m->in_str = m->esc = false;
	m->is_obj = m->want_key = 0;
	m->key[0][0] = m->key[1][0] = m->key[2][0] = '\0';
	m->cap_depth = 0;
	m->cap_n = 0;
}

static void
string_start(struct meter *m)
{
	m->in_str = true;
	m->str_is_key = bit(m->is_obj, m->depth) && bit(m->want_key, m->depth);
	m->str_is_model = false;
	m->str_is_text = false;
	if (m->str_is_key) {
		m->klen = 0;
		m->kover = false;
		return;
	}
	if (m->depth >= 1 && m->depth <= 2 && m->model_n == 0 &&
	    strcmp(cur_key(m), "model") == 0)
		m->str_is_model = true;
	else if (text_key(cur_key(m)))
		m->str_is_text = true;
}

static void
string_byte(struct meter *m, char ch)
{
	if (m->str_is_key) {
		if (m->klen < METER_KEY_MAX)
			m->kbuf[m->klen++] = ch;
		else
			m->kover = true;
	} else if (m->str_is_model) {
		if (m->model_n < METER_MODEL_MAX && (unsigned char)ch >= 0x20 &&
		    ch != '\\' && ch != 0x7f)
			m->model[m->model_n++] = ch;
	} else if (m->str_is_text) {
		m->text_bytes++;
	}
}

static void
string_end(struct meter *m)
{
	m->in_str = false;
	if (m->str_is_key) {
		m->kbuf[m->kover ? 0 : m->klen] = '\0';
		memcpy(m->key[0], m->kbuf, sizeof(m->key[0]));
		if (m->depth == 1 || m->depth == 2)
			memcpy(m->key[m->depth], m->kbuf, sizeof(m->key[0]));
	} else if (m->str_is_model) {
		m->model[m->model_n] = '\0';
	}
}

/* A '{' or '[' at the current level. */
static void
open_level(struct meter *m, bool obj)
{
	bool usage = obj && m->cap_depth == 0 &&
	             (m->depth == 1 || m->depth == 2) &&
	             strcmp(cur_key(m), "usage") == 0;

	if (usage) {
		m->cap_depth = m->depth + 1;
		m->cap[0] = '{';
		m->cap_n = 1;
		m->cap_over = false;
		/* message_start's usage, under "message": provisional. */
		m->cap_provisional =
		    m->depth == 2 && strcmp(m->key[1], "message") == 0;
	}
	m->depth++;
	set_bit(&m->is_obj, m->depth, obj);
	set_bit(&m->want_key, m->depth, obj);
	m->key[0][0] = '\0';
}

static void
close_level(struct meter *m)
{
	if (m->cap_depth && m->depth == m->cap_depth) {
		if (!m->cap_over)
			apply_usage(m);
		m->cap_depth = 0;
	}
	if (m->depth > 0)
		m->depth--;
	m->key[0][0] = '\0';
}

static void
scan_byte(struct meter *m, char ch)
{
	if (m->cap_depth) {
		if (m->cap_n < sizeof(m->cap))
			m->cap[m->cap_n++] = ch;
		else
			m->cap_over = true;
	}
	if (m->in_str) {
		if (m->esc)
			m->esc = false;
		else if (ch == '\\')
			m->esc = true;
		else if (ch == '"') {
			string_end(m);
			return;
		}
		string_byte(m, ch);
		return;
	}
	switch (ch) {
	case '"':
		string_start(m);
		break;
	case '{':
		open_level(m, true);
		break;
	case '[':
		open_level(m, false);
		break;
	case '}':
	case ']':
		close_level(m);
		break;
	case ':':
		set_bit(&m->want_key, m->depth, false);
		break;
	case ',':
		if (bit(m->is_obj, m->depth))
			set_bit(&m->want_key, m->depth, true);
		break;
	default:
		break;
	}
}

/* ---- SSE framing ------------------------------------------------------ */

static void
sse_byte(struct meter *m, char ch)
{
	if (ch == '\n') {
		m->lead_n = 0;
		m->in_data = m->skip_line = false;
		return;
	}
	if (m->in_data) {
		scan_byte(m, ch);
		return;
	}
	if (m->skip_line || ch == '\r')
		return;
	m->lead[m->lead_n++] = ch;
	if (m->lead_n < 5) {
		if (memcmp(m->lead, "data:", m->lead_n) != 0)
			m->skip_line = true;
		return;
	}
	if (memcmp(m->lead, "data:", 5) == 0) {
		m->in_data = true;
		scan_reset(m);
	} else {
		m->skip_line = true;
	}
}

void
meter_feed(struct meter *m, const char *p, size_t n)
{
	if (m->sse)
		for (size_t i = 0; i < n; i++)
			sse_byte(m, p[i]);
	else
		for (size_t i = 0; i < n; i++)
			scan_byte(m, p[i]);
}

bool
meter_result(const struct meter *m, struct meter_usage *out)
{
	int64_t est = (m->text_bytes + 3) / 4;

	*out = m->u;
	if (!m->final_seen && est > out->output)
		out->output = est;
	return m->seen || m->text_bytes > 0;
}
