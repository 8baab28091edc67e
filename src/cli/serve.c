/*
 * serve: the daemon.  It wires the modules together in dependency order
 * and takes them down in reverse: every long-lived thread is started by
 * start_all and stopped by stop_all (docs/design.md, "Threads"), and
 * every periodic job is a row of one table run by lib/periodic.  Signals
 * are blocked in every thread and taken synchronously here with sigwait,
 * so no handler ever runs in the middle of anything.  The master keys
 * are loaded after the store is open (they are checked against what it
 * holds) and before anything can ask for a secret.
 *
 * Rejected: a thread per periodic job, as the reaper, the trash and the
 * disk usage each had (three copies of a one-second tick loop, each
 * stopped by a flag it polled once a second).
 */
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "api/server.h"
#include "cli/cli.h"
#include "cli/setup.h"
#include "cluster/cluster.h"
#include "config/config.h"
#include "cred/credentials.h"
#include "depcache/depcache.h"
#include "disk/dedup.h"
#include "recipe/recipe.h"
#include "disk/diskuse.h"
#include "docker/docker.h"
#include "edge/edge.h"
#include "git/git.h"
#include "lib/log.h"
#include "lib/periodic.h"
#include "orch/orch.h"
#include "publish/publish.h"
#include "publish/runner.h"
#include "preview/preview.h"
#include "preview/pvauth.h"
#include "proxy/proxy.h"
#include "reaper/reaper.h"
#include "sandbox/activity.h"
#include "sandbox/core.h"
#include "sandbox/runtime.h"
#include "sbnet/sbnet.h"
#include "snapshot/snapshot.h"
#include "store/store.h"
#include "task/task.h"
#include "terminal/terminal.h"
#include "timeline/timeline.h"
#include "trash/trash.h"
#include "vault/vault.h"
#include "wsnode/wsnode.h"

#define SERVE_JOBS 11 /* rows of the periodic jobs' table */

static void
wait_for_signal(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigwait(&set, &sig);
	log_info("received %s; shutting down", strsignal(sig));
}

/*
 * The edge may hold thousands of client and app connections: take the
 * hard limit on open files rather than the usual soft 1024.
 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
block_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* What serve() starts, so that stop_all() can take down what did. */
struct daemon {
	struct core core;
	struct api *api;
	struct edge *edge;
	struct proxy *proxy;
	struct cred_refresher *refresher;
	struct periodic_job jobs[SERVE_JOBS];
	struct periodic periodic;
	bool periodic_started;
	struct orch *orch; /* SANDBOXD_ORCHESTRATOR's driver */
	struct wsnode *wn; /* workspaces wherever their node is */
};

/*
 * The orchestrator (by the instance id, which labels what it makes) and
 * the workspaces' room, before core: core_init takes the one and
 * serve() hands it the other.
 */
static int
seam_make(struct daemon *d, const struct config *cfg, struct store *store,
          struct docker *docker)
{
	char instance[CORE_INSTANCE_LEN + 1];
	struct err e = {0};

	if (core_instance(store, instance) < 0 ||
	    orch_new(&d->orch, cfg, docker, store, instance, &e) < 0) {
		log_error("orchestrator %s: %s", cfg->orchestrator,
		          e.msg[0] ? e.msg : "cannot read the instance id");
		return -1;
	}
	if (wsnode_new(&d->wn, cfg, store) < 0) {
		log_error("cannot make the workspaces' handle");
		return -1;
	}
	log_info("orchestrator: %s", orch_name(d->orch));
	return 0;
}

/*
 * Swarm mode (SANDBOXD_ORCHESTRATOR=swarm): the cluster's handle (the
 * CA and the control plane's credentials, made at the first start), its
 * channel handed to the driver and the workspaces' room, before the
 * reconcile, which may ask the nodes.  It refuses an engine that is no
 * swarm manager, with the command that makes it one.  Docker mode makes
 * nothing: core.cluster stays NULL and the nodes API answers not_swarm.
 */
static int
cluster_make(struct daemon *d)
{
	struct core *c = &d->core;
	struct err e = {0};

	if (!orch_is_swarm(d->orch))
		return 0;
	if (cluster_new(&c->cluster, c, &e) < 0) {
		log_error("swarm mode: %s", e.msg);
		fprintf(stderr, "sandboxd: %s\n", e.msg);
		return -1;
	}
	orch_set_nodelink(d->orch, cluster_nodelink(c->cluster));
	wsnode_set_nodelink(d->wn, cluster_nodelink(c->cluster));
	return 0;
}

/* The cluster's server, heartbeats and journal: after the sandbox
 * network (an enrollment hands its figures out), before the API. */
