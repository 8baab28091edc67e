/*
 * Unit tests of the supervisor's install step (src/supervisor/install.c)
 * driven outside a container with real child processes: an install that
 * fails leaves the processes unstarted and says so in health; a retry
 * that succeeds writes install.key and starts them; the key already
 * installed skips the install; a changed key installs again; a timeout
 * kills it.  The supervisor is its own binary, so its sources are
 * included here directly rather than linked.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/supervisor/appenv.c"
#include "../../src/supervisor/conf.c"
#include "../../src/supervisor/health.c"
#include "../../src/supervisor/install.c"
#include "../../src/supervisor/jw.c"
#include "../../src/supervisor/log.c"
#include "../../src/supervisor/logs.c"
#include "../../src/supervisor/proc.c"
#include "../../src/supervisor/procs.c"
#include "../../src/supervisor/sig.c"
#include "unit.h"

#define K1 "1111111111111111111111111111111111111111111111111111111111111111"
#define K2 "2222222222222222222222222222222222222222222222222222222222222222"

static char home[] = "/tmp/test_sup_install.XXXXXX";

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Applies text as run.conf. */
static int
apply(struct install *i, struct procs *p, const char *text)
{
	struct conf c;
	char err[256];
	int rc;

	CHECK(conf_parse(text, strlen(text), &c, err, sizeof(err)) == 0);
	rc = install_apply(i, p, &c, now_ms(), err, sizeof(err));
	conf_free(&c);
	return rc;
}

/* Waits (at most 10 s) for the install to end, reaping like main does. */
static void
wait_install(struct install *i, struct procs *p)
{
	long long end = now_ms() + 10000;
	pid_t pid;
	int status;

	while (i->state == INSTALL_RUNNING && now_ms() < end) {
		while (proc_reap(&pid, &status) == 1)
			if (!install_on_exit(i, p, pid, status, now_ms()))
				procs_on_exit(p, pid, status, now_ms());
		install_tick(i, p, now_ms());
		usleep(5000);
	}
	CHECK(i->state != INSTALL_RUNNING);
}

static const struct procs_entry *
entry(const struct procs *p, const char *name)
{
	for (size_t k = 0; k < p->n; k++)
		if (!p->e[k]->gone && strcmp(p->e[k]->rec.name, name) == 0)
			return p->e[k];
	return NULL;
}

static void
shutdown_all(struct procs *p)
{
	pid_t pid;
	int status;
	long long end = now_ms() + 5000;

	procs_halt(p, now_ms());
	procs_kill(p);
	while (now_ms() < end && proc_reap(&pid, &status) != -1)
		usleep(2000);
}

