/*
 * /v1/agents: the coding agents and their credentials.
 *
 * Credentials belong to a scope: the caller's tenant (its token's name),
 * or with ?scope=instance the instance-wide defaults, which only an
 * operator may change (api_scope) and which a tenant's tasks use when
 * the tenant has none of its own.  A tenant's call never reads, replaces
 * or removes another tenant's rows: every store call here names the
 * scope.  Credentials are write-only: a key is sealed into the store and
 * nothing here writes it back out.  The list says, for the caller's
 * tenant, which credential its tasks use ("source": its own, the
 * instance's, or none) and shows at most the key's last four characters
 * (of the instance's key only to operators), or a login's expiry.  The request
 * body and the parsed string that held a key or code are wiped as soon as they
 * are used, and no log line carries any of it.
 *
 * A scope holds one credential per agent: connecting an API key removes
 * the scope's subscription login and the other way round
 * (store_agent_connect), so the latest connection wins.
 *
 * Claude Code may also sign in with a Claude subscription: OAuth with
 * PKCE, the flow of `claude setup-token`.  start makes a verifier and a
 * state and answers the provider's authorize URL; the user approves
 * there and pastes back "code#state", which finish exchanges for tokens
 * (cred/credentials.c, which also refreshes them).  Sign-ins started and
 * not finished live only in memory: at most AGENT_OAUTH_PENDING_MAX (a
 * new one pushes out the oldest), each for AGENT_OAUTH_PENDING_S; a
 * restart forgets them, which costs a user one more click.  Each is
 * bound to the scope that started it: a finish in another scope does
 * not find it.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "api/api.h"
#include "cred/credentials.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "spend/spend.h"

#define HINT_MIN 16 /* shorter keys get no hint: 4 characters is too much */

/* The agent named in the path, or a 404. */
static const struct agent_def *
load_agent(struct req *r, struct resp *w)
{
	const struct agent_def *a = agent_find(r->name);
	char known[128];

	if (a == NULL) {
		agent_names(", ", known, sizeof(known));
		api_fail(w, 404, "not_found", "no such agent (known: %s)",
		         known);
	}
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
set_hint(struct store *st, const char *owner, const struct agent_def *a,
         struct jv *o)
{
	struct vault_secret key;
	char hint[16];

	if (store_agent_key(st, owner, a->name, &key) != 0)
		return;
	if (key.len >= HINT_MIN) {
		snprintf(hint, sizeof(hint), "\xe2\x80\xa6%s",
		         key.data + key.len - 4);
		jv_set_str(o, "key_hint", hint);
		vault_wipe(hint, sizeof(hint));
	}
	vault_secret_free(&key);
}

/* A login's state and expiry; never its tokens. */
static void
set_login(struct req *r, const char *owner, const struct agent_def *a,
          struct jv *o)
{
	struct cred_oauth tok;
	char when[CLOCK_RFC3339_LEN];

	if (!a->oauth || cred_oauth_get(r->core->store, owner, &tok) != 0)
		return;
	if (tok.needs_login)
		jv_set_str(o, "status", "needs_login");
	clock_rfc3339(tok.expires_at / 1000, when);
	jv_set(o, "expires_at",
	       tok.expires_at ? jv_new_str(when) : json_null());
	cred_oauth_wipe(&tok);
}

/* The default model the tenant's tasks use: its own, else the instance's. */
static void
set_model(struct store *st, const char *tenant, const struct agent_def *a,
          struct jv *o)
{
	char model[STORE_SETTING_MAX_BYTES + 1];
	const char *from = "tenant";

	if (tenant[0] == '\0' ||
	    store_agent_default_model(st, tenant, a->name, model,
	                              sizeof(model)) != 0) {
		from = "instance";
		if (store_agent_default_model(st, "", a->name, model,
		                              sizeof(model)) != 0)
			from = NULL;
	}
	jv_set(o, "default_model", from ? jv_new_str(model) : json_null());
	jv_set(o, "default_model_source",
	       from ? jv_new_str(from) : json_null());
}

/* A dated snapshot ("…-20250514", "…-2025-08-07"): the alias is listed. */
static bool
dated(const char *name)
{
	size_t n = strlen(name), d = 0;

	for (size_t i = n; i > 0 && (isdigit((unsigned char)name[i - 1]) ||
	                             name[i - 1] == '-');
	     i--)
		d += isdigit((unsigned char)name[i - 1]) != 0;
	return d >= 8;
}

/* "claude-sonnet-4-5" as "Claude Sonnet 4.5", "gpt-5-mini" "GPT-5 Mini". */
static void
model_label(const char *id, char *out, size_t len)
{
	const char *name = strrchr(id, '/') ? strrchr(id, '/') + 1 : id;
	size_t n = 0;

	for (const char *p = name; *p && n + 4 < len; p++) {
		bool start = p == name || p[-1] == '-';
		if (*p != '-')
			out[n++] = start && !(p[0] == 'o' &&
			                      isdigit((unsigned char)p[1]))
			               ? (char)toupper((unsigned char)*p)
			               : *p;
		else if (isdigit((unsigned char)p[-1]) &&
		         isdigit((unsigned char)p[1]))
			out[n++] = '.';
		else
			out[n++] =
			    strncmp(name, "gpt-", 4) == 0 && p == name + 3
			        ? '-'
			        : ' ';
	}
	out[n] = '\0';
	if (strncmp(out, "Gpt", 3) == 0)
		memcpy(out, "GPT", 3);
}

/* The name a model of provider has in the agent's --model. */
static void
model_id(const struct agent_def *a, const char *provider, const char *name,
         char *out, size_t len)
{
	if (a->kind != AGENT_OPENCODE)
		snprintf(out, len, "%s", name);
	else
		snprintf(out, len, "%s/%s",
		         strcmp(provider, "zen") == 0 ? "opencode" : provider,
		         name);
}

/* The proxy upstream an id of the agent goes to (agent/opencode.c). */
static const char *
model_provider(const struct agent_def *a, const char *id)
{
	static const char *const named[] = {"openai", "anthropic", "compat"};
	const char *slash = strchr(id, '/');

	if (a->kind != AGENT_OPENCODE)
		return a->upstreams[0];
	for (size_t i = 0; slash && i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i]) == (size_t)(slash - id) &&
		    strncmp(id, named[i], (size_t)(slash - id)) == 0)
			return named[i];
	return "zen";
}

