/*
 * The node agent's ops over real nodelink (mutual TLS on loopback, a CA
 * made by nl_ca_init, the agent enrolled through a control plane's
 * enroll op as a join does), against this machine's engine where an op
 * needs one (read-only: facts, image_has, sb_inspect): facts; a
 * workspace's files written in pieces, read, listed, stat'ed, refused
 * outside the workspace; a workspace out as a tar and into another
 * sandbox's place, a tar over bytes_max refused with its trailer; the
 * trash; only the control plane may call; and the credential proxy's
 * door, whose connections reach the control plane's proxy op with the
 * SBXPEER line first.
 */
#include "agent_fixture.h"

static void
make_ws(const char *id)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/data/workspaces/%s", root, id);
	CHECK(mkdir(p, 0700) == 0);
}

static void
test_facts(void)
{
	struct err e;
	struct jv *ans = call(req_of("facts", NULL, NULL), &e);

	CHECK(ans != NULL);
	CHECK_STR(jv_str(jv_get(ans, "name")), "n1");
	CHECK_STR(jv_str(jv_get(ans, "data_dir")), agcfg.data_dir);
	CHECK(jv_int(jv_get(ans, "mem_total")) > 0);
	CHECK(jv_int(jv_get(ans, "disk_total")) > 0);
	CHECK_STR(jv_str(jv_get(ans, "version")), SANDBOXD_VERSION);
	if (engine)
		CHECK(jv_str(jv_get(ans, "engine_api")) &&
		      strncmp(jv_str(jv_get(ans, "engine_api")), "1.", 2) == 0);
	jv_free(ans);
}

static void
write_piece(const char *path, const char *text, int64_t off, bool trunc,
            struct err *e)
{
	char b64[256];
	struct jv *r = req_of("ws_write", ID1, path);

	b64_encode(text, strlen(text), b64);
	jv_set_str(r, "data", b64);
	jv_set_int(r, "off", off);
	jv_set_int(r, "mode", 0644);
	jv_set_bool(r, "truncate", trunc);
	jv_free(call(r, e));
}

static void
test_files(void)
{
	struct err e;
	struct jv *ans, *r;
	unsigned char raw[64];
	char p[256];

	make_ws(ID1);
	write_piece("workspace/app/a.txt", "hello", 0, true, &e);
	CHECK(e.status == 0);
	write_piece("workspace/app/a.txt", "world", 5, false, &e);
	CHECK(e.status == 0);
	write_piece("workspace/app/a.txt", "late", 99, false, &e);
	CHECK(e.status == 409); /* a piece must follow the last */
	r = req_of("ws_read", ID1, "workspace/app/a.txt");
	jv_set_int(r, "off", 0);
	jv_set_int(r, "max", 64);
	ans = call(r, &e);
	CHECK(ans != NULL);
	const char *d = jv_str(jv_get(ans, "data"));
	long n = d ? b64_decode(d, strlen(d), raw) : -1;
	CHECK(n == 10 && memcmp(raw, "helloworld", 10) == 0);
	CHECK(jv_is_true(jv_get(ans, "eof")));
	jv_free(ans);
	ans = call(req_of("ws_stat", ID1, "workspace/app/a.txt"), &e);
	CHECK(ans && jv_int(jv_get(ans, "size")) == 10);
	CHECK_STR(jv_str(jv_get(ans, "type")), "file");
	jv_free(ans);
	jv_free(call(req_of("ws_mkdir", ID1, "workspace/app/sub/deep"), &e));
	CHECK(e.status == 0);
	ans = call(req_of("ws_list", ID1, "workspace/app"), &e);
	CHECK(ans && jv_len(jv_get(ans, "entries")) == 2);
	jv_free(ans);
	/* Outside the workspace: refused, whatever the path or the link. */
	jv_free(call(req_of("ws_stat", ID1, "../" ID2), &e));
	CHECK(e.status == 400);
	snprintf(p, sizeof(p), "%s/data/workspaces/%s/out", root, ID1);
	CHECK(symlink("/etc", p) == 0);
	jv_free(call(req_of("ws_list", ID1, "out"), &e));
	CHECK(e.status == 400 || e.status == 404);
	jv_free(call(req_of("ws_stat", "../x", "a"), &e));
	CHECK(e.status == 400);
	jv_free(call(req_of("ws_delete", ID1, "workspace/app/sub"), &e));
	CHECK(e.status == 0);
	snprintf(p, sizeof(p), "%s/data/workspaces/%s/workspace/app/sub", root,
	         ID1);
	CHECK(access(p, F_OK) < 0);
}

/* Reads fd to EOF into a new buffer. */
static char *
slurp(int fd, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *out = malloc(cap);
	ssize_t k;

	while (out && n < cap && (k = read(fd, out + n, cap - n)) > 0)
		n += (size_t)k;
	*len = n;
	return out;
}

static struct jv *
tar_in(const char *id, const char *data, size_t len, int64_t max)
{
	struct jv *r = req_of("tar_in", id, NULL), *t;
	struct err e = {0};
	char line[4096], perr[64];
	size_t n;
	int fd = -1;

	jv_set_int(r, "bytes_max", max);
	CHECK(nl_stream(cp, ag_addr, NL_ROLE_NODE, r, NULL, &fd, &e) == 0);
	jv_free(r);
	if (fd < 0)
		return NULL;
	(void)!write(fd, data, len);
	shutdown(fd, SHUT_WR);
	char *got = slurp(fd, &n);
	close(fd);
	snprintf(line, sizeof(line), "%.*s", (int)n, got ? got : "");
	free(got);
	t = jv_parse(line, strlen(line), 8, perr, sizeof(perr));
	CHECK(t != NULL && n > 0 && line[strlen(line) - 1] == '\n');
	return t;
}

