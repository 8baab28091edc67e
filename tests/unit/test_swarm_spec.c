/*
 * A sandbox's service as sent to the engine (swarm_service_json): every
 * hardening field of the container spec in its service form, the
 * constraints, a one-replica "none"-restart dnsrr service; and the
 * read-modify-write edits (replicas with a forced update, the node
 * constraint, the workspace's bind source) on a spec as the engine
 * gives it back, keeping whatever else it holds.
 */
#include <string.h>

#include "docker/swarm.h"
#include "lib/buf.h"
#include "lib/jv.h"
#include "orch/swarmdrv.h"
#include "unit.h"

static struct swarm_service
sandbox_service(void)
{
	struct swarm_service s = {
	    .c = {.name = "sbx-01H",
	          .image = "sha256:abc",
	          .hostname = "sandbox",
	          .user = "1000:1000",
	          .network = "sbx-net",
	          .binds = {"/data/workspaces/01H:/home/sandbox"},
	          .env = {"A=1", "B=two words"},
	          .labels = {{"sandboxd.managed", "true"},
	                     {"sandboxd.sandbox", "01H"}},
	          .tmpfs = {"/tmp:size=512m,mode=1777", "/var/tmp:size=128m"},
	          .memory_bytes = 1 << 30,
	          .pids_limit = 512,
	          .nofile = 4096,
	          .read_only = true},
	    .constraints = {"node.labels.sandboxd.agent==1",
	                    "node.labels.sandboxd.drain!=1"},
	    .reserve_bytes = 512 << 20,
	    .replicas = 0,
	    .stop_grace_s = 10,
	};
	return s;
}

static struct jv *
path(const struct jv *v, const char *const *keys)
{
	for (; v && *keys; keys++)
		v = jv_get(v, *keys);
	return (struct jv *)v;
}

#define AT(v, ...) path(v, (const char *const[]){__VA_ARGS__, NULL})

static void
test_service_json(void)
{
	struct swarm_service s = sandbox_service();
	struct jv *j = swarm_service_json(&s), *cs, *m;

	cs = AT(j, "TaskTemplate", "ContainerSpec");
	CHECK_STR(jv_str(jv_get(j, "Name")), "sbx-01H");
	CHECK_STR(jv_str(AT(j, "Labels", "sandboxd.sandbox")), "01H");
	CHECK_STR(jv_str(AT(cs, "Labels", "sandboxd.managed")), "true");
	CHECK_STR(jv_str(jv_get(cs, "Image")), "sha256:abc");
	CHECK(jv_get(cs, "Command") == NULL); /* the image's entrypoint */
	CHECK_STR(jv_str(jv_get(cs, "User")), "1000:1000");
	CHECK(jv_is_true(jv_get(cs, "ReadOnly")));
	CHECK_STR(jv_str(jv_at(jv_get(cs, "CapabilityDrop"), 0)), "ALL");
	CHECK(jv_int(jv_get(jv_at(jv_get(cs, "Ulimits"), 0), "Soft")) == 4096);
	CHECK(jv_len(jv_get(cs, "Env")) == 2);
	CHECK(jv_int(jv_get(cs, "StopGracePeriod")) == 10000000000LL);
	m = jv_get(cs, "Mounts");
	CHECK(jv_len(m) == 3);
	CHECK_STR(jv_str(jv_get(jv_at(m, 0), "Type")), "bind");
	CHECK_STR(jv_str(jv_get(jv_at(m, 0), "Source")),
	          "/data/workspaces/01H");
	CHECK_STR(jv_str(jv_get(jv_at(m, 0), "Target")), "/home/sandbox");
	CHECK(!jv_is_true(jv_get(jv_at(m, 0), "ReadOnly")));
	CHECK_STR(jv_str(jv_get(jv_at(m, 1), "Target")), "/tmp");
	CHECK(jv_int(AT(jv_at(m, 1), "TmpfsOptions", "SizeBytes")) ==
	      512LL << 20);
	CHECK(jv_int(AT(jv_at(m, 1), "TmpfsOptions", "Mode")) == 01777);
	CHECK(AT(jv_at(m, 2), "TmpfsOptions", "Mode") == NULL);
	CHECK(jv_int(AT(j, "TaskTemplate", "Resources", "Limits",
	                "MemoryBytes")) == 1 << 30);
	CHECK(jv_int(AT(j, "TaskTemplate", "Resources", "Limits", "Pids")) ==
	      512);
	CHECK(jv_int(AT(j, "TaskTemplate", "Resources", "Reservations",
	                "MemoryBytes")) == 512 << 20);
	CHECK_STR(jv_str(AT(j, "TaskTemplate", "RestartPolicy", "Condition")),
	          "none");
	CHECK(jv_len(AT(j, "TaskTemplate", "Placement", "Constraints")) == 2);
	CHECK_STR(jv_str(jv_get(jv_at(AT(j, "TaskTemplate", "Networks"), 0),
	                        "Target")),
	          "sbx-net");
	CHECK(jv_int(AT(j, "Mode", "Replicated", "Replicas")) == 0);
	CHECK(AT(j, "Mode", "Replicated", "Replicas") != NULL);
	CHECK_STR(jv_str(AT(j, "EndpointSpec", "Mode")), "dnsrr");
	jv_free(j);
}

