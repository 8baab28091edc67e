/*
 * Unit tests of sandbox.yaml parsing: the documented schema is accepted,
 * every mistake is an error naming the field, and run.conf renders it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/installkey.h"
#include "sandbox/manifest.h"
#include "unit.h"

static int
parse(const char *text, struct manifest *m, char *err, size_t errlen)
{
	err[0] = '\0';
	return manifest_parse(text, strlen(text), m, err, errlen);
}

static void
full_manifest_parses(void)
{
	const char *y = "version: 1\n"
	                "web:\n"
	                "  command: npm run dev\n"
	                "  port: 3000\n"
	                "  health_path: /health\n"
	                "  restart_after_task: yes\n"
	                "workers:\n"
	                "  - name: queue\n"
	                "    command: node worker.js\n"
	                "    restart_after_task: true\n"
	                "  - name: cron-2\n"
	                "    command: sh -c 'sleep 60'\n"
	                "build:\n"
	                "  command: npm run build\n"
	                "  timeout_seconds: 90\n";
	struct manifest m;
	struct buf b;
	char err[256];

	CHECK(parse(y, &m, err, sizeof(err)) == 0);
	CHECK(m.has_web && m.web.port == 3000);
	CHECK_STR(m.web.health_path, "/health");
	CHECK(m.web.restart_after_task);
	CHECK(m.nworkers == 2);
	CHECK_STR(m.workers[1].name, "cron-2");
	CHECK(!m.workers[1].restart_after_task);
	CHECK(m.has_build && m.build_timeout_s == 90);
	buf_init(&b, 0);
	CHECK(manifest_runconf(&m, &b) == 0);
	CHECK_STR(b.data, "# sandboxd run.conf 1\n"
	                  "web\t3000\t/health\t1\tnpm run dev\n"
	                  "worker\tqueue\t1\tnode worker.js\n"
	                  "worker\tcron-2\t0\tsh -c 'sleep 60'\n"
	                  "build\t90\tnpm run build\n");
	buf_release(&b);
}

static void
expect_error(const char *yaml, const char *needle)
{
	struct manifest m;
	char err[256];

	CHECK(parse(yaml, &m, err, sizeof(err)) == -1);
	if (strstr(err, needle) == NULL) {
		fprintf(stderr, "  expected \"%s\" in \"%s\"\n", needle, err);
		unit_failed = 1;
	}
}

static void
mistakes_name_the_field(void)
{
	expect_error("web:\n  command: x\n", "web.port: is required");
	expect_error("web:\n  port: 3000\n", "web.command: is required");
	expect_error("web:\n  command: x\n  port: 70000\n", "web.port");
	expect_error("web:\n  command: x\n  port: \"3000\"\n", "web.port");
	expect_error("web:\n  command: x\n  port: abc\n", "web.port");
	expect_error("web:\n  comand: x\n  port: 3000\n",
	             "web.comand: unknown key");
	expect_error("webb:\n  command: x\n", "webb: unknown key");
	expect_error("version: 2\nweb:\n  command: x\n  port: 1\n", "version");
	expect_error("web:\n  command: x\n  port: 1\n  health_path: health\n",
	             "web.health_path");
	expect_error("web:\n  command: \"a\\nb\"\n  port: 1\n", "single line");
	expect_error("web:\n  command: \"a\\tb\"\n  port: 1\n", "tabs");
	expect_error("web:\n  command: x\n  port: 1\n  restart_after_task: "
	             "maybe\n",
	             "web.restart_after_task");
	expect_error("workers:\n  - command: x\n", "workers[0].name");
	expect_error("workers:\n  - name: Bad Name\n    command: x\n",
	             "workers[0].name");
	expect_error("workers:\n  - name: web\n    command: x\n",
	             "workers[0].name");
	expect_error("workers:\n  - name: a\n    command: x\n"
	             "  - name: a\n    command: y\n",
	             "used twice");
	expect_error("workers: 3\n", "workers: must be a list");
	expect_error("build:\n  timeout_seconds: 5\nweb:\n  command: x\n"
	             "  port: 1\n",
	             "build.command");
	expect_error("version: 1\n", "neither web nor workers");
	expect_error("", "empty");
	expect_error("web: [1, 2\n", "line");
	expect_error("- a\n- b\n", "mapping");
}

static void
install_parses_and_renders(void)
{
	const char *y = "web:\n"
	                "  command: npm run dev\n"
	                "  port: 5173\n"
	                "install:\n"
	                "  command: npm ci --no-audit\n"
	                "  inputs: [package.json, sub/dir/package-lock.json]\n"
	                "  timeout_seconds: 600\n";
	struct manifest m;
	struct buf b;
	char err[256];

	CHECK(parse(y, &m, err, sizeof(err)) == 0);
	CHECK(m.has_install && m.install_timeout_s == 600);
	CHECK_STR(m.install_command, "npm ci --no-audit");
	CHECK(m.install_inputs_set && m.ninstall_inputs == 2);
	CHECK_STR(m.install_inputs[1], "sub/dir/package-lock.json");
	buf_init(&b, 0);
	CHECK(manifest_runconf(&m, &b) == 0); /* no key yet: no record */
	CHECK(strstr(b.data, "install") == NULL);
	buf_release(&b);
	memset(m.install_key, 'a', 64);
	m.install_key[64] = '\0';
	buf_init(&b, 0);
	CHECK(manifest_runconf(&m, &b) == 0);
	CHECK(strstr(b.data, "\ninstall\t600\taaaa") != NULL);
	CHECK(strstr(b.data, "aaaa\tnpm ci --no-audit\n") != NULL);
	buf_release(&b);

	CHECK(parse("web:\n  command: x\n  port: 1\n"
	            "install:\n  command: pip install -r requirements.txt\n",
	            &m, err, sizeof(err)) == 0);
	CHECK(m.has_install && m.install_timeout_s == 900);
	CHECK(!m.install_inputs_set && m.ninstall_inputs == 0);
	CHECK(parse("web:\n  command: x\n  port: 1\n"
	            "install:\n  command: x\n  inputs: []\n",
	            &m, err, sizeof(err)) == 0);
	CHECK(m.install_inputs_set && m.ninstall_inputs == 0);
	CHECK(parse("web:\n  command: x\n  port: 1\n", &m, err, sizeof(err)) ==
	      0);
	CHECK(!m.has_install);
}