static int
cluster_begin(struct core *c)
{
	struct err e = {0};

	if (c->cluster == NULL)
		return 0;
	if (cluster_start(c->cluster, &e) < 0) {
		log_error("swarm mode: %s", e.msg);
		return -1;
	}
	return 0;
}

/*
 * The periodic jobs (lib/periodic.h): the table below is every timer of
 * the daemon that is not a thread's own wait.  The reapers and the git
 * cache share the "reaper" lane (each pass is short or bounded by a
 * Docker stop); the trash purge and the disk-usage walks, which can take
 * seconds, get a lane each so they never hold back the pressure reaper.
 */
static void
job_pressure(void *arg)
{
	reaper_pressure_pass(arg);
}

static void
job_idle(void *arg)
{
	reaper_idle_pass(arg);
}

static void
job_git_trim(void *arg)
{
	(void)arg;
	gitws_cache_trim();
}

static void
job_trash(void *arg)
{
	trash_pass(arg);
}

static void
job_disk_usage(void *arg)
{
	diskuse_pass(arg);
}

/*
 * After a burst the heap keeps what it freed in pages among the live
 * blocks, where the top-of-heap trim cannot reach: 0.5 MiB after
 * bench/rss's load.  malloc_trim returns the free whole pages wherever
 * they are.  It runs when that much more lies free than after the last
 * trim (free blocks smaller than a page stay), so an idle daemon does not
 * walk its heap every second.
 */
#define SERVE_TRIM_FREE (256 * 1024) /* bytes freed since the last trim */

static void
job_heap_trim(void *arg)
{
	static size_t floor; /* free bytes after the last trim; lane only */
	size_t free_now = mallinfo2().fordblks;

	(void)arg;
	if (free_now < floor)
		floor = free_now;
	if (free_now >= floor + SERVE_TRIM_FREE) {
		malloc_trim(0);
		floor = mallinfo2().fordblks;
	}
}

/* The timeline's followers hear from a quiet stream this often. */
#define SERVE_EVENTS_HEARTBEAT_MS 15000

static void
job_events_heartbeat(void *arg)
{
	timeline_subs_heartbeat(arg, SERVE_EVENTS_HEARTBEAT_MS);
}

static void
job_events_prune(void *arg)
{
	struct core *c = arg;

	timeline_prune(c->tl, c->cfg->events_retention_days,
	               c->cfg->events_max_per_app);
}

/* The pending custom domains, checked again (DNS and HTTP waits: a
 * lane of its own). */
static void
job_domains(void *arg)
{
	publish_domain_pass(arg);
}

/* The published apps' production containers (publish/runner.c). */
static void
job_publish_health(void *arg)
{
	publish_health_pass(arg);
}

static void
job_releaselog_tick(void *arg)
{
	(void)arg;
	api_releaselog_tick();
}

static const int64_t events_beat_s = 5;
static const int64_t releaselog_tick_s = 1;
static const int64_t publish_health_s = RUNNER_HEALTH_PERIOD_S;
static const int64_t git_trim_s = GITWS_CACHE_TRIM_S;
static const int64_t heap_trim_s = 1;

/* name, lane, first run (s after start), period, job, its argument */
static void
jobs_fill(struct daemon *d)
{
	struct core *c = &d->core;
	const struct config *cfg = c->cfg;
	const struct periodic_job jobs[SERVE_JOBS] = {
	    {"pressure reaper", "reaper", cfg->pressure_interval_s,
	     &cfg->pressure_interval_s, job_pressure, c},
	    {"idle reaper", "reaper", cfg->idle_interval_s,
	     &cfg->idle_interval_s, job_idle, c},
	    {"git cache", "reaper", GITWS_CACHE_TRIM_S, &git_trim_s,
	     job_git_trim, NULL},
	    {"trash", "trash", 0, &cfg->trash_interval_s, job_trash, c},
	    {"disk usage", "disk", 2, &cfg->disk_usage_interval_s,
	     job_disk_usage, c->du},
	    {"heap trim", "reaper", 1, &heap_trim_s, job_heap_trim, NULL},
	    {"events heartbeat", "reaper", events_beat_s, &events_beat_s,
	     job_events_heartbeat, c->tl},
	    {"events prune", "trash", 5, &cfg->events_prune_s, job_events_prune,
	     c},
	    {"custom domains", "domains", cfg->domain_check_interval_s,
	     &cfg->domain_check_interval_s, job_domains, c},
	    {"publish health", "publish", RUNNER_HEALTH_PERIOD_S,
	     &publish_health_s, job_publish_health, c},
	    /* Its own lane: a slow reaper pass would hold back build logs. */
	    {"release logs", "logs", 1, &releaselog_tick_s, job_releaselog_tick,
	     NULL},
	};

	memcpy(d->jobs, jobs, sizeof(jobs));
}