static void
model_push(struct jv *arr, const struct agent_def *a, const char *id,
           const char *free_id, const char *def, bool connected)
{
	const char *provider = model_provider(a, id);
	bool free_one = free_id && strcmp(id, free_id) == 0;
	bool usable = connected || (free_one && a->free_upstream &&
	                            strcmp(provider, a->free_upstream) == 0);
	char label[96], why[200];
	struct jv *m = jv_obj();

	for (size_t i = 0; i < jv_len(arr); i++)
		if (strcmp(jv_str(jv_get(jv_at(arr, i), "id")), id) == 0) {
			jv_free(m);
			return;
		}
	model_label(id, label, sizeof(label));
	jv_set_str(m, "id", id);
	jv_set_str(m, "label", label);
	jv_set_str(m, "provider", provider);
	jv_set_bool(m, "usable", usable);
	snprintf(why, sizeof(why),
	         "no credential for %s is stored: connect one (PUT "
	         "/v1/agents/%s/api-key)",
	         a->label, a->name);
	jv_set(m, "reason", usable ? json_null() : jv_new_str(why));
	jv_set_bool(m, "free", free_one);
	jv_set_bool(m, "default", def && strcmp(id, def) == 0);
	jv_push(arr, m);
}

/*
 * The models of the agent: its default and free models first, then the
 * built-in price table's (aliases, not dated snapshots) of the upstreams
 * the agent reaches.  A task may still name any other model.
 */
