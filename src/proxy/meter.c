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
 * An answer without its final usage (a stream cut off midway, an
 * OpenAI-compatible stream asked without include_usage, a provider that
 * reports none) is charged from what passed: input as message_start (or
 * any usage) said, else from the request's size; output estimated from
 * the bytes of the text, thinking and tool-input deltas received (of
 * the whole answer when none was recognised), METER_BYTES_PER_TOKEN
 * bytes a token, rounded up, or what was said if more.  Rejected:
 * buffering the answer and parsing it at the end (memory per answer; no
 * count for a cut stream).
 *
 * A request (meter_request) goes through the same scanner with its
 * scalars of the two outer levels read as well: "stream", "background",
 * the output cap, "n" and stream_options.include_usage, which decide what
 * the proxy reserves, refuses or asks the provider for.
 */
#include "proxy/meter.h"

#include <stdlib.h>
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
		if (m->req && m->depth == 1 &&
		    strcmp(m->kbuf, "stream_options") == 0)
			m->rq.stream_options = true;
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
	if (m->req && m->depth == 0 && obj && !m->rq.object) {
		m->rq.object = true;
		m->rq.open_at = (size_t)m->bytes;
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

/* A byte of a request's scalar (a number or a literal) at level 1 or 2. */
static void
scalar_byte(struct meter *m, char ch)
{
	if (!m->req || m->depth < 1 || m->depth > 2 ||
	    bit(m->want_key, m->depth) || ch == ' ' || ch == '\t' ||
	    ch == '\r' || ch == '\n')
		return;
	if (m->sval_n < METER_SCALAR_MAX)
		m->sval[m->sval_n++] = ch;
	else
		m->sval_over = true;
}

static bool
max_key(const char *k)
{
	return strcmp(k, "max_tokens") == 0 ||
	       strcmp(k, "max_completion_tokens") == 0 ||
	       strcmp(k, "max_output_tokens") == 0;
}

/* The scalar ends (a ',' or the level closes): what it said. */
static void
scalar_end(struct meter *m)
{
	const char *k = cur_key(m);
	bool yes;

	if (m->sval_n == 0 || m->sval_over) {
		m->sval_n = 0;
		m->sval_over = false;
		return;
	}
	m->sval[m->sval_n] = '\0';
	m->sval_n = 0;
	yes = strcmp(m->sval, "true") == 0;
	if (m->depth == 1 && strcmp(k, "stream") == 0) {
		m->rq.stream = yes;
	} else if (m->depth == 1 && strcmp(k, "background") == 0) {
		m->rq.background = yes;
	} else if (m->depth == 1 && max_key(k)) {
		/* Any number: a fraction or an exponent is rounded up, a
		 * huge one clamped; the provider refuses what is not. */
		double d = strtod(m->sval, NULL);
		if (!(d >= 0))
			d = 0;
		m->rq.max_tokens = d >= (double)METER_TOKENS_MAX
		                       ? METER_TOKENS_MAX
		                       : (int64_t)d + (d > (double)(int64_t)d);
	} else if (m->depth == 1 && strcmp(k, "n") == 0) {
		double d = strtod(m->sval, NULL);
		m->rq.choices = !(d >= 1)               ? 1
		                : d > METER_CHOICES_MAX ? METER_CHOICES_MAX
		                                        : (int64_t)d;
	} else if (m->depth == 2 && strcmp(m->key[1], "stream_options") == 0 &&
	           strcmp(k, "include_usage") == 0) {
		m->rq.include_usage = yes;
	}
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
		if (m->req)
			scalar_end(m);
		close_level(m);
		break;
	case ':':
		set_bit(&m->want_key, m->depth, false);
		break;
	case ',':
		if (m->req)
			scalar_end(m);
		if (bit(m->is_obj, m->depth))
			set_bit(&m->want_key, m->depth, true);
		break;
	default:
		scalar_byte(m, ch);
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
		for (size_t i = 0; i < n; i++, m->bytes++)
			sse_byte(m, p[i]);
	else
		for (size_t i = 0; i < n; i++, m->bytes++)
			scan_byte(m, p[i]);
}

int64_t
meter_tokens_of_bytes(int64_t n)
{
	if (n <= 0)
		return 0;
	n = n / METER_BYTES_PER_TOKEN + (n % METER_BYTES_PER_TOKEN != 0);
	return n > METER_TOKENS_MAX ? METER_TOKENS_MAX : n;
}

bool
meter_result(const struct meter *m, int64_t request_bytes,
             struct meter_usage *out)
{
	int64_t est =
	    meter_tokens_of_bytes(m->text_bytes ? m->text_bytes : m->bytes);

	*out = m->u;
	if (m->final_seen)
		return true;
	if (!m->seen)
		out->input = meter_tokens_of_bytes(request_bytes);
	if (est > out->output)
		out->output = est;
	return false;
}

void
meter_request(const char *body, size_t n, struct meter_req *out)
{
	struct meter m;

	meter_init(&m, false);
	m.req = true;
	m.rq.max_tokens = -1;
	m.rq.choices = 1;
	meter_feed(&m, body, n);
	*out = m.rq;
	memcpy(out->model, m.model, sizeof(out->model));
}