static int
jobs_start(struct daemon *d)
{
	jobs_fill(d);
	if (periodic_start(&d->periodic, d->jobs, SERVE_JOBS) < 0) {
		log_error("cannot start the periodic jobs' threads");
		return -1;
	}
	d->periodic_started = true;
	return 0;
}

/* Publishing's handle and its recovery after a crash (publish/):
 * before the API and the edge, which call it. */
static int
publish_begin(struct core *c)
{
	if (publish_init(c) < 0 ||
	    core_hook_add(c, CORE_APP_DELETED, publish_app_gone) < 0)
		return -1;
	publish_recover(c);
	return 0;
}

/*
 * Every long-lived thread is started here, in dependency order, and
 * stopped by stop_all() in the reverse order (docs/design.md, "Threads").
 * Anything that fails leaves the rest unstarted; stop_all() copes.  The
 * handles of the network, dedup and disk-use modules are made first,
 * before any thread that reads them from the core runs.
 */
static int
start_all(struct daemon *d)
{
	struct core *c = &d->core;
	char err[256];

	if (recipe_load(err, sizeof(err)) < 0) { /* compiled in: a bug */
		log_error("the recipe table: %s", err);
		return -1;
	}
	if ((c->net = sbnet_new(c->cfg, c->docker, c->instance)) == NULL ||
	    (c->dedup = dedup_new(c->cfg)) == NULL ||
	    (c->dc = depcache_new(c->cfg, c->dedup)) == NULL ||
	    (c->du = diskuse_new(c->cfg, c->store, c->dedup)) == NULL)
		return -1;
	if (sbnet_start(c->net) < 0 || core_watch_start(c) < 0 ||
	    runtime_start(c) < 0 || dedup_start(c->dedup) < 0 ||
	    depcache_start(c->dc) < 0 || task_init(c) < 0 ||
	    jobs_start(d) < 0 ||
	    core_hook_add(c, CORE_SANDBOX_DELETED, task_forget_sandbox) < 0 ||
	    publish_begin(c) < 0 || cluster_begin(c) < 0 ||
	    api_start(&d->api, c) < 0 || proxy_start(&d->proxy, c) < 0 ||
	    cred_refresher_start(&d->refresher, c->store, c->cfg) < 0 ||
	    preview_init(c) < 0 || edge_start(&d->edge, c) < 0)
		return -1;
	return 0;
}

/*
 * The reverse of start_all, each thread joined before the next stops.
 * One exception: the tasks end their event streams before the API
 * stops, since libmicrohttpd waits for the suspended connections.  The
 * first stop sets core.stopping, which every core loop watches.
 * Wake threads (preview.c) are detached and short; the wake table goes
 * last, then the module handles start_all made.
 */
static void
stop_all(struct daemon *d)
{
	struct core *c = &d->core;

	edge_stop(d->edge);
	cluster_stop(c->cluster); /* its threads; the handle until the end */
	cred_refresher_stop(d->refresher);
	proxy_stop(d->proxy);
	task_shutdown(c); /* ends event streams, so the API can stop */
	timeline_subs_end_all(c->tl); /* the same for the timeline's */
	api_releaselog_end_all();     /* and the build logs' */
	api_stop(d->api);
	/* A disk-usage walk in flight ends at its next workspace. */
	diskuse_stop(c->du);
	c->stopping = true;
	if (d->periodic_started)
		periodic_stop(&d->periodic);
	d->periodic_started = false;
	publish_stop(c); /* its builds fail and are joined */
	activity_flush(c->act, c->store);
	depcache_stop(c->dc); /* a save in flight waits on the dedup thread */
	dedup_stop(c->dedup);
	runtime_stop(c);
	core_watch_stop(c);
	sbnet_stop(c->net);
	task_free(c);
	preview_release(c);
	diskuse_free(c->du);
	depcache_free(c->dc);
	dedup_free(c->dedup);
	sbnet_free(c->net);
	c->du = NULL;
	c->dc = NULL;
	c->dedup = NULL;
	c->net = NULL;
}

/* What serve() made on core, once the API is stopped (no caller left). */
static void
core_teardown(struct core *c)
{
	cluster_free(c->cluster);
	terminal_free(c->term);
	pvauth_release(c);
	runtime_free(c);
	core_release(c);
	timeline_free(c->tl);
}