static void
install_state_machine(void)
{
	struct procs p;
	struct install i;
	char path[512], buf[256];
	const struct procs_entry *e;
	FILE *f;

	snprintf(path, sizeof(path), "%s/workspace/app", home);
	snprintf(buf, sizeof(buf), "mkdir -p %s/workspace/app %s/.sandboxd",
	         home, home);
	CHECK(system(buf) == 0);
	CHECK(procs_init(&p, home, 100) == 0);
	install_init(&i, home);

	/* Fails: nothing starts, health says why. */
	CHECK(apply(&i, &p,
	            "worker\tw\t0\tsleep 30\n"
	            "install\t30\t" K1 "\techo ran >> ../runs; "
	            "test -f ok\n") == 0);
	CHECK(i.state == INSTALL_RUNNING && i.pid > 0);
	CHECK(p.health.state == HEALTH_STARTING);
	CHECK_STR(p.health.detail, "installing dependencies");
	CHECK(entry(&p, "w") == NULL);
	CHECK(entry(&p, "install") == NULL);
	wait_install(&i, &p);
	CHECK(i.state == INSTALL_FAILED && i.exit_code == 1);
	CHECK(i.started_at_ms > 0 && i.ended_at_ms >= i.started_at_ms);
	CHECK(p.health.state == HEALTH_ERROR);
	CHECK(strstr(p.health.detail, "the install failed (exit 1)") != NULL);
	CHECK(entry(&p, "w") == NULL);
	CHECK(!install_key_matches(i.key_path, K1));

	/* Fixed, then retried (restart): the key is written, w starts. */
	snprintf(buf, sizeof(buf), "%s/ok", path);
	f = fopen(buf, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK(install_retry(&i, &p, now_ms()));
	wait_install(&i, &p);
	CHECK(i.state == INSTALL_DONE && i.exit_code == 0);
	CHECK(install_key_matches(i.key_path, K1));
	e = entry(&p, "w");
	CHECK(e != NULL && e->pid > 0);
	CHECK(!install_retry(&i, &p, now_ms()));

	/* The same record again: no install, w keeps running. */
	CHECK(apply(&i, &p,
	            "worker\tw\t0\tsleep 30\n"
	            "install\t30\t" K1 "\techo ran >> ../runs; "
	            "test -f ok\n") == 0);
	CHECK(i.state == INSTALL_DONE && i.pid == 0);
	CHECK(entry(&p, "w") == e && e->pending == PROCS_NONE);

	/* Another key: w is stopped, the install runs, w starts again. */
	CHECK(apply(&i, &p,
	            "worker\tw\t0\tsleep 30\n"
	            "install\t30\t" K2 "\techo ran >> ../runs\n") == 0);
	CHECK(i.state == INSTALL_RUNNING);
	wait_install(&i, &p);
	CHECK(i.state == INSTALL_DONE && install_key_matches(i.key_path, K2));
	snprintf(buf, sizeof(buf), "%s/workspace/runs", home);
	f = fopen(buf, "r");
	{
		int n = 0;
		char line[32];

		while (f && fgets(line, sizeof(line), f))
			n++;
		CHECK(n == 3); /* failed, retried, new key */
		if (f)
			fclose(f);
	}

	/* A new supervisor with the key installed: status done, no run. */
	install_release(&i);
	install_init(&i, home);
	CHECK(apply(&i, &p,
	            "worker\tw\t0\tsleep 30\n"
	            "install\t30\t" K2 "\tfalse\n") == 0);
	CHECK(i.state == INSTALL_DONE && i.exit_code == -1 && i.pid == 0);

	/* No install record: none. */
	CHECK(apply(&i, &p, "worker\tw\t0\tsleep 30\n") == 0);
	CHECK(i.state == INSTALL_NONE && i.rec.cmd == NULL);

	/* A timeout: SIGTERM to its group, failed. */
	CHECK(apply(&i, &p, "install\t1\t" K1 "\tsleep 20\n") == 0);
	CHECK(i.state == INSTALL_RUNNING);
	i.deadline = now_ms(); /* one second is long for a unit test */
	wait_install(&i, &p);
	CHECK(i.state == INSTALL_FAILED && i.timed_out);
	CHECK(strstr(p.health.detail, "timed out after 1 s") != NULL);
	{
		struct jw j;

		jw_init(&j, 4096);
		install_status(&i, &j);
		CHECK(j.p != NULL &&
		      strstr(j.p,
		             ",\"install\":{\"state\":\"failed\",\"key\":\"" K1
		             "\",\"exit_code\":143,") != NULL);
		jw_release(&j);
	}
	install_release(&i);
	shutdown_all(&p);
	procs_release(&p);
	snprintf(buf, sizeof(buf), "rm -rf %s", home);
	CHECK(system(buf) == 0);
}

static void
key_file_format(void)
{
	char dir[] = "/tmp/test_sup_key.XXXXXX", p[256], cmd[300];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/install.key", dir);
	CHECK(!install_key_matches(p, K1));
	f = fopen(p, "w");
	fputs(K1 "\n", f);
	fclose(f);
	CHECK(install_key_matches(p, K1));
	CHECK(!install_key_matches(p, K2));
	f = fopen(p, "w");
	fputs(K1, f);
	fclose(f);
	CHECK(install_key_matches(p, K1));
	f = fopen(p, "w");
	fputs(K1 "\n\n", f);
	fclose(f);
	CHECK(!install_key_matches(p, K1));
	unlink(p);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(!install_key_matches(p, K1)); /* and it returned */
	unlink(p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

int
main(void)
{
	static const struct unit_test tests[] = {
	    {"the install state machine", install_state_machine},
	    {"the key file", key_file_format},
	};

	CHECK(mkdtemp(home) != NULL);
	return UNIT_RUN("supervisor install", tests);
}