static struct jv *
models_json(const struct agent_def *a, const struct jv *o, const char *free_id,
            bool connected)
{
	const char *def = jv_str(jv_get(o, "default_model")), *provider, *name;
	struct jv *arr = jv_arr();
	char id[160];

	if (def == NULL)
		def = a->default_model;
	if (def)
		model_push(arr, a, def, free_id, def, connected);
	if (free_id)
		model_push(arr, a, free_id, free_id, def, connected);
	for (size_t i = 0; (name = spend_model_at(i, &provider)) != NULL; i++) {
		if (!agent_uses_upstream(a, provider) || dated(name))
			continue;
		model_id(a, provider, name, id, sizeof(id));
		model_push(arr, a, id, free_id, def, connected);
	}
	return arr;
}

/* The agent as the tenant ("" the instance) sees it. */
static struct jv *
agent_json(struct req *r, const char *tenant, const struct agent_def *a)
{
	struct store *st = r->core->store;
	char method[16], other[16], owner[STORE_SECRET_OWNER_MAX + 1];
	struct jv *o;
	int rc = store_agent_source(st, tenant, a->name, owner);

	if (rc == 0)
		rc = store_agent_method(st, owner, a->name, method);
	if (rc < 0)
		return NULL;
	o = jv_obj();
	jv_set_str(o, "id", a->name);
	jv_set_str(o, "label", a->label);
	jv_set_str(o, "status", rc == 0 ? "connected" : "not_connected");
	jv_set(o, "method", rc == 0 ? jv_new_str(method) : json_null());
	jv_set(o, "source",
	       rc != 0 ? json_null()
	               : jv_new_str(owner[0] ? "tenant" : "instance"));
	jv_set_bool(o, "instance_default",
	            store_agent_method(st, "", a->name, other) == 0);
	/* The instance's key hint is the operators' business only. */
	if (rc == 0 && strcmp(method, "api_key") == 0 &&
	    (owner[0] || r->operator))
		set_hint(st, owner, a, o);
	else if (rc == 0 && strcmp(method, "oauth") == 0)
		set_login(r, owner, a, o);
	set_model(st, tenant, a, o);
	if (a->free_model)
		jv_set_str(o, "free_model", r->core->cfg->opencode_free_model);
	jv_set(o, "models",
	       models_json(a, o,
	                   a->free_model ? r->core->cfg->opencode_free_model
	                                 : NULL,
	                   rc == 0));
	jv_set_bool(o, "supports_api_key", a->api_key);
	jv_set_bool(o, "supports_oauth", a->oauth);
	return o;
}

void
agents_list(struct req *r, struct resp *w)
{
	struct jv *arr, *o;
	const char *tenant;

	if (api_scope(r, w, &tenant) < 0)
		return;
	arr = jv_arr();
	for (size_t i = 0; i < agents_count; i++) {
		struct jv *one = agent_json(r, tenant, &agents[i]);
		if (one == NULL) {
			jv_free(arr);
			api_fail(w, 500, "internal", "cannot read the agents");
			return;
		}
		jv_push(arr, one);
	}
	o = jv_obj();
	jv_set(o, "agents", arr);
	jv_set_str(o, "scope", tenant[0] ? "tenant" : "instance");
	jv_set_str(o, "tenant", r->owner);
	jv_set_bool(o, "operator", r->operator);
	api_reply_json(w, 200, o);
}

/* "tenant" or "instance", for replies and logs. */
static const char *
scope_name(const char *owner)
{
	return owner[0] ? "tenant" : "instance";
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
	const struct agent_def *a = load_agent(r, w);
	struct err e = {0};
	struct jv *body, *k, *o;
	const char *owner = NULL;

	if (a == NULL || api_scope(r, w, &owner) < 0 ||
	    api_body_object(r, w, false, &body) < 0) {
		vault_wipe(r->body.data, r->body.len);
		return;
	}
	vault_wipe(r->body.data, r->body.len);
	k = jv_get(body, "api_key");
	if (check_key(k, &e) == 0 &&
	    store_agent_connect(r->core->store, owner, a->name,
	                        STORE_SECRET_AGENT_API_KEY, jv_str(k),
	                        jv_str_len(k)) != 0)
		ERR_INTERNAL(&e, "cannot store the key");
	wipe_str(k);
	jv_free(body);
	if (e.status) {
		api_reply_err(w, &e);
		return;
	}
	log_info("agents: %s: %s API key set (by %s)", a->name,
	         scope_name(owner), r->owner);
	o = jv_obj();
	jv_set_str(o, "method", "api_key");
	jv_set_str(o, "provider", a->name);
	jv_set_str(o, "status", "connected");
	api_reply_json(w, 200, o);
}