static void
test_tar_moves(void)
{
	struct jv *r = req_of("tar_out", ID1, NULL), *t;
	struct err e = {0};
	char p[256], text[32] = "";
	size_t len = 0;
	int fd = -1;

	CHECK(nl_stream(cp, ag_addr, NL_ROLE_NODE, r, NULL, &fd, &e) == 0);
	jv_free(r);
	shutdown(fd, SHUT_WR);
	char *tar = slurp(fd, &len);
	close(fd);
	CHECK(tar && len >= 1024 && len % 512 == 0);
	t = tar_in(ID2, tar, len, 1 << 20);
	CHECK(t && jv_is_true(jv_get(t, "ok")));
	CHECK(t && jv_int(jv_get(t, "bytes")) == (int64_t)len);
	jv_free(t);
	snprintf(p, sizeof(p), "%s/data/workspaces/%s/workspace/app/a.txt",
	         root, ID2);
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0 && read(fd, text, sizeof(text)) == 10);
	CHECK(memcmp(text, "helloworld", 10) == 0);
	if (fd >= 0)
		close(fd);
	/* Over bytes_max: refused, said in the trailer, nothing in place. */
	t = tar_in(ID3, tar, len, 600);
	CHECK(t && !jv_is_true(jv_get(t, "ok")));
	CHECK(t && jv_int(jv_get(t, "status")) == 413);
	jv_free(t);
	snprintf(p, sizeof(p), "%s/data/workspaces/%s", root, ID3);
	CHECK(access(p, F_OK) < 0);
	free(tar);
	/* The moved-away copy goes to the node's trash. */
	jv_free(call(req_of("ws_trash", ID2, NULL), &e));
	CHECK(e.status == 0);
	snprintf(p, sizeof(p), "%s/data/workspaces/%s", root, ID2);
	CHECK(access(p, F_OK) < 0);
}

static void
test_control_only(void)
{
	struct jv *r = req_of("facts", NULL, NULL), *ans = NULL;
	struct err e = {0};

	/* The node's own certificate is not the control plane's. */
	CHECK(nl_call(node, ag_addr, NL_ROLE_NODE, r, &ans, NL_CALL_MS, &e) ==
	      -1);
	CHECK(e.status == 403 || e.status == 401);
	jv_free(r);
}

static void
test_engine_ops(void)
{
	struct err e;
	struct jv *r, *ans;

	if (!engine) {
		printf("# skipped: no engine\n");
		return;
	}
	r = req_of("image_has", NULL, NULL);
	jv_set_str(r, "id",
	           "sha256:0000000000000000000000000000000000000000"
	           "000000000000000000000000");
	ans = call(r, &e);
	CHECK(ans && !jv_is_true(jv_get(ans, "has")));
	jv_free(ans);
	r = req_of("sb_inspect", NULL, NULL);
	jv_set_str(r, "name", "sbx-" ID3);
	ans = call(r, &e);
	CHECK(ans && !jv_is_true(jv_get(ans, "exists")));
	jv_free(ans);
	r = req_of("sb_pause", NULL, NULL);
	jv_set_str(r, "name", "some-other-container");
	jv_free(call(r, &e));
	CHECK(e.status == 400);
}

static void
test_proxy_door(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_port =
	                              htons((uint16_t)ag.net.proxy_port)};
	struct err e = {0};
	char got[128] = "", want[128];
	size_t n = 0;
	int fd;

	CHECK(agent_relay_start(&ag, &e) == 0);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CHECK(write(fd, "ping", 4) == 4);
	snprintf(want, sizeof(want), "SBXPEER n1 127.0.0.1\nping");
	while (n < strlen(want)) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t k;
		if (poll(&pf, 1, 5000) != 1 ||
		    (k = read(fd, got + n, sizeof(got) - 1 - n)) <= 0)
			break;
		n += (size_t)k;
	}
	got[n] = '\0';
	CHECK_STR(got, want);
	close(fd);

	/* One sandbox address holds at most AGENT_PROXY_ADDR relays. */
	int held[AGENT_PROXY_ADDR + 1];
	for (int i = 0; i <= AGENT_PROXY_ADDR; i++) {
		held[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(connect(held[i], (struct sockaddr *)&sin, sizeof(sin)) ==
		      0);
		CHECK(write(held[i], "x", 1) == 1);
		if (i < AGENT_PROXY_ADDR) { /* relayed: its line comes back */
			struct pollfd pf = {.fd = held[i], .events = POLLIN};
			CHECK(poll(&pf, 1, 5000) == 1);
		}
	}
	struct pollfd pf = {.fd = held[AGENT_PROXY_ADDR], .events = POLLIN};
	CHECK(poll(&pf, 1, 5000) == 1 &&
	      read(held[AGENT_PROXY_ADDR], got, sizeof(got)) <= 0);
	for (int i = 0; i <= AGENT_PROXY_ADDR; i++)
		close(held[i]);
	agent_relay_stop(&ag);
}

static const struct unit_test tests[] = {
    {"facts", test_facts},
    {"files in pieces, confined", test_files},
    {"tar out, tar in, bytes_max, trash", test_tar_moves},
    {"control plane only", test_control_only},
    {"engine ops by label only", test_engine_ops},
    {"the proxy's door relays with SBXPEER, capped per address",
     test_proxy_door},
};

int
main(void)
{
	int rc;

	signal(SIGPIPE, SIG_IGN);
	setup();
	rc = UNIT_RUN("nodeagent", tests);
	teardown();
	return rc;
}
