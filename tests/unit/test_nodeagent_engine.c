/*
 * The node agent's ops on a real container of this machine's engine (the
 * sandbox image, labelled as a sandbox, serving HTTP on 8080; removed at
 * the end): sb_inspect finds it by label, preview reaches its port by
 * the address the engine gives, exec runs in it, sb_pause freezes it and
 * the events stream says so, sb_logs_tail reads its output, sb_postart
 * checks its confinement; and sup joins the supervisor's socket of a
 * workspace; image_load takes a one-layer image made here in `docker
 * save`'s layout (removed after).  Skipped (said so) when the engine or
 * the image is missing.
 */
#include <sys/un.h>

#include "agent_fixture.h"
#include "export/tar.h"
#include "vault/vault.h"

#define ID4  "01HZZZZZZZZZZZZZZZZZZZZZZ4"
#define PORT 8080

static char cid[72];

/* Reads fd until want shows up or 10 s pass; whether it did. */
static bool
read_until(int fd, const char *want, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	while (n + 1 < len && strstr(out, want) == NULL) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t k;
		if (poll(&pf, 1, 10000) != 1 ||
		    (k = read(fd, out + n, len - 1 - n)) <= 0)
			break;
		n += (size_t)k;
		out[n] = '\0';
		for (size_t i = 0; i < n; i++)
			if (out[i] == '\0')
				out[i] = '.'; /* the exec stream's headers */
	}
	return strstr(out, want) != NULL;
}

static int
stream(struct jv *req)
{
	struct err e = {0};
	int fd = -1;

	if (nl_stream(cp, ag_addr, NL_ROLE_NODE, req, NULL, &fd, &e) < 0)
		fd = -1;
	jv_free(req);
	return fd;
}

static bool
start_container(void)
{
	char msg[DOCKER_MSG_LEN], name[80], img[80];
	struct docker_network bridge;
	struct docker_spec s = {0};

	snprintf(img, sizeof(img), "sandboxd-base:%s", SANDBOXD_VERSION);
	if (!engine || docker_image_id(ag.d, img, name, msg) != DOCKER_OK ||
	    docker_network_inspect(ag.d, "bridge", &bridge, msg) != DOCKER_OK)
		return false;
	snprintf(ag.net.subnet, sizeof(ag.net.subnet), "%s", bridge.subnet);
	snprintf(name, sizeof(name), "sbxagent-check-%d", (int)getpid());
	s.name = name;
	s.image = img;
	s.user = "1000:1000";
	s.labels[0] = (struct docker_kv){"sandboxd.sandbox", ID4};
	s.labels[1] = (struct docker_kv){"sandboxd.managed", "true"};
	s.entrypoint[0] = "python3";
	s.cmd[0] = "-m";
	s.cmd[1] = "http.server";
	s.cmd[2] = "8080";
	s.memory_bytes = 256ll << 20;
	s.pids_limit = 64;
	s.nofile = 1024;
	if (docker_create(ag.d, &s, cid, msg) != DOCKER_OK) {
		fprintf(stderr, "  create: %s\n", msg);
		return false;
	}
	return true;
}

