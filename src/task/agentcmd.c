/* The agents' command lines and the system prompt (see agentcmd.h). */
#include "task/agentcmd.h"

#include <stdio.h>
#include <string.h>

#include "lib/jv.h"

static const char prompt_text[] =
    "You are a coding agent working inside a sandboxd sandbox: an "
    "isolated Linux container that holds exactly one app. Make the "
    "changes the task asks for; they are expected and kept.\n"
    "\n"
    "## Where things are\n"
    "- The app lives in %APP_DIR% (your working directory). Everything "
    "outside it except /tmp is read-only or is not yours.\n"
    "- sandboxd's supervisor runs the app from %APP_DIR%/sandbox.yaml: "
    "the `web` process (command, port, health_path), optional background "
    "`workers`, and an optional `build` check it runs after your task.\n"
    "- The web process must listen on 0.0.0.0:%PORT% (not localhost or "
    "127.0.0.1): the preview URL forwards to that port. Check your work "
    "with `curl -s %LOCAL_URL%%HEALTH%`.\n"
    "- Processes are restarted by the supervisor; their output is in "
    "/home/sandbox/.sandboxd/logs/<name>.log.\n"
    "\n"
    "## Rules\n"
    "- Keep sandbox.yaml true. If you change how the app starts, which "
    "port it uses or how it is built, update sandbox.yaml in the same "
    "change. Do not delete it.\n"
    "- Never read, print or store secrets, keys or tokens.\n"
    "- Do not rewrite git history (no reset --hard, rebase, force or "
    "branch deletion). sandboxd takes a checkpoint before every task, so "
    "the user can undo it.\n"
    "- Prefer small, focused changes and the dependencies already "
    "installed. Before you finish, make sure the app still starts and "
    "answers on port %PORT%.\n"
    "- If %APP_DIR%/AGENTS.md exists, read it first and follow it.\n";

static int
put(struct buf *out, const char *s)
{
	return buf_append(out, s, strlen(s));
}

int
agentcmd_system_prompt(const struct manifest *m, struct buf *out)
{
	char port[16], url[64];
	const char *health =
	    m->has_web && m->web.health_path[0] ? m->web.health_path : "/";
	int p = m->has_web && m->web.port ? m->web.port : 3000;

	snprintf(port, sizeof(port), "%d", p);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", p);
	for (const char *s = prompt_text; *s;) {
		const char *v = NULL;
		size_t skip = 0;
		if (strncmp(s, "%APP_DIR%", 9) == 0)
			v = AGENTCMD_APP_DIR, skip = 9;
		else if (strncmp(s, "%PORT%", 6) == 0)
			v = port, skip = 6;
		else if (strncmp(s, "%LOCAL_URL%", 11) == 0)
			v = url, skip = 11;
		else if (strncmp(s, "%HEALTH%", 8) == 0)
			v = health, skip = 8;
		if (v) {
			if (put(out, v) < 0)
				return -1;
			s += skip;
		} else {
			if (buf_append(out, s, 1) < 0)
				return -1;
			s++;
		}
	}
	return 0;
}

static int
arg(struct buf *out, const char *s)
{
	return buf_append(out, s, strlen(s) + 1); /* with its NUL */
}

int
agentcmd_argv(enum agent_kind kind, const char *model, bool cont,
              const char *system_prompt, const char *prompt, struct buf *out)
{
	bool has_model = model && *model;
	int rc = 0;

	if (kind == AGENT_OPENCODE) {
		rc |= arg(out, "opencode") | arg(out, "run") |
		      arg(out, "--format") | arg(out, "json") |
		      arg(out, "--dangerously-skip-permissions");
		if (has_model)
			rc |= arg(out, "--model") | arg(out, model);
		if (cont) {
			rc |= arg(out, "--continue") | arg(out, prompt);
		} else {
			/* OpenCode takes no system prompt flag: it leads. */
			rc |= put(out, system_prompt) |
			      put(out, "\n\n---\n\n# Your task\n\n") |
			      arg(out, prompt);
		}
		return rc ? -1 : 0;
	}
	rc |= arg(out, "claude") | arg(out, "-p") |
	      arg(out, "--output-format") | arg(out, "stream-json") |
	      arg(out, "--verbose") |
	      arg(out, "--dangerously-skip-permissions");
	if (has_model)
		rc |= arg(out, "--model") | arg(out, model);
	if (cont)
		rc |= arg(out, "--continue");
	rc |= arg(out, "--append-system-prompt") | arg(out, system_prompt) |
	      arg(out, prompt);
	return rc ? -1 : 0;
}

