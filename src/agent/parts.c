/*
 * The id table: every part id (opencode) or tool_use id (claude) a run
 * mentions, in first-seen order, with what the parsers remember about
 * it.  Ids are found through an open-addressing hash of AGENT_PARTS_SLOTS
 * slots (FNV-1a, linear probing; entries are never removed, so probing
 * needs no tombstones), because a long run repeats its ids on every
 * update and a linear scan would make it quadratic.  Past
 * AGENT_PARTS_MAX entries new ids are not tracked: their events still go
 * out, but without dedupe, and their text no longer joins the final
 * message.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/internal.h"
#include "lib/hash.h"
#include "lib/utf8.h"

static struct agent_part *
parts_append(struct agent_parts *t)
{
	struct agent_part *v;
	size_t ncap;

	if (t->n == AGENT_PARTS_MAX)
		return NULL;
	if (t->n == t->cap) {
		ncap = t->cap ? 2 * t->cap : 16;
		if (ncap > AGENT_PARTS_MAX)
			ncap = AGENT_PARTS_MAX;
		v = realloc(t->v, ncap * sizeof(*v));
		if (v == NULL)
			return NULL;
		t->v = v;
		t->cap = ncap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	return &t->v[t->n++];
}

struct agent_part *
agent_parts_get(struct agent_parts *t, const char *id, size_t len, bool add)
{
	struct agent_part *part;
	uint32_t i;

	if (id == NULL || len == 0 || len > AGENT_ID_MAX)
		return add ? parts_append(t) : NULL;
	if (t->slot == NULL) {
		if (!add)
			return NULL;
		t->slot = calloc(AGENT_PARTS_SLOTS, sizeof(*t->slot));
		if (t->slot == NULL)
			return NULL;
	}
	/* At most half the slots are ever used, so an empty one is found. */
	for (i = hash_fnv1a_bytes(id, len) & (AGENT_PARTS_SLOTS - 1);
	     t->slot[i]; i = (i + 1) & (AGENT_PARTS_SLOTS - 1)) {
		part = &t->v[t->slot[i] - 1];
		if (part->id && strlen(part->id) == len &&
		    memcmp(part->id, id, len) == 0)
			return part;
	}
	if (!add)
		return NULL;
	part = parts_append(t);
	if (part == NULL)
		return NULL;
	part->id = agent_strndup(id, len, AGENT_ID_MAX);
	if (part->id == NULL) {
		t->n--;
		return NULL;
	}
	t->slot[i] = (uint32_t)t->n;
	return part;
}

void
agent_parts_set_text(struct agent_parts *t, struct agent_part *part,
                     const char *s, size_t len)
{
	size_t room = AGENT_FINAL_MAX - (t->text_total - part->text_len);
	char *text;

	len = utf8_clip(s, len, room);
	text = agent_strndup(s, len, len);
	if (text == NULL)
		return;
	free(part->text);
	t->text_total -= part->text_len;
	part->text = text;
	part->text_len = len;
	t->text_total += len;
}

void
agent_parts_release(struct agent_parts *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].id);
		free(t->v[i].text);
		free(t->v[i].name);
		free(t->v[i].path);
	}
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