static void
test_container_ops(void)
{
	char out[8192], msg[DOCKER_MSG_LEN] = "";
	struct jv *r, *ans;
	struct err e;
	int ev, fd = -1;

	if (!start_container()) {
		printf("# skipped: no engine or no sandbox image\n");
		return;
	}
	ev = stream(req_of("events", NULL, NULL));
	CHECK(ev >= 0);
	CHECK(docker_start(ag.d, cid, msg) == DOCKER_OK);
	if (msg[0])
		fprintf(stderr, "  start: %s\n", msg);
	r = req_of("sb_inspect", NULL, NULL);
	jv_set_str(r, "name", "sbx-" ID4);
	ans = call(r, &e);
	CHECK(ans && jv_is_true(jv_get(ans, "running")));
	CHECK(ans && jv_str(jv_get(ans, "ip")) && *jv_str(jv_get(ans, "ip")));
	jv_free(ans);

	/* preview: the server may take a moment to listen */
	for (int i = 0; i < 50; i++) {
		r = req_of("preview", ID4, NULL);
		jv_set_int(r, "port", PORT);
		if ((fd = stream(r)) >= 0)
			break;
		usleep(200 * 1000);
	}
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
		CHECK(read_until(fd, "200 OK", out, sizeof(out)));
		close(fd);
	}

	r = req_of("exec_create", NULL, NULL);
	jv_set_str(r, "container", "sbx-" ID4);
	struct jv *cmd = jv_arr();
	jv_push(cmd, jv_new_str("echo"));
	jv_push(cmd, jv_new_str("hi-from-exec"));
	jv_set(r, "cmd", cmd);
	ans = call(r, &e);
	CHECK(ans && jv_str(jv_get(ans, "id")));
	if (ans && jv_str(jv_get(ans, "id"))) {
		r = req_of("exec_start", NULL, NULL);
		jv_set_str(r, "id", jv_str(jv_get(ans, "id")));
		fd = stream(r);
		CHECK(fd >= 0 &&
		      read_until(fd, "hi-from-exec", out, sizeof(out)));
		if (fd >= 0)
			close(fd);
	}
	jv_free(ans);

	r = req_of("sb_pause", NULL, NULL);
	jv_set_str(r, "name", "sbx-" ID4);
	jv_set_bool(r, "pause", true);
	jv_free(call(r, &e));
	CHECK(e.status == 0);
	CHECK(ev >= 0 &&
	      read_until(ev, "\"action\":\"pause\"", out, sizeof(out)));
	CHECK(strstr(out, "\"name\":\"sbx-" ID4 "\"") != NULL);
	r = req_of("sb_pause", NULL, NULL);
	jv_set_str(r, "name", "sbx-" ID4);
	jv_set_bool(r, "pause", false);
	jv_free(call(r, &e));
	CHECK(e.status == 0);
	if (ev >= 0)
		close(ev);

	r = req_of("sb_logs_tail", NULL, NULL);
	jv_set_str(r, "name", "sbx-" ID4);
	jv_set_int(r, "lines", 20);
	ans = call(r, &e);
	CHECK(ans && jv_str(jv_get(ans, "text")) &&
	      strstr(jv_str(jv_get(ans, "text")), "GET /") != NULL);
	jv_free(ans);

	/* The container is made as sandboxes are (no capabilities,
	 * no-new-privileges): its confinement checks out. */
	r = req_of("sb_postart", NULL, NULL);
	jv_set_str(r, "name", "sbx-" ID4);
	jv_set_int(r, "memory", 256ll << 20);
	jv_free(call(r, &e));
	CHECK(e.status == 0);
	if (e.status)
		fprintf(stderr, "  sb_postart: %s\n", e.msg);

	CHECK(docker_remove(ag.d, cid, msg) == DOCKER_OK);
	cid[0] = '\0';
}

/* A stand-in supervisor: a unix socket in the workspace answering
 * "pong" to what comes. */
static void *
sup_main(void *arg)
{
	int l = (int)(intptr_t)arg, c;
	char buf[64];

	if ((c = accept(l, NULL, NULL)) >= 0) {
		ssize_t n = read(c, buf, sizeof(buf));
		if (n > 0)
			(void)!write(c, "pong", 4);
		close(c);
	}
	close(l);
	return NULL;
}

static void
test_sup(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char p[200], out[64];
	pthread_t t;
	int l, fd;

	snprintf(p, sizeof(p), "%s/data/workspaces/%s", root, ID4);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/data/workspaces/%s/.sandboxd", root, ID4);
	CHECK(mkdir(p, 0700) == 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", p);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(bind(l, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
	      listen(l, 4) == 0);
	pthread_create(&t, NULL, sup_main, (void *)(intptr_t)l);
	fd = stream(req_of("sup", ID4, NULL));
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "ping", 4) == 4);
		CHECK(read_until(fd, "pong", out, sizeof(out)));
		close(fd);
	}
	pthread_join(t, NULL);
}

/* Writes text to dir/name. */
static void
put_file(const char *dir, const char *name, const void *data, size_t n)
{
	char p[300];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, data, n) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
}