static void
install_mistakes_name_the_field(void)
{
	const char *w = "web:\n  command: x\n  port: 1\n";
	static const char *const bad[][2] = {
	    {"install:\n  inputs: [a]\n", "install.command: is required"},
	    {"install:\n  command: \"\"\n", "install.command: is empty"},
	    {"install:\n  command: \"a\\nb\"\n", "single line"},
	    {"install: npm ci\n", "install: must be a mapping"},
	    {"install:\n  command: x\n  input: [a]\n",
	     "install.input: unknown key"},
	    {"install:\n  command: x\n  timeout_seconds: 0\n",
	     "install.timeout_seconds"},
	    {"install:\n  command: x\n  timeout_seconds: 86401\n",
	     "install.timeout_seconds"},
	    {"install:\n  command: x\n  inputs: a\n", "install.inputs: must"},
	    {"install:\n  command: x\n  inputs: [../a]\n", "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [a, /etc/passwd]\n",
	     "install.inputs[1]"},
	    {"install:\n  command: x\n  inputs: [a/../b]\n",
	     "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [./a]\n", "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [a//b]\n", "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [a/]\n", "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [\"\"]\n", "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [[a]]\n", "install.inputs[0]"},
	    {"install:\n  command: x\n  inputs: [a,b,c,d,e,f,g,h,i]\n",
	     "install.inputs: more than 8"},
	};
	char y[1024], longp[300];

	expect_error("workers:\n  - name: install\n    command: x\n"
	             "install:\n  command: y\n",
	             "workers[0].name: \"install\" is the install step's");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(y, sizeof(y), "%s%s", w, bad[i][0]);
		expect_error(y, bad[i][1]);
	}
	memset(longp, 'a', 256);
	longp[256] = '\0';
	snprintf(y, sizeof(y), "%sinstall:\n  command: x\n  inputs: [%s]\n", w,
	         longp);
	expect_error(y, "install.inputs[0]: longer than 255");
	longp[255] = '\0';
	snprintf(y, sizeof(y), "%sinstall:\n  command: x\n  inputs: [%s]\n", w,
	         longp);
	{
		struct manifest m;
		char err[256];

		CHECK(parse(y, &m, err, sizeof(err)) == 0);
	}
}

