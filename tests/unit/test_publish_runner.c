/*
 * Unit tests of the production container's spec (publish/runner.c): what
 * a server release runs with, read off the spec the engine is given, and
 * the edge's view of a release the runner never started.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "publish/publish.h"
#include "publish/runner.h"
#include "unit.h"

static void
release_of(struct release *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "01J00000000000000000REL001");
	snprintf(r->app_id, sizeof(r->app_id), "01J0000000000000000000APP1");
	snprintf(r->kind, sizeof(r->kind), "server");
	snprintf(r->image, sizeof(r->image), "sandboxd-base:test");
	snprintf(r->command, sizeof(r->command), "node server.js");
	snprintf(r->health, sizeof(r->health), "/health");
	snprintf(r->path, sizeof(r->path), "/d/releases/APP1/REL001");
	r->port = 3000;
}

static bool
has(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static const char *
label(const struct docker_spec *s, const char *key)
{
	for (size_t i = 0; i < DOCKER_MAX_KV && s->labels[i].key; i++)
		if (strcmp(s->labels[i].key, key) == 0)
			return s->labels[i].value;
	return NULL;
}

static void
spec_is_a_production_container(void)
{
	struct config cfg = {0};
	struct release r;
	struct runner_spec_buf b;
	struct docker_spec s;
	const char *env[] = {"API_KEY=k", "GREETING=hi", NULL};

	snprintf(cfg.image, sizeof(cfg.image), "sandboxd-base:0.1.0");
	snprintf(cfg.runtime, sizeof(cfg.runtime), "runc");
	snprintf(cfg.network, sizeof(cfg.network), "sandboxd");
	cfg.memory_mb = 512;
	cfg.pids_limit = 256;
	cfg.nofile_limit = 4096;
	release_of(&r);
	publish_runner_spec(&cfg, "inst1", &r, env, &b, &s);
	CHECK_STR(s.name, "sandboxd-rel-01j00000000000000000rel001");
	CHECK_STR(s.image, "sandboxd-base:test"); /* the release's own */
	CHECK_STR(s.user, "1000:1000");
	CHECK_STR(s.network, "sandboxd");
	CHECK_STR(s.runtime, "");
	CHECK_STR(s.binds[0], "/d/releases/APP1/REL001/app:/app:ro");
	CHECK(s.binds[1] == NULL); /* never the workspace */
	CHECK(s.read_only);
	CHECK(s.memory_bytes == 512LL * 1024 * 1024);
	CHECK(s.pids_limit == 256 && s.nofile == 4096);
	CHECK_STR(s.restart, "unless-stopped");
	CHECK(s.init);
	CHECK_STR(s.entrypoint[0], "/bin/sh");
	CHECK_STR(s.entrypoint[1], "-c");
	CHECK(s.entrypoint[2] == NULL);
	CHECK_STR(s.cmd[0], "exec node server.js");
	CHECK(s.cmd[1] == NULL);
	CHECK_STR(s.workdir, "/app");
	CHECK(has(s.env, DOCKER_MAX_KV, "PORT=3000"));
	CHECK(has(s.env, DOCKER_MAX_KV, "HOST=0.0.0.0"));
	CHECK(has(s.env, DOCKER_MAX_KV, "NODE_ENV=production"));
	CHECK(has(s.env, DOCKER_MAX_KV, "HOME=/tmp"));
	for (size_t i = 0; i < DOCKER_MAX_KV && s.env[i]; i++)
		CHECK(strncmp(s.env[i], "SANDBOXD_", 9) != 0);
	CHECK(s.env_more == env);
	CHECK_STR(label(&s, "sandboxd.instance"), "inst1");
	CHECK_STR(label(&s, "sandboxd.release"), r.id);
	CHECK_STR(label(&s, "sandboxd.app"), r.app_id);
	CHECK_STR(label(&s, RUNNER_LABEL), "true");
	CHECK(label(&s, "sandboxd.sandbox") == NULL); /* not a sandbox */
	CHECK(strncmp(s.tmpfs[0], "/tmp:", 5) == 0);
	CHECK(strncmp(s.tmpfs[1], RUNNER_AGENTS_DIR ":ro,",
	              strlen(RUNNER_AGENTS_DIR) + 4) == 0);
	/* No image named on the release: the configured one. */
	r.image[0] = '\0';
	publish_runner_spec(&cfg, "inst1", &r, NULL, &b, &s);
	CHECK_STR(s.image, "sandboxd-base:0.1.0");
	CHECK(s.env_more == NULL);
	snprintf(cfg.runtime, sizeof(cfg.runtime), "runsc");
	publish_runner_spec(&cfg, "inst1", &r, NULL, &b, &s);
	CHECK_STR(s.runtime, "runsc");
}

static void
command_exec_when_simple(void)
{
	char out[600];

	publish_runner_command("node server.js", out, sizeof(out));
	CHECK_STR(out, "exec node server.js");
	publish_runner_command("npm run start -- -p $PORT", out, sizeof(out));
	CHECK_STR(out, "exec npm run start -- -p $PORT");
	publish_runner_command("cd api && node main.js", out, sizeof(out));
	CHECK_STR(out, "cd api && node main.js");
	publish_runner_command("node a.js | tee /tmp/log", out, sizeof(out));
	CHECK_STR(out, "node a.js | tee /tmp/log");
	publish_runner_command("node a.js; node b.js", out, sizeof(out));
	CHECK_STR(out, "node a.js; node b.js");
	publish_runner_command("exec node a.js", out, sizeof(out));
	CHECK_STR(out, "exec node a.js");
	publish_runner_command("if true; then node a.js; fi", out, sizeof(out));
	CHECK_STR(out, "if true; then node a.js; fi");
	publish_runner_command("(node a.js)", out, sizeof(out));
	CHECK_STR(out, "(node a.js)");
}

static void
route_unknown_release(void)
{
	struct publish_target t = {.kind = PUBLISH_NONE};

	CHECK(!publish_runner_route(NULL, "01J00000000000000000REL999", &t));
	CHECK(t.kind == PUBLISH_NONE);
}

static const struct unit_test tests[] = {
    {"spec: read-only /app, no workspace, no supervisor, restarted, "
     "labelled",
     spec_is_a_production_container},
    {"command: exec for a simple command, the shell's for a list",
     command_exec_when_simple},
    {"route: a release never started is not known", route_unknown_release},
};

int
main(void)
{
	return UNIT_RUN("publish_runner", tests);
}
