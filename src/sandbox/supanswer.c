/*
 * The supervisor's answers (see supanswer.h).  Nothing of an answer is
 * passed on as it came: each reported field is looked up, checked for
 * its type and its set of values, and copied into an object of ours, so
 * a forged answer can make a sandbox's own status wrong but cannot put
 * anything else into an API response.
 */
#include "sandbox/supanswer.h"

#include <stdbool.h>
#include <string.h>

struct jv *
supanswer_parse(const char *text, size_t len)
{
	struct jv *ans;
	char perr[128];

	if (len == 0)
		return NULL;
	ans = jv_parse(text, len, SUPANSWER_DEPTH_MAX, perr, sizeof(perr));
	if (ans != NULL && jv_type(ans) != JV_OBJECT) {
		jv_free(ans);
		ans = NULL;
	}
	return ans;
}

static const char *
one_of(const char *s, const char *const *allowed)
{
	for (; s && *allowed; allowed++)
		if (strcmp(s, *allowed) == 0)
			return *allowed;
	return "unknown";
}

/* Copies one process entry, keeping only known fields and values. */
static struct jv *
process_json(const struct jv *p)
{
	static const char *const kinds[] = {"web", "worker", NULL};
	static const char *const states[] = {"starting",  "running", "backoff",
	                                     "crashloop", "stopped", "exited",
	                                     NULL};
	const char *name = jv_str(jv_get(p, "name"));
	struct jv *o = jv_obj(), *v;

	jv_set_str(o, "name",
	           name && strlen(name) <= SUPANSWER_NAME_MAX ? name : "?");
	jv_set_str(o, "kind", one_of(jv_str(jv_get(p, "kind")), kinds));
	jv_set_str(o, "state", one_of(jv_str(jv_get(p, "state")), states));
	v = jv_get(p, "pid");
	if (v && jv_type(v) == JV_INT && jv_int(v) > 0)
		jv_set_int(o, "pid", jv_int(v));
	v = jv_get(p, "restarts");
	jv_set_int(o, "restarts", v && jv_type(v) == JV_INT ? jv_int(v) : 0);
	v = jv_get(p, "exit_code");
	if (v && jv_type(v) == JV_INT)
		jv_set_int(o, "exit_code", jv_int(v));
	v = jv_get(p, "port");
	if (v && jv_type(v) == JV_INT)
		jv_set_int(o, "port", jv_int(v));
	return o;
}

/* A non-negative integer member, else null. */
static struct jv *
count_or_null(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	if (v && jv_type(v) == JV_INT && jv_int(v) >= 0)
		return jv_new_int(jv_int(v));
	return jv_new_null();
}

static bool
hex64(const char *s)
{
	if (s == NULL || strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* The install step (docs/supervisor.md, "Install"); absent: "none". */
static struct jv *
install_json(const struct jv *in)
{
	static const char *const states[] = {"none", "running", "done",
	                                     "failed", NULL};
	const char *key = jv_str(jv_get(in, "key"));
	struct jv *o = jv_obj();

	jv_set_str(o, "state",
	           in ? one_of(jv_str(jv_get(in, "state")), states) : "none");
	jv_set(o, "key", hex64(key) ? jv_new_str(key) : jv_new_null());
	jv_set(o, "exit_code", count_or_null(in, "exit_code"));
	jv_set(o, "started_at_ms", count_or_null(in, "started_at_ms"));
	jv_set(o, "ended_at_ms", count_or_null(in, "ended_at_ms"));
	return o;
}

struct jv *
supanswer_status(const struct jv *ans)
{
	static const char *const health[] = {"none", "starting", "ready",
	                                     "error", NULL};
	struct jv *out = jv_obj(), *procs, *list = jv_arr();
	const char *detail;

	jv_set_str(out, "health",
	           one_of(jv_str(jv_get(ans, "health")), health));
	detail = jv_str(jv_get(ans, "health_detail"));
	if (detail && *detail && strlen(detail) < SUPANSWER_DETAIL_MAX)
		jv_set_str(out, "health_detail", detail);
	procs = jv_get(ans, "processes");
	for (size_t i = 0; procs && jv_type(procs) == JV_ARRAY &&
	                   i < jv_len(procs) && i < SUPANSWER_PROCS_MAX;
	     i++)
		jv_push(list, process_json(jv_at(procs, i)));
	jv_set(out, "processes", list);
	procs = jv_get(ans, "install");
	jv_set(
	    out, "install",
	    install_json(procs && jv_type(procs) == JV_OBJECT ? procs : NULL));
	return out;
}
