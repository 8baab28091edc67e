/*
 * libFuzzer target: the supervisor's answers as the control plane reads
 * them (sandbox/supanswer.c).  The socket is in the workspace, so any
 * program of the sandbox's can answer in its place: the input is one
 * answer's bytes.  A parsed answer must be an object; the status made
 * from it must be an object with a known health, at most
 * SUPANSWER_PROCS_MAX processes of known kinds and states, and must dump
 * as JSON.  Nothing may crash, leak or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/supanswer.h"
#include "lib/buf.h"
#include "lib/jv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
known(const char *s, const char *const *set)
{
	for (; s && *set; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const health[] = {"none",  "starting", "ready",
	                                     "error", "unknown",  NULL};
	static const char *const kinds[] = {"web", "worker", "unknown", NULL};
	static const char *const states[] = {"starting",  "running", "backoff",
	                                     "crashloop", "stopped", "exited",
	                                     "unknown",   NULL};
	struct jv *ans = supanswer_parse((const char *)data, size), *st, *procs;
	struct buf out;

	if (ans == NULL)
		return 0;
	if (jv_type(ans) != JV_OBJECT)
		abort();
	st = supanswer_status(ans);
	if (jv_type(st) != JV_OBJECT ||
	    !known(jv_str(jv_get(st, "health")), health))
		abort();
	procs = jv_get(st, "processes");
	if (jv_type(procs) != JV_ARRAY || jv_len(procs) > SUPANSWER_PROCS_MAX)
		abort();
	for (size_t i = 0; i < jv_len(procs); i++) {
		struct jv *p = jv_at(procs, i);
		const char *name = jv_str(jv_get(p, "name"));
		if (!known(jv_str(jv_get(p, "kind")), kinds) ||
		    !known(jv_str(jv_get(p, "state")), states) ||
		    name == NULL || strlen(name) > SUPANSWER_NAME_MAX)
			abort();
	}
	buf_init(&out, 1u << 20);
	if (jv_dump(st, &out) < 0)
		abort();
	buf_release(&out);
	jv_free(st);
	jv_free(ans);
	return 0;
}