static void
test_probe_entrypoint(void)
{
	struct swarm_service s = sandbox_service();
	struct jv *j, *cs;

	s.c.entrypoint[0] = "sleep";
	s.c.entrypoint[1] = "infinity";
	s.c.binds[0] = NULL;
	s.c.nofile = 0;
	s.replicas = 1;
	j = swarm_service_json(&s);
	cs = AT(j, "TaskTemplate", "ContainerSpec");
	CHECK(jv_len(jv_get(cs, "Command")) == 2);
	CHECK_STR(jv_str(jv_at(jv_get(cs, "Command"), 1)), "infinity");
	CHECK(jv_len(jv_get(cs, "Mounts")) == 2); /* tmpfs only */
	CHECK(jv_len(jv_get(cs, "Ulimits")) == 0);
	CHECK(jv_int(AT(j, "Mode", "Replicated", "Replicas")) == 1);
	jv_free(j);
}

/* A Spec as GET /services/{id} answers it, with what the engine added. */
static const char engine_spec[] =
    "{\"Name\":\"sbx-01H\",\"Labels\":{\"sandboxd.sandbox\":\"01H\"},"
    "\"TaskTemplate\":{\"ContainerSpec\":{\"Image\":\"sha256:abc\","
    "\"Mounts\":[{\"Type\":\"tmpfs\",\"Target\":\"/tmp\"},"
    "{\"Type\":\"bind\",\"Source\":\"/data/workspaces/01H\","
    "\"Target\":\"/home/sandbox\"}],\"Isolation\":\"default\"},"
    "\"Placement\":{\"Constraints\":[\"node.labels.sandboxd.agent==1\","
    "\"node.labels.sandboxd.node==cp\"],\"Platforms\":[{\"OS\":\"linux\"}]},"
    "\"ForceUpdate\":3,\"Runtime\":\"container\"},"
    "\"Mode\":{\"Replicated\":{\"Replicas\":0}},"
    "\"EndpointSpec\":{\"Mode\":\"dnsrr\"}}";

