/*
 * /v1/agents: the coding agents and their credentials.
 *
 * Credentials are instance-wide (every tenant's tasks use them; any
 * authenticated caller may set or remove them) and write-only: a key is
 * sealed into the store (store_secret_put) and nothing here writes it
 * back out.  The list says whether an agent is connected and shows at
 * most the key's last four characters.  The request body and the parsed
 * string that held a key are wiped as soon as it is stored, and no log
 * line carries any of it.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "lib/log.h"

static const struct api_agent agents[] = {
    {.id = "opencode", .label = "OpenCode", .supports_oauth = false},
    {.id = "claude-code", .label = "Claude Code", .supports_oauth = false},
};

#define NAGENTS  (sizeof(agents) / sizeof(agents[0]))
#define HINT_MIN 16 /* shorter keys get no hint: 4 characters is too much */

const struct api_agent *
api_agent_at(size_t i)
{
	return i < NAGENTS ? &agents[i] : NULL;
}

const struct api_agent *
api_agent_find(const char *id)
{
	for (size_t i = 0; i < NAGENTS; i++)
		if (strcmp(agents[i].id, id) == 0)
			return &agents[i];
	return NULL;
}

/* The agent named in the path, or a 404. */
static const struct api_agent *
load_agent(struct req *r, struct resp *w)
{
	const struct api_agent *a = api_agent_find(r->name);

	if (a == NULL)
		api_fail(w, 404, "not_found",
		         "no such agent (known: opencode, claude-code)");
	return a;
}

/* jv has no constructor for null; its parser makes one. */
static struct jv *
json_null(void)
{
	char err[16];

	return jv_parse("null", 4, 1, err, sizeof(err));
}

/* "…abcd": the key's last four characters, for telling keys apart. */
static void
set_hint(struct store *st, const struct api_agent *a, struct jv *o)
{
	struct vault_secret key;
	char hint[16];

	if (store_agent_key(st, a->id, &key) != 0)
		return;
	if (key.len >= HINT_MIN) {
		snprintf(hint, sizeof(hint), "\xe2\x80\xa6%s",
		         key.data + key.len - 4);
		jv_set_str(o, "key_hint", hint);
		vault_wipe(hint, sizeof(hint));
	}
	vault_secret_free(&key);
}

static struct jv *
agent_json(struct req *r, const struct api_agent *a)
{
	struct store *st = r->core->store;
	char method[16], model[STORE_SETTING_MAX_BYTES + 1];
	struct jv *o;
	int rc = store_agent_method(st, a->id, method);

	if (rc < 0)
		return NULL;
	o = jv_obj();
	jv_set_str(o, "id", a->id);
	jv_set_str(o, "label", a->label);
	jv_set_str(o, "status", rc == 0 ? "connected" : "not_connected");
	jv_set(o, "method", rc == 0 ? jv_new_str(method) : json_null());
	if (rc == 0 && strcmp(method, "api_key") == 0)
		set_hint(st, a, o);
	rc = store_agent_default_model(st, a->id, model, sizeof(model));
	jv_set(o, "default_model", rc == 0 ? jv_new_str(model) : json_null());
	if (strcmp(a->id, "opencode") == 0)
		jv_set_str(o, "free_model", r->core->cfg->opencode_free_model);
	jv_set_bool(o, "supports_api_key", true);
	jv_set_bool(o, "supports_oauth", a->supports_oauth);
	return o;
}

void
agents_list(struct req *r, struct resp *w)
{
	struct jv *arr = jv_arr(), *o;

	for (size_t i = 0; i < NAGENTS; i++) {
		struct jv *one = agent_json(r, &agents[i]);
		if (one == NULL) {
			jv_free(arr);
			api_fail(w, 500, "internal", "cannot read the agents");
			return;
		}
		jv_push(arr, one);
	}
	o = jv_obj();
	jv_set(o, "agents", arr);
	api_reply_json(w, 200, o);
}

/* Never echoes the key, not even the offending character. */
static int
check_key(const struct jv *k, struct err *e)
{
	const char *s;
	size_t n;

	if (k == NULL || jv_type(k) == JV_NULL)
		return ERR_BAD(e, "api_key is required");
	if (jv_type(k) != JV_STRING)
		return ERR_BAD(e, "api_key must be a string, not %s",
		               jv_type_name(jv_type(k)));
	s = jv_str(k);
	n = jv_str_len(k);
	if (n == 0)
		return ERR_BAD(e, "api_key must not be empty");
	if (n > AGENT_KEY_MAX_BYTES)
		return ERR_BAD(e, "api_key is longer than %d bytes",
		               AGENT_KEY_MAX_BYTES);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return ERR_BAD(e,
			               "api_key must be printable ASCII "
			               "without spaces or control characters "
			               "(a pasted newline?)");
	return 0;
}

/*
 * The parsed string is the JSON library's own heap copy; wiping it in
 * place before the value is freed is the only way to clear it.
 */
static void
wipe_str(struct jv *v)
{
	if (v && jv_type(v) == JV_STRING)
		vault_wipe((char *)jv_str(v), jv_str_len(v));
}

void
agents_set_key(struct req *r, struct resp *w)
{
	const struct api_agent *a = load_agent(r, w);
	struct err e = {0};
	struct jv *body, *k, *o;

	if (a == NULL || api_body_object(r, w, false, &body) < 0) {
		vault_wipe(r->body.data, r->body.len);
		return;
	}
	vault_wipe(r->body.data, r->body.len);
	k = jv_get(body, "api_key");
	if (check_key(k, &e) == 0 &&
	    store_secret_put(r->core->store, STORE_SECRET_AGENT_API_KEY, "",
	                     a->id, jv_str(k), jv_str_len(k)) != 0)
		ERR_INTERNAL(&e, "cannot store the key");
	wipe_str(k);
	jv_free(body);
	if (e.status) {
		api_reply_err(w, &e);
		return;
	}
	log_info("agents: %s: API key set (by %s)", a->id, r->owner);
	o = jv_obj();
	jv_set_str(o, "method", "api_key");
	jv_set_str(o, "provider", a->id);
	jv_set_str(o, "status", "connected");
	api_reply_json(w, 200, o);
}

/* Removes the agent's credentials of these kinds; idempotent. */
static void
remove_kinds(struct req *r, struct resp *w, const char *const *kinds, size_t n)
{
	const struct api_agent *a = load_agent(r, w);

	if (a == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		if (store_secret_delete(r->core->store, kinds[i], "", a->id) <
		    0) {
			api_fail(w, 500, "internal",
			         "cannot remove the credential");
			return;
		}
	}
	log_info("agents: %s: %s removed (by %s)", a->id,
	         n == 1 ? "API key" : "credentials", r->owner);
	api_reply_empty(w, 204);
}

void
agents_delete_key(struct req *r, struct resp *w)
{
	static const char *const kinds[] = {STORE_SECRET_AGENT_API_KEY};

	remove_kinds(r, w, kinds, 1);
}

void
agents_disconnect(struct req *r, struct resp *w)
{
	static const char *const kinds[] = {STORE_SECRET_AGENT_API_KEY,
	                                    STORE_SECRET_AGENT_OAUTH};

	remove_kinds(r, w, kinds, 2);
}