/*
 * glibc's malloc, set for a daemon that is idle most of the time and
 * bursts now and then (bench/rss, docs/design.md "Memory"): one arena.
 * Each thread that mallocs otherwise gets an arena of its own (up to 8
 * per core), and each keeps the high-water mark of what its thread ever
 * held: libnftables' context (a few MiB, made and freed for each rule
 * change and refusal count) left ~4 MiB in every API worker's arena after
 * a burst of sandbox creates.  The per-thread cache (tcache) serves most
 * small allocations without taking the arena's lock.
 *
 * Rejected: a fixed mmap threshold (which stops glibc from raising it to
 * the size of freed mmap'd blocks).  It kept those few MiB out of the
 * heap, but libnftables then maps and unmaps a 2 MiB buffer and dozens of
 * 128 KiB tables per command: 20 to 50 ms a command instead of 1, on
 * every sandbox create and GET.  Running libnftables in a forked child
 * cost as much.
 */
#define SERVE_MALLOC_ARENAS 1

static void
tune_malloc(void)
{
	mallopt(M_ARENA_MAX, SERVE_MALLOC_ARENAS);
}

/*
 * Where the console is, as a browser reaches it: the edge's console host
 * on HTTP_PORT (the port left out when it is the scheme's own), https
 * when the edge sits behind TLS (SANDBOXD_PREVIEW_TLS).
 */
static void
print_console(const struct config *cfg)
{
	char port[16] = "";

	if (cfg->http_port != (cfg->preview_tls ? 443 : 80))
		snprintf(port, sizeof(port), ":%u", (unsigned)cfg->http_port);
	printf("Console: %s://console.%s%s/\n",
	       cfg->preview_tls ? "https" : "http", cfg->preview_domain, port);
}

int
serve(void)
{
	struct store *store = NULL;
	struct docker *docker = NULL;
	struct vault *vault = NULL;
	struct daemon d = {0};
	struct config cfg;
	char err[512], msg[DOCKER_MSG_LEN], how[PATH_MAX];
	int rc = 1;

	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	tune_malloc();
	block_signals();
	raise_nofile();
	if (vault_init() < 0 || cli_open_store(&cfg, &store) < 0 ||
	    cli_lock_secrets(&cfg, false) < 0 ||
	    cli_open_vault(&cfg, store, false, &vault, how, sizeof(how)) < 0 ||
	    docker_new(&docker, cfg.docker_socket) < 0)
		goto out;
	cli_forget_key_text(&cfg);
	if (cfg.data_dir_legacy)
		log_info("using the legacy data directory %s (it exists and "
		         "/var/lib/sandboxd does not)",
		         cfg.data_dir);
	log_info("sandboxd %s, data in %s", SANDBOXD_VERSION, cfg.data_dir);
	log_info("secrets: sealed with key %s (%s)", vault_key_id(vault, 0),
	         how);
	/* core, then what sits on it: the runtime's handle and private
	 * previews, which forget a deleted app by core's hook. */
	if (seam_make(&d, &cfg, store, docker) < 0)
		goto out;
	if (core_init(&d.core, &cfg, store, docker, d.orch) < 0 ||
	    (d.core.wn = d.wn) == NULL ||
	    (d.core.tl = timeline_new(store)) == NULL ||
	    runtime_init(&d.core) < 0 || pvauth_init(&d.core) < 0 ||
	    terminal_init(&d.core.term, &d.core) < 0 ||
	    core_hook_add(&d.core, CORE_SANDBOX_STOPPING,
	                  terminal_sandbox_stopping) < 0 ||
	    core_hook_add(&d.core, CORE_APP_DELETED, pvauth_drop) < 0 ||
	    core_hook_add(&d.core, CORE_APP_DELETED, snapshot_app_gone) < 0 ||
	    cluster_make(&d) < 0)
		goto out_core;
	/* Interrupted trash moves and snapshots first: reconcile then sees
	 * whole rows and whole workspaces. */
	trash_recover(&d.core);
	snapshot_recover(&d.core);
	if (docker_ping(docker, msg) == DOCKER_OK)
		core_reconcile(&d.core);
	else
		log_warn("%s; sandbox calls answer 503 until it is back", msg);
	if (start_all(&d) == 0) {
		printf("sandboxd listening on http://%s\n", cfg.api_addr);
		printf(
		    "previews at http://s-<sandbox id>-<port>.preview.%s:%u\n",
		    cfg.preview_domain, cfg.http_port);
		print_console(&cfg);
		fflush(stdout);
		log_info("listening on http://%s; previews on %s:%u",
		         cfg.api_addr, cfg.edge_addr, (unsigned)cfg.edge_port);
		wait_for_signal();
		rc = 0;
	}
	stop_all(&d);
out_core:
	core_teardown(&d.core);
out:
	wsnode_free(d.wn);
	orch_free(d.orch);
	store_close(store);
	vault_free(vault);
	docker_free(docker);
	config_release(&cfg);
	return rc;
}