static void
test_edits(void)
{
	char err[64];
	struct jv *s =
	    jv_parse(engine_spec, strlen(engine_spec), 16, err, sizeof(err));
	struct jv *con;

	CHECK(s != NULL);
	CHECK(swarm_spec_set_replicas(s, 1, true) == 0);
	CHECK(jv_int(AT(s, "Mode", "Replicated", "Replicas")) == 1);
	CHECK(jv_int(AT(s, "TaskTemplate", "ForceUpdate")) == 4);
	CHECK(swarm_spec_set_replicas(s, 0, false) == 0);
	CHECK(jv_int(AT(s, "TaskTemplate", "ForceUpdate")) == 4);
	CHECK(jv_int(AT(s, "Mode", "Replicated", "Replicas")) == 0);
	CHECK(swarm_spec_set_constraint(s, "node.labels.sandboxd.node==",
	                                "node.labels.sandboxd.node==n2") == 0);
	con = AT(s, "TaskTemplate", "Placement", "Constraints");
	CHECK(jv_len(con) == 2);
	CHECK_STR(jv_str(jv_at(con, 0)), "node.labels.sandboxd.agent==1");
	CHECK_STR(jv_str(jv_at(con, 1)), "node.labels.sandboxd.node==n2");
	CHECK(swarm_spec_set_bind(s, "/home/sandbox",
	                          "/srv/n2/workspaces/01H") == 0);
	CHECK(swarm_spec_set_bind(s, "/tmp", "/x") < 0); /* not a bind */
	CHECK(swarm_spec_set_bind(s, "/nowhere", "/x") < 0);
	CHECK_STR(
	    jv_str(jv_get(
	        jv_at(AT(s, "TaskTemplate", "ContainerSpec", "Mounts"), 1),
	        "Source")),
	    "/srv/n2/workspaces/01H");
	/* what the engine put there is kept */
	CHECK_STR(jv_str(AT(s, "TaskTemplate", "Runtime")), "container");
	CHECK_STR(jv_str(AT(s, "TaskTemplate", "ContainerSpec", "Isolation")),
	          "default");
	CHECK(jv_len(AT(s, "TaskTemplate", "Placement", "Platforms")) == 1);
	CHECK(swarm_spec_set_constraint(
	          s, "node.labels.sandboxd.node==", NULL) == 0);
	CHECK(jv_len(AT(s, "TaskTemplate", "Placement", "Constraints")) == 1);
	jv_free(s);
}

static void
test_edits_on_bare_spec(void)
{
	char err[64];
	struct jv *s = jv_parse("{}", 2, 4, err, sizeof(err));
	struct jv *arr = jv_parse("[]", 2, 4, err, sizeof(err));

	CHECK(swarm_spec_set_replicas(s, 1, true) == 0);
	CHECK(jv_int(AT(s, "TaskTemplate", "ForceUpdate")) == 1);
	CHECK(swarm_spec_set_constraint(s, "a==", "a==b") == 0);
	CHECK(jv_len(AT(s, "TaskTemplate", "Placement", "Constraints")) == 1);
	CHECK(swarm_spec_set_bind(s, "/home/sandbox", "/x") < 0);
	CHECK(swarm_spec_set_replicas(arr, 1, false) < 0);
	CHECK(swarm_spec_set_constraint(NULL, "a", "b") < 0);
	jv_free(s);
	jv_free(arr);
}

/* The driver's names: agents say "sbx-<ID>", services are named as the
 * containers ("sandboxd-<instance>-<id in lower case>"). */
static void
test_agent_names(void)
{
	struct orch o = {0};
	char out[80];

	snprintf(o.instance, sizeof(o.instance), "f9369671f620d1f9");
	swd_agent_name(
	    &o, "sandboxd-f9369671f620d1f9-01m92ga99j7afmwkfy1za0hm5t", out);
	CHECK_STR(out, "sbx-01M92GA99J7AFMWKFY1ZA0HM5T");
	swd_service_name(&o, out, out);
	CHECK_STR(out, "sandboxd-f9369671f620d1f9-01m92ga99j7afmwkfy1za0hm5t");
	/* another instance's or a foreign name passes unchanged */
	swd_agent_name(&o, "sandboxd-0000-01m92", out);
	CHECK_STR(out, "sandboxd-0000-01m92");
	swd_service_name(&o, "web.1.abc", out);
	CHECK_STR(out, "web.1.abc");
}

static const struct unit_test tests[] = {
    {"agents' names and services' names", test_agent_names},
    {"a sandbox's service spec", test_service_json},
    {"the placement probe's entrypoint and no bind", test_probe_entrypoint},
    {"edits keep what the engine added", test_edits},
    {"edits on a bare or wrong spec", test_edits_on_bare_spec},
};

int
main(void)
{
	return UNIT_RUN("swarm_spec", tests);
}