/* The tar of dir into a new buffer (its size in *n) and its SHA-256. */
static char *
tar_of(const char *dir, size_t *n, char sha[VAULT_HASH_HEX + 1])
{
	char p[300];
	struct err e = {0};
	struct vault_sha256 *h = vault_sha256_new();
	int64_t bytes = 0;
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	FILE *f = tmpfile();
	char *out;

	CHECK(d >= 0 && f != NULL);
	CHECK(tar_write_tree(d, fileno(f), false, &bytes, &e) == 0);
	close(d);
	out = malloc((size_t)bytes + 1);
	rewind(f);
	*n = fread(out, 1, (size_t)bytes, f);
	fclose(f);
	vault_sha256_update(h, out, *n);
	vault_sha256_end(h, sha);
	(void)p;
	return out;
}

/* A one-layer image in `docker save`'s layout, made here. */
static char *
tiny_image(char id[80], size_t *n)
{
	char layer_dir[128], img_dir[128], sha[VAULT_HASH_HEX + 1], conf[512];
	char cfg_sha[VAULT_HASH_HEX + 1], man[512], name[128];
	struct vault_sha256 *h = vault_sha256_new();
	size_t ln;
	char *layer, *img;

	snprintf(layer_dir, sizeof(layer_dir), "%s/layer", root);
	snprintf(img_dir, sizeof(img_dir), "%s/image", root);
	CHECK(mkdir(layer_dir, 0755) == 0 && mkdir(img_dir, 0755) == 0);
	put_file(layer_dir, "hello.txt", "hello\n", 6);
	layer = tar_of(layer_dir, &ln, sha);
	snprintf(name, sizeof(name), "%s/l1", img_dir);
	CHECK(mkdir(name, 0755) == 0);
	put_file(name, "layer.tar", layer, ln);
	free(layer);
	snprintf(conf, sizeof(conf),
	         "{\"architecture\":\"amd64\",\"os\":\"linux\","
	         "\"config\":{\"Labels\":{\"sandboxd.test\":\"agent\"}},"
	         "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":"
	         "[\"sha256:%s\"]}}",
	         sha);
	vault_sha256_update(h, conf, strlen(conf));
	vault_sha256_end(h, cfg_sha);
	snprintf(name, sizeof(name), "%s.json", cfg_sha);
	put_file(img_dir, name, conf, strlen(conf));
	snprintf(man, sizeof(man),
	         "[{\"Config\":\"%s.json\",\"RepoTags\":null,"
	         "\"Layers\":[\"l1/layer.tar\"]}]",
	         cfg_sha);
	put_file(img_dir, "manifest.json", man, strlen(man));
	img = tar_of(img_dir, n, sha);
	snprintf(id, 80, "sha256:%s", cfg_sha);
	return img;
}

static void
test_image_load(void)
{
	char id[80], msg[DOCKER_MSG_LEN], line[1024] = "", perr[64];
	struct jv *r, *ans, *t;
	struct err e;
	size_t n;
	int fd;

	if (!engine) {
		printf("# skipped: no engine\n");
		return;
	}
	char *img = tiny_image(id, &n);
	r = req_of("image_load", NULL, NULL);
	jv_set_str(r, "id", id);
	fd = stream(r);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, img, n) == (ssize_t)n);
		shutdown(fd, SHUT_WR);
		CHECK(read_until(fd, "\n", line, sizeof(line)));
		close(fd);
	}
	free(img);
	t = jv_parse(line, strlen(line), 4, perr, sizeof(perr));
	CHECK(t && jv_is_true(jv_get(t, "ok")));
	if (t && !jv_is_true(jv_get(t, "ok")))
		fprintf(stderr, "  image_load: %s\n", line);
	jv_free(t);
	r = req_of("image_has", NULL, NULL);
	jv_set_str(r, "id", id);
	ans = call(r, &e);
	CHECK(ans && jv_is_true(jv_get(ans, "has")));
	jv_free(ans);
	(void)docker_image_remove(ag.d, id, msg);
}

static const struct unit_test tests[] = {
    {"a labelled container: inspect, preview, exec, pause, events, logs, "
     "postart",
     test_container_ops},
    {"sup joins the workspace's supervisor socket", test_sup},
    {"image_load of a saved image, then image_has", test_image_load},
};

int
main(void)
{
	char msg[DOCKER_MSG_LEN];
	int rc;

	signal(SIGPIPE, SIG_IGN);
	setup();
	rc = UNIT_RUN("nodeagent_engine", tests);
	if (cid[0])
		(void)docker_remove(ag.d, cid, msg);
	teardown();
	return rc;
}