static int
env_add(struct buf *env, const char *name, const char *value)
{
	return buf_appendf(env, "%s=%s", name, value) < 0 ||
	               buf_append(env, "", 1) < 0
	           ? -1
	           : 0;
}

/* OpenCode: which proxy upstream and SDK a "provider/id" model takes. */
static void
opencode_route(const char *model, const char **upstream, const char **npm,
               const char **suffix, const char **id)
{
	const char *slash = strchr(model, '/');
	size_t n = slash ? (size_t)(slash - model) : 0;

	*upstream = "zen";
	*npm = "@ai-sdk/openai-compatible";
	*suffix = "";
	*id = slash ? slash + 1 : model;
	if (n == 6 && memcmp(model, "openai", 6) == 0) {
		*upstream = "openai";
	} else if (n == 9 && memcmp(model, "anthropic", 9) == 0) {
		*upstream = "anthropic";
		*npm = "@ai-sdk/anthropic";
		*suffix = "/v1"; /* the SDK appends /messages */
	} else if (n == 6 && memcmp(model, "compat", 6) == 0) {
		*upstream = "compat";
	}
}

int
agentcmd_env(enum agent_kind kind, const char *proxy_url, const char *token,
             const char *model, struct buf *env, char *model_arg, size_t len)
{
	const char *upstream, *npm, *suffix, *id;
	struct jv *cfg, *prov, *opts, *models, *m;
	char url[600];
	struct buf json;
	int rc;

	snprintf(model_arg, len, "%s", model ? model : "");
	if (kind == AGENT_CLAUDE) {
		snprintf(url, sizeof(url), "%s/claude-code/anthropic",
		         proxy_url);
		return env_add(env, "ANTHROPIC_BASE_URL", url) < 0 ||
		               env_add(env, "ANTHROPIC_API_KEY", token) < 0 ||
		               env_add(
		                   env,
		                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
		                   "1") < 0
		           ? -1
		           : 0;
	}
	opencode_route(model && *model ? model : "opencode/big-pickle",
	               &upstream, &npm, &suffix, &id);
	snprintf(url, sizeof(url), "%s/opencode/%s%s", proxy_url, upstream,
	         suffix);
	snprintf(model_arg, len, "sandboxd/%s", id);
	opts = jv_obj();
	jv_set_str(opts, "baseURL", url);
	jv_set_str(opts, "apiKey", token);
	m = jv_obj();
	jv_set_str(m, "name", id);
	models = jv_obj();
	jv_set(models, id, m);
	prov = jv_obj();
	jv_set_str(prov, "npm", npm);
	jv_set_str(prov, "name", "sandboxd");
	jv_set(prov, "options", opts);
	jv_set(prov, "models", models);
	cfg = jv_obj();
	jv_set_str(cfg, "$schema", "https://opencode.ai/config.json");
	jv_set(cfg, "provider", jv_obj());
	jv_set(jv_get(cfg, "provider"), "sandboxd", prov);
	jv_set_str(cfg, "share", "disabled");
	jv_set_bool(cfg, "autoupdate", false);
	buf_init(&json, 64u << 10);
	rc = jv_dump(cfg, &json);
	jv_free(cfg);
	/* The config in the environment wins over any opencode.json the
	 * app directory holds (one there could point the agent elsewhere). */
	if (rc < 0 || env_add(env, "OPENCODE_CONFIG_CONTENT", json.data) < 0 ||
	    env_add(env, "OPENCODE_DISABLE_MODELS_FETCH", "1") < 0 ||
	    env_add(env, "OPENCODE_DISABLE_LSP_DOWNLOAD", "1") < 0 ||
	    env_add(env, "OPENCODE_DISABLE_SHARE", "1") < 0)
		rc = -1;
	buf_release(&json);
	return rc;
}