static void
default_depends_on_package_json(void)
{
	struct manifest m;

	manifest_default(&m, 5173, true);
	CHECK_STR(m.web.command, "npm run dev");
	CHECK(m.web.port == 5173);
	manifest_default(&m, 3000, false);
	CHECK(strstr(m.web.command, "http.server 3000") != NULL);
}

static void
key_of(int appfd, const struct manifest *m, char out[65])
{
	CHECK(runtime_install_key(appfd, m, out) == 0);
	CHECK(strlen(out) == 64);
}

static void
install_key_follows_inputs(void)
{
	char dir[] = "/tmp/test_manifest.XXXXXX", p[512];
	char k1[65], k2[65], k3[65], k4[65];
	struct manifest m;
	char err[256];
	int appfd;

	CHECK(mkdtemp(dir) != NULL);
	appfd = open(dir, O_PATH | O_DIRECTORY);
	CHECK(parse("web:\n  command: x\n  port: 1\n"
	            "install:\n  command: npm ci\n",
	            &m, err, sizeof(err)) == 0);
	key_of(appfd, &m, k1); /* no input at all */
	unit_put(dir, "package.json", "{}\n");
	key_of(appfd, &m, k2);
	CHECK(strcmp(k1, k2) != 0);
	key_of(appfd, &m, k3); /* the same files: the same key */
	CHECK_STR(k2, k3);
	unit_put(dir, "package.json", "{\"a\":1}\n");
	key_of(appfd, &m, k3);
	CHECK(strcmp(k2, k3) != 0);
	unit_put(dir, "README.md", "not an input\n");
	key_of(appfd, &m, k4);
	CHECK_STR(k3, k4);
	snprintf(m.install_command, sizeof(m.install_command), "npm i");
	key_of(appfd, &m, k4);
	CHECK(strcmp(k3, k4) != 0);

	/* A FIFO or a link is "unreadable", at once, and not "absent". */
	m.install_inputs_set = true;
	m.ninstall_inputs = 1;
	snprintf(m.install_inputs[0], sizeof(m.install_inputs[0]), "q");
	key_of(appfd, &m, k1);
	snprintf(p, sizeof(p), "%s/q", dir);
	CHECK(mkfifo(p, 0600) == 0);
	key_of(appfd, &m, k2);
	CHECK(strcmp(k1, k2) != 0);
	unlink(p);
	CHECK(symlink("package.json", p) == 0);
	key_of(appfd, &m, k3);
	CHECK_STR(k2, k3);
	unlink(p);
	m.has_install = false;
	CHECK(runtime_install_key(appfd, &m, k1) == -1);
	CHECK(runtime_install_default_input("yarn.lock"));
	CHECK(!runtime_install_default_input("sub/yarn.lock"));
	close(appfd);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(system(p) == 0);
}

static void
publish_parses(void)
{
	const char *stat = "web:\n  command: npm run dev\n  port: 3000\n"
	                   "publish:\n  build: npm run build\n"
	                   "  output: dist\n  spa: true\n"
	                   "  timeout_seconds: 600\n";
	const char *server = "web:\n  command: node server.js\n  port: 3000\n"
	                     "  health_path: /health\n"
	                     "publish:\n  command: node server.js\n";
	const char *worker = "workers:\n  - name: w\n    command: node w.js\n"
	                     "publish:\n  command: node w.js\n";
	struct manifest m;
	char err[256];

	CHECK(parse("web:\n  command: x\n  port: 1\n", &m, err, sizeof(err)) ==
	      0);
	CHECK(!m.has_publish);
	CHECK(parse(stat, &m, err, sizeof(err)) == 0);
	CHECK(m.has_publish && m.publish.spa && m.publish.timeout_s == 600);
	CHECK_STR(m.publish.build, "npm run build");
	CHECK_STR(m.publish.output, "dist");
	CHECK_STR(m.publish.command, "");
	CHECK(m.publish.port == 0);
	/* A server takes web's port and health path. */
	CHECK(parse(server, &m, err, sizeof(err)) == 0);
	CHECK(m.has_publish && m.publish.port == 3000);
	CHECK_STR(m.publish.health_path, "/health");
	CHECK_STR(m.publish.output, "");
	CHECK_STR(m.publish.build, "");
	/* A worker: a server release without a port. */
	CHECK(parse(worker, &m, err, sizeof(err)) == 0);
	CHECK(m.has_publish && m.publish.port == 0);
	CHECK(parse("web:\n  command: x\n  port: 1\n"
	            "publish:\n  output: \".\"\n",
	            &m, err, sizeof(err)) == 0);
	CHECK_STR(m.publish.output, ".");
	CHECK(parse("web:\n  command: x\n  port: 1\n  health_path: /h\n"
	            "publish:\n  command: y\n  port: 8080\n",
	            &m, err, sizeof(err)) == 0);
	/* Another port than web's: its own health path, "/". */
	CHECK(m.publish.port == 8080);
	CHECK_STR(m.publish.health_path, "/");
}