/* Removes the agent's credentials of these kinds; idempotent. */
static void
remove_kinds(struct req *r, struct resp *w, const char *const *kinds, size_t n)
{
	const struct agent_def *a = load_agent(r, w);
	const char *owner;

	if (a == NULL || api_scope(r, w, &owner) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (store_secret_delete(r->core->store, kinds[i], owner,
		                        a->name) < 0) {
			api_fail(w, 500, "internal",
			         "cannot remove the credential");
			return;
		}
	}
	log_info("agents: %s: %s %s removed (by %s)", a->name,
	         scope_name(owner), n == 1 ? "API key" : "credentials",
	         r->owner);
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

/* --- the Claude subscription sign-in ------------------------------------ */

struct pending {
	char state[VAULT_B64URL_32_LEN + 1]; /* "" when the slot is free */
	char verifier[VAULT_B64URL_32_LEN + 1];
	char owner[STORE_SECRET_OWNER_MAX + 1]; /* the scope it connects */
	int64_t started;                        /* monotonic ms */
};

static struct pending pending[AGENT_OAUTH_PENDING_MAX];
static pthread_mutex_t pending_mu = PTHREAD_MUTEX_INITIALIZER;

/* Forgets sign-ins older than AGENT_OAUTH_PENDING_S; pending_mu held. */
static void
pending_expire(int64_t now)
{
	for (size_t i = 0; i < AGENT_OAUTH_PENDING_MAX; i++)
		if (pending[i].state[0] &&
		    now - pending[i].started > AGENT_OAUTH_PENDING_S * 1000)
			vault_wipe(&pending[i], sizeof(pending[i]));
}

/*
 * Keeps a new sign-in of owner's scope: 0, or -1 when the table is full
 * of other scopes' sign-ins.  A scope holding AGENT_OAUTH_PENDING_SCOPE
 * forgets its own oldest; another scope's are never taken, so one
 * tenant cannot push out another's sign-in.
 */
static int
pending_add(const char *owner, const char *state, const char *verifier)
{
	int64_t now = clock_mono_ms();
	size_t slot = AGENT_OAUTH_PENDING_MAX, oldest = AGENT_OAUTH_PENDING_MAX;
	int mine = 0;

	pthread_mutex_lock(&pending_mu);
	pending_expire(now);
	for (size_t i = 0; i < AGENT_OAUTH_PENDING_MAX; i++) {
		if (pending[i].state[0] == '\0') {
			if (slot == AGENT_OAUTH_PENDING_MAX)
				slot = i;
			continue;
		}
		if (strcmp(pending[i].owner, owner) != 0)
			continue;
		mine++;
		if (oldest == AGENT_OAUTH_PENDING_MAX ||
		    pending[i].started < pending[oldest].started)
			oldest = i;
	}
	if (mine >= AGENT_OAUTH_PENDING_SCOPE)
		slot = oldest;
	if (slot < AGENT_OAUTH_PENDING_MAX) {
		vault_wipe(&pending[slot], sizeof(pending[slot]));
		memcpy(pending[slot].state, state, sizeof(pending[slot].state));
		memcpy(pending[slot].verifier, verifier,
		       sizeof(pending[slot].verifier));
		snprintf(pending[slot].owner, sizeof(pending[slot].owner), "%s",
		         owner);
		pending[slot].started = now;
	}
	pthread_mutex_unlock(&pending_mu);
	return slot < AGENT_OAUTH_PENDING_MAX ? 0 : -1;
}

/*
 * Takes owner's sign-in with this state out of the table into out; with
 * state "" owner's only one pending.  How many owner has pending goes
 * to *n.  0, or -1 when there is no such sign-in (or not exactly one).
 * Other scopes' sign-ins are neither counted nor taken.
 */
static int
pending_take(const char *owner, const char *state, struct pending *out,
             size_t *n)
{
	size_t len = strlen(state), found = AGENT_OAUTH_PENDING_MAX;

	*n = 0;
	pthread_mutex_lock(&pending_mu);
	pending_expire(clock_mono_ms());
	for (size_t i = 0; i < AGENT_OAUTH_PENDING_MAX; i++) {
		if (pending[i].state[0] == '\0' ||
		    strcmp(pending[i].owner, owner) != 0)
			continue;
		++*n;
		if (len == 0 || (len == VAULT_B64URL_32_LEN &&
		                 vault_equal(pending[i].state, state, len)))
			found = i;
	}
	if (len == 0 && *n != 1)
		found = AGENT_OAUTH_PENDING_MAX;
	if (found < AGENT_OAUTH_PENDING_MAX) {
		*out = pending[found];
		vault_wipe(&pending[found], sizeof(pending[found]));
	}
	pthread_mutex_unlock(&pending_mu);
	return found < AGENT_OAUTH_PENDING_MAX ? 0 : -1;
}

/* The agent named in the path, if it has a subscription sign-in. */
static const struct agent_def *
load_oauth_agent(struct req *r, struct resp *w)
{
	const struct agent_def *a = load_agent(r, w);

	if (a && !a->oauth) {
		api_fail(w, 400, "invalid_request",
		         "%s has no subscription sign-in: connect it with an "
		         "API key",
		         a->name);
		return NULL;
	}
	return a;
}

void
agents_oauth_start(struct req *r, struct resp *w)
{
	const struct agent_def *a = load_oauth_agent(r, w);
	char verifier[VAULT_B64URL_32_LEN + 1], challenge[sizeof(verifier)];
	char state[sizeof(verifier)], url[AGENT_OAUTH_URL_MAX];
	const char *owner;
	struct jv *o;

	if (a == NULL || api_scope(r, w, &owner) < 0)
		return;
	vault_pkce(verifier, challenge);
	vault_random_b64url(state);
	if (cred_oauth_authorize_url(r->core->cfg, challenge, state, url,
	                             sizeof(url)) < 0) {
		vault_wipe(verifier, sizeof(verifier));
		api_fail(w, 500, "internal", "the authorize URL is too long");
		return;
	}
	if (pending_add(owner, state, verifier) < 0) {
		vault_wipe(verifier, sizeof(verifier));
		api_fail(w, 503, "oauth_pending_full",
		         "%d subscription sign-ins of all tenants are pending; "
		         "try again when some were finished or expired (%d "
		         "min)",
		         AGENT_OAUTH_PENDING_MAX, AGENT_OAUTH_PENDING_S / 60);
		w->retry_after = 60;
		return;
	}
	vault_wipe(verifier, sizeof(verifier));
	log_info("agents: %s: %s subscription sign-in started (by %s)", a->name,
	         scope_name(owner), r->owner);
	o = jv_obj();
	jv_set_str(o, "authorize_url", url);
	jv_set_str(o, "state", state);
	api_reply_json(w, 200, o);
}

/* Copies s[0..n) with white space around it trimmed; -1: too long. */
static int
take_part(const char *s, size_t n, char *out, size_t len)
{
	while (n && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
	             s[n - 1] == '\n'))
		n--;
	if (n >= len)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/*
 * The code and the state of a finish: "code#state", or code and state
 * apart.  Never echoes the code, not even the offending character.
 */
static int
finish_args(const struct jv *body, char *code, size_t clen, char *state,
            size_t slen, struct err *e)
{
	const struct jv *c = jv_get(body, "code"), *s = jv_get(body, "state");
	const char *v, *hash;
	char other[AGENT_OAUTH_STATE_MAX + 1] = "";
	size_t n;

	if (c == NULL || jv_type(c) != JV_STRING)
		return ERR_BAD(e, "code is required: the code#state the "
		                  "sign-in page shows");
	if (s && jv_type(s) != JV_NULL &&
	    (jv_type(s) != JV_STRING ||
	     take_part(jv_str(s), jv_str_len(s), other, sizeof(other)) < 0))
		return ERR_BAD(e, "unknown state: start the sign-in again");
	v = jv_str(c);
	n = jv_str_len(c);
	if (memchr(v, '\0', n))
		return ERR_BAD(e,
		               "code must be printable ASCII without spaces");
	hash = memchr(v, '#', n);
	if (take_part(v, hash ? (size_t)(hash - v) : n, code, clen) < 0)
		return ERR_BAD(e, "code is longer than %d bytes",
		               AGENT_OAUTH_CODE_MAX_BYTES);
	if (code[0] == '\0')
		return ERR_BAD(e, "code must not be empty");
	for (const char *p = code; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return ERR_BAD(e, "code must be printable ASCII "
			                  "without spaces");
	if (hash == NULL)
		return snprintf(state, slen, "%s", other) < (int)slen
		           ? 0
		           : ERR_BAD(e, "unknown state");
	if (take_part(hash + 1, n - (size_t)(hash + 1 - v), state, slen) < 0 ||
	    (other[0] && strcmp(other, state) != 0))
		return ERR_BAD(e, "unknown state: the code's state is not the "
		                  "one given");
	return 0;
}

static void
finish_reply(struct resp *w, const struct agent_def *a,
             const struct cred_oauth *tok)
{
	char when[CLOCK_RFC3339_LEN];
	struct jv *o = jv_obj();

	clock_rfc3339(tok->expires_at / 1000, when);
	jv_set_str(o, "method", "oauth");
	jv_set_str(o, "provider", a->name);
	jv_set_str(o, "status", "connected");
	jv_set(o, "expires_at",
	       tok->expires_at ? jv_new_str(when) : json_null());
	api_reply_json(w, 200, o);
}

void
agents_oauth_finish(struct req *r, struct resp *w)
{
	const struct agent_def *a = load_oauth_agent(r, w);
	char code[AGENT_OAUTH_CODE_MAX_BYTES + 1];
	char state[AGENT_OAUTH_STATE_MAX + 1] = "";
	struct pending p = {0};
	struct cred_oauth tok = {0};
	struct err e = {0};
	struct jv *body;
	const char *owner = NULL;
	size_t n = 0;

	if (a == NULL || api_scope(r, w, &owner) < 0 ||
	    api_body_object(r, w, false, &body) < 0) {
		vault_wipe(r->body.data, r->body.len);
		return;
	}
	vault_wipe(r->body.data, r->body.len);
	finish_args(body, code, sizeof(code), state, sizeof(state), &e);
	wipe_str(jv_get(body, "code"));
	jv_free(body);
	if (e.status == 0 && pending_take(owner, state, &p, &n) < 0) {
		if (state[0])
			ERR_BAD(&e,
			        "unknown or expired state: start the "
			        "sign-in again (POST "
			        "/v1/agents/%s/oauth/start)",
			        a->name);
		else
			ERR_BAD(&e,
			        "the code has no #state and %zu sign-ins "
			        "are pending: paste the whole code#state",
			        n);
	}
	if (e.status == 0)
		cred_oauth_login(r->core->store, r->core->cfg, owner, code,
		                 p.state, p.verifier, &tok, &e);
	vault_wipe(code, sizeof(code));
	vault_wipe(&p, sizeof(p));
	if (e.status) {
		api_reply_err(w, &e);
		return;
	}
	log_info("agents: %s: %s signed in with a Claude subscription (by %s)",
	         a->name, scope_name(owner), r->owner);
	finish_reply(w, a, &tok);
	cred_oauth_wipe(&tok);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route agents_routes[] = {
    {.method = "GET", .pattern = "/v1/agents", .fn = agents_list},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/api-key",
     .fn = agents_set_key,
     .max_body = AGENT_KEY_BODY_BYTES},
    {.method = "DELETE",
     .pattern = "/v1/agents/{name}/api-key",
     .fn = agents_delete_key},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/disconnect",
     .fn = agents_disconnect},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/oauth/start",
     .fn = agents_oauth_start},
    {.method = "POST",
     .pattern = "/v1/agents/{name}/oauth/finish",
     .fn = agents_oauth_finish,
     .max_body = AGENT_KEY_BODY_BYTES},
    {0},
};