static void
publish_mistakes_name_the_field(void)
{
	const char *web = "web:\n  command: x\n  port: 1\n";
	char y[512];

	snprintf(y, sizeof(y), "%spublish:\n  build: npm run build\n", web);
	expect_error(y, "publish: needs output");
	snprintf(y, sizeof(y), "%spublish:\n  output: d\n  command: c\n", web);
	expect_error(y, "not both");
	snprintf(y, sizeof(y), "%spublish:\n  output: ../etc\n", web);
	expect_error(y, "publish.output");
	snprintf(y, sizeof(y), "%spublish:\n  output: /srv\n", web);
	expect_error(y, "publish.output");
	snprintf(y, sizeof(y), "%spublish:\n  output: d\n  port: 3\n", web);
	expect_error(y, "for a server");
	snprintf(y, sizeof(y), "%spublish:\n  command: c\n  spa: true\n", web);
	expect_error(y, "publish.spa");
	snprintf(y, sizeof(y), "%spublish:\n  command: c\n  port: 0\n", web);
	expect_error(y, "publish.port");
	snprintf(y, sizeof(y),
	         "%spublish:\n  command: c\n  health_path: health\n", web);
	expect_error(y, "publish.health_path");
	snprintf(y, sizeof(y), "%spublish:\n  outptu: d\n", web);
	expect_error(y, "publish.outptu: unknown key");
	snprintf(y, sizeof(y),
	         "%spublish:\n  output: d\n  timeout_seconds: 0\n", web);
	expect_error(y, "publish.timeout_seconds");
	snprintf(y, sizeof(y), "%spublish: dist\n", web);
	expect_error(y, "publish: must be a mapping");
}

static void
templates_publish(void)
{
	static const struct {
		const char *name, *output, *command;
		int port;
	} want[] = {
	    {"react-vite", "dist", "", 0},
	    {"static", ".", "", 0},
	    {"node-express", "", "node server.js", 3000},
	    {"fastapi", "", "python3 -m uvicorn main:app", 3000},
	    {"nextjs", "", "npm run start -- -p 3000", 3000},
	    {"worker", "", "WORKER_STATUS_DIR=/tmp node worker.js", 0},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char path[128], text[8192], err[256];
		struct manifest m;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "image/templates/%s/sandbox.yaml",
		         want[i].name);
		f = fopen(path, "r");
		CHECK(f != NULL);
		if (f == NULL)
			continue;
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		CHECK(manifest_parse(text, n, &m, err, sizeof(err)) == 0);
		CHECK(m.has_publish);
		CHECK_STR(m.publish.output, want[i].output);
		CHECK(strncmp(m.publish.command, want[i].command,
		              strlen(want[i].command)) == 0);
		CHECK(m.publish.port == want[i].port);
	}
}

static const struct unit_test tests[] = {
    {"every template's sandbox.yaml says how it publishes", templates_publish},
    {"publish parses, a server's defaults are web's", publish_parses},
    {"publish mistakes name the field", publish_mistakes_name_the_field},
    {"a full manifest parses and renders", full_manifest_parses},
    {"mistakes name the field", mistakes_name_the_field},
    {"the default depends on package.json", default_depends_on_package_json},
    {"install parses and renders", install_parses_and_renders},
    {"install mistakes name the field", install_mistakes_name_the_field},
    {"the install key follows its inputs", install_key_follows_inputs},
};

int
main(void)
{
	return UNIT_RUN("manifest", tests);
}
