/*
 * `sandboxd doctor` (doctor.h): each check looks at one thing the seeds'
 * troubleshooting steps look at by hand, and says what to do.  Nothing
 * here changes anything.  The checks that need the daemon (the proxy,
 * the network) ask a running one over its API (GET /v1/status with the
 * first token of SANDBOXD_API_TOKENS); the rest look at the host
 * directly: the engine's socket, /proc, the filesystem, nftables.
 * Every outside call is bounded: the engine and the API by their
 * timeouts, programs (docker compose version) by a pipe read with a
 * deadline, the /proc scan by its entries.  The checks are the rows of
 * checks[], run in its order; the pure parts are in doctor_rules.c.
 */
#include "ops/doctor.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#include "docker/docker.h"
#include "egress/egress.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/jv.h"
#include "lib/meminfo.h"
#include "lib/num.h"
#include "net/http.h"
#include "store/backup.h"
#include "ws/usage.h"
#include "ws/workspace.h"

#define DOCTOR_PROGRAM_TIMEOUT_MS 5000   /* docker compose version */
#define DOCTOR_PROC_SCAN_MAX      100000 /* /proc/<pid>/fd entries read */
#define DOCTOR_STATUS_BYTES       65536  /* GET /v1/status answer */
#define DOCTOR_CLOCK_WARN_S       5
#define DOCTOR_CLOCK_FAIL_S       60

static struct doctor_check *
add(struct doctor_report *r, const char *name)
{
	struct doctor_check *c =
	    &r->c[r->n < DOCTOR_CHECKS_MAX ? r->n++ : r->n - 1];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

#define SAY(c, lvl, ...)                                                       \
	do {                                                                   \
		(c)->level = (lvl);                                            \
		snprintf((c)->msg, sizeof((c)->msg), __VA_ARGS__);             \
	} while (0)
#define FIX(c, ...) snprintf((c)->fix, sizeof((c)->fix), __VA_ARGS__)

/* --- helpers ------------------------------------------------------------- */

/*
 * Runs argv (its first word looked up in PATH) and keeps the first line
 * of its standard output; 0 when it exited 0 within the deadline.
 */
static int
capture(char *const argv[], char *out, size_t len)
{
	posix_spawn_file_actions_t fa;
	int p[2], st, rc = -1;
	size_t n = 0;
	pid_t pid;
	int64_t end = clock_mono_ms() + DOCTOR_PROGRAM_TIMEOUT_MS;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int64_t left = end - clock_mono_ms();
		ssize_t r;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		r = read(p[0], out + n, len - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == len - 1)
			break;
	}
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		rc = 0;
	return rc;
}

/* The process that holds socket inode ino (name and pid), bounded. */
static bool
socket_owner(unsigned long ino, char *name, size_t len, long *pid_out)
{
	char want[48], path[64], link[64];
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	long scanned = 0;
	bool found = false;

	if (proc == NULL)
		return false;
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	while (!found && (pe = readdir(proc)) != NULL &&
	       scanned < DOCTOR_PROC_SCAN_MAX) {
		struct dirent *fe;
		DIR *fds;

		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/fd", pe->d_name);
		if ((fds = opendir(path)) == NULL)
			continue;
		while (!found && (fe = readdir(fds)) != NULL &&
		       scanned++ < DOCTOR_PROC_SCAN_MAX) {
			ssize_t l;
			snprintf(path, sizeof(path), "/proc/%.16s/fd/%.16s",
			         pe->d_name, fe->d_name);
			l = readlink(path, link, sizeof(link) - 1);
			if (l > 0 && (link[l] = '\0', strcmp(link, want) == 0))
				found = true;
		}
		closedir(fds);
		if (found) {
			FILE *f;
			*pid_out = num_long(pe->d_name, -1);
			snprintf(path, sizeof(path), "/proc/%.16s/comm",
			         pe->d_name);
			snprintf(name, len, "?");
			if ((f = fopen(path, "re")) != NULL) {
				if (fgets(name, (int)len, f))
					name[strcspn(name, "\n")] = '\0';
				fclose(f);
			}
		}
	}
	closedir(proc);
	return found;
}

/* pid runs sandboxd: by its name, or the same program as this one. */
static bool
is_sandboxd(long pid, const char *comm)
{
	char path[64], exe[PATH_MAX], self[PATH_MAX];
	ssize_t a, b;

	if (strcmp(comm, "sandboxd") == 0)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	a = readlink(path, exe, sizeof(exe) - 1);
	b = readlink("/proc/self/exe", self, sizeof(self) - 1);
	return a > 0 && a == b && memcmp(exe, self, (size_t)a) == 0;
}

/* The inode of a socket listening on TCP port, 0 when none. */
static unsigned long
listener(unsigned port)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char line[512];
	unsigned p;
	unsigned long ino;

	for (size_t i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f))
			if (doctor_tcp_listen_line(line, &p, &ino) &&
			    p == port) {
				fclose(f);
				return ino ? ino : 1;
			}
		fclose(f);
	}
	return 0;
}

/* --- the checks ---------------------------------------------------------- */

struct ctx {
	const struct config *cfg;
	struct docker *docker;
	bool engine_up;
	struct store_db_info db;
	bool have_db;
	char image_id[80];
	int running, stale, ours;
	char stale_image[80];
	enum doctor_level disk; /* for the trash's check */
	/* The running daemon's GET /v1/status, read by the proxy's check
	 * for the network's: 0 no daemon answers, else its HTTP status. */
	bool daemon_up;
	long status_code;
	struct jv *status;
};

static void
check_engine(struct ctx *x, struct doctor_check *c)
{
	char msg[DOCKER_MSG_LEN];

	if (docker_new(&x->docker, x->cfg->docker_socket) < 0) {
		SAY(c, DOCTOR_FAIL, "cannot make a Docker client");
		return;
	}
	if (docker_ping(x->docker, msg) != DOCKER_OK) {
		SAY(c, DOCTOR_FAIL, "%s", msg);
		FIX(c, "start the engine (systemctl start docker) or point "
		       "DOCKER_HOST at its socket");
		return;
	}
	x->engine_up = true;
	SAY(c, DOCTOR_OK, "the Docker engine answers at %s",
	    x->cfg->docker_socket);
}

static void
check_compose(struct ctx *x, struct doctor_check *c)
{
	char *const plugin[] = {"docker", "compose", "version", "--short",
	                        NULL};
	char *const v1[] = {"docker-compose", "version", "--short", NULL};
	char out[128];

	(void)x;
	if (capture(plugin, out, sizeof(out)) == 0 &&
	    doctor_compose_major(out) >= 2) {
		SAY(c, DOCTOR_OK, "docker compose %s (the plugin)", out);
		return;
	}
	if (capture(v1, out, sizeof(out)) == 0) {
		int major = doctor_compose_major(out);
		if (major >= 2) {
			SAY(c, DOCTOR_OK, "docker-compose %s", out);
			return;
		}
		SAY(c, DOCTOR_WARN, "only docker-compose %s (v1) is installed",
		    out[0] ? out : "?");
		FIX(c, "v1 works with install.sh (its fallback); the compose "
		       "plugin (docker compose, v2) is the supported one: "
		       "install docker-compose-plugin");
		return;
	}
	SAY(c, DOCTOR_WARN,
	    "neither `docker compose` nor docker-compose "
	    "is installed");
	FIX(c, "needed only for the compose deployment (install.sh): install "
	       "the compose plugin or docker-compose; scripts/run and a "
	       "native install do without");
}

static void
check_port(struct doctor_check *c, unsigned port, const char *what)
{
	unsigned long ino = listener(port);
	char who[64] = "";
	long pid = 0;

	if (ino == 0) {
		SAY(c, DOCTOR_OK, "port %u (%s) is free", port, what);
		return;
	}
	if (!socket_owner(ino, who, sizeof(who), &pid)) {
		SAY(c, DOCTOR_WARN,
		    "port %u (%s) is taken by a process this user cannot see",
		    port, what);
		FIX(c, "run doctor as root to name it (ss -ltnp 'sport = :%u')",
		    port);
		return;
	}
	if (is_sandboxd(pid, who)) {
		SAY(c, DOCTOR_OK, "port %u (%s) is sandboxd's own (pid %ld)",
		    port, what, pid);
		return;
	}
	SAY(c, DOCTOR_FAIL, "port %u (%s) is taken by %s (pid %ld)", port, what,
	    who, pid);
	if (strcmp(who, "docker-proxy") == 0)
		FIX(c, "a container publishes it (Traefik of the compose "
		       "deployment?): with Traefik in front, set HTTP_PORT to "
		       "another port; else stop that container");
	else
		FIX(c,
		    "stop %s (systemctl stop %s) or set HTTP_PORT to a free "
		    "port",
		    who, who);
}

static void
note_container(const struct docker_container *dc, void *arg)
{
	struct ctx *x = arg;

	if (!x->have_db || strcmp(dc->instance, x->db.instance) != 0 ||
	    dc->sandbox[0] == '\0')
		return;
	x->ours++;
	if (strcmp(dc->state, "running") == 0)
		x->running++;
	if (x->image_id[0] && strcmp(dc->image_id, x->image_id) != 0) {
		x->stale++;
		snprintf(x->stale_image, sizeof(x->stale_image), "%s",
		         dc->image_id);
	}
}

static void
check_image(struct ctx *x, struct doctor_check *c)
{
	const char *name = x->cfg->image;
	char msg[DOCKER_MSG_LEN];
	int rc;

	if (!x->engine_up) {
		SAY(c, DOCTOR_WARN, "not checked: the engine is not reachable");
		return;
	}
	rc = docker_image_id(x->docker, name, x->image_id, msg);
	docker_containers_all(x->docker, note_container, x, msg);
	if (rc == DOCKER_NOT_FOUND) {
		SAY(c, DOCTOR_FAIL, "the sandbox image %s is missing", name);
		FIX(c, "build it: make image (scripts/build-image), or set "
		       "SANDBOXD_IMAGE to an image the engine has");
		return;
	}
	if (rc != DOCKER_OK) {
		SAY(c, DOCTOR_WARN, "%s", msg);
		return;
	}
	if (x->stale) {
		SAY(c, DOCTOR_WARN,
		    "%d of %d sandbox containers use image %.19s, not %s "
		    "(%.19s)",
		    x->stale, x->ours, x->stale_image, name, x->image_id);
		FIX(c, "their containers predate the image (an upgrade "
		       "rebuilt it); each gets the configured image when its "
		       "container is made again; run `sandboxd gc` after");
		return;
	}
	SAY(c, DOCTOR_OK, "%s is %.19s; %d sandbox container%s use it", name,
	    x->image_id, x->ours, x->ours == 1 ? "" : "s");
}

static size_t
collect(const char *p, size_t n, void *arg)
{
	return buf_append(arg, p, n) < 0 ? 0 : n;
}

/* GET path of the running daemon; the HTTP status (0: no answer). */
static long
api_get(const struct config *cfg, const char *path, struct buf *body)
{
	char url[256], auth[600];
	const char *hdr[] = {auth, NULL};
	const char *host = cfg->api_host;
	struct http_call h = {0};

	if (strcmp(host, "0.0.0.0") == 0)
		host = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		host = "::1";
	snprintf(url, sizeof(url),
	         strchr(host, ':') ? "http://[%s]:%u%s" : "http://%s:%u%s",
	         host, cfg->api_port, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
	         cfg->ntokens ? cfg->tokens[0].secret : "");
	h.method = "GET";
	h.url = url;
	h.headers = cfg->ntokens ? hdr : NULL;
	h.connect_timeout_ms = 2000;
	h.timeout_s = 5;
	h.on_body = collect;
	h.arg = body;
	http_perform(&h);
	explicit_bzero(auth, sizeof(auth));
	return h.status;
}

/* The running daemon's /v1/status into x (none: no daemon, refused). */
static void
status_read(struct ctx *x)
{
	struct buf b;
	char err[128];

	buf_init(&b, DOCTOR_STATUS_BYTES);
	if (api_get(x->cfg, "/healthz", &b) != 200)
		goto out;
	x->daemon_up = true;
	buf_reset(&b);
	x->status_code = api_get(x->cfg, "/v1/status", &b);
	if (x->status_code == 200)
		x->status =
		    jv_parse(b.data ? b.data : "", b.len, 16, err, sizeof(err));
out:
	buf_release(&b);
}

static void
check_proxy(struct ctx *x, struct doctor_check *c)
{
	struct jv *px;

	status_read(x);
	if (!x->daemon_up) {
		SAY(c, DOCTOR_WARN,
		    "no daemon answers at %s: the credential "
		    "proxy runs only with it",
		    x->cfg->api_addr);
		FIX(c, "start it (sandboxd serve, systemctl start sandboxd or "
		       "docker compose up -d) and run doctor again");
		return;
	}
	if (x->status == NULL) {
		SAY(c, DOCTOR_WARN,
		    "the daemon runs, but GET /v1/status answered %ld",
		    x->status_code);
		FIX(c, "put the API token in SANDBOXD_API_TOKENS (.env) so "
		       "doctor can read the status");
		return;
	}
	px = jv_get(x->status, "proxy");
	if (jv_is_true(jv_get(px, "listening")))
		SAY(c, DOCTOR_OK, "the credential proxy listens at %s",
		    jv_str(jv_get(px, "url")) ? jv_str(jv_get(px, "url"))
		                              : "?");
	else {
		SAY(c, DOCTOR_FAIL, "the credential proxy does not listen: %s",
		    jv_str(jv_get(px, "error")) ? jv_str(jv_get(px, "error"))
		                                : "no reason given");
		FIX(c, "tasks cannot reach their model until it does: see the "
		       "daemon's log; SANDBOXD_PROXY_ADDR must be an address "
		       "of this host (empty: the sandbox network's gateway)");
	}
}

/* After check_proxy, from the status it read. */
static void
check_network(struct ctx *x, struct doctor_check *n)
{
	struct jv *net = jv_get(x->status, "network");

	if (!x->daemon_up || x->status == NULL) {
		SAY(n, DOCTOR_WARN, "not checked: %s",
		    x->daemon_up ? "no status" : "no daemon runs");
		return;
	}
	if (jv_is_true(jv_get(net, "ready")))
		SAY(n, DOCTOR_OK, "the sandbox network %s is ready",
		    jv_str(jv_get(net, "name")) ? jv_str(jv_get(net, "name"))
		                                : "");
	else {
		SAY(n, DOCTOR_FAIL, "the sandbox network is not ready: %s",
		    jv_str(jv_get(net, "error")) ? jv_str(jv_get(net, "error"))
		                                 : "no reason given");
		FIX(n, "see the daemon's log and `sandboxd network show`");
	}
}

static void
check_egress(struct ctx *x, struct doctor_check *c)
{
	char table[EGRESS_TABLE_LEN];

	if (strcmp(x->cfg->network, "none") == 0) {
		SAY(c, DOCTOR_OK,
		    "SANDBOXD_NETWORK=none: sandboxes have no "
		    "network");
		return;
	}
	if (x->cfg->egress_mode == EGRESS_OPEN) {
		SAY(c, DOCTOR_WARN,
		    "SANDBOXD_EGRESS=open: sandboxes reach "
		    "your network and this host");
		FIX(c, "set SANDBOXD_EGRESS=public (the default) unless you "
		       "mean it");
		return;
	}
	if (geteuid() != 0) {
		SAY(c, DOCTOR_WARN, "not checked: reading nftables needs root");
		FIX(c, "run doctor as root");
		return;
	}
	egress_table_name(x->cfg->network, table);
	if (egress_installed(table)) {
		SAY(c, DOCTOR_OK, "nft table inet %s is installed (%s)", table,
		    egress_mode_name((enum egress_mode)x->cfg->egress_mode));
		return;
	}
	SAY(c, DOCTOR_FAIL,
	    "nft table inet %s is missing: sandboxes would "
	    "reach private networks",
	    table);
	FIX(c,
	    "the daemon installs it at start: start it, or see its log "
	    "(`nft list table inet %s`, `sandboxd network show`)",
	    table);
}

static void
check_disk(struct ctx *x, struct doctor_check *c)
{
	char path[PATH_MAX];
	struct statvfs vf;
	uint64_t free_b, total;
	char *slash;

	/* Not made yet: the filesystem it will be made on. */
	snprintf(path, sizeof(path), "%s", x->cfg->data_dir);
	while (statvfs(path, &vf) < 0) {
		if ((slash = strrchr(path, '/')) == NULL || slash == path) {
			SAY(c, DOCTOR_WARN, "%s: %s", x->cfg->data_dir,
			    strerror(errno));
			x->disk = c->level;
			return;
		}
		*slash = '\0';
	}
	free_b = (uint64_t)vf.f_bavail * vf.f_frsize;
	total = (uint64_t)vf.f_blocks * vf.f_frsize;
	SAY(c, doctor_disk_level(free_b, total),
	    "%llu MiB free of %llu MiB on the data filesystem (%s)",
	    (unsigned long long)(free_b >> 20),
	    (unsigned long long)(total >> 20), x->cfg->data_dir);
	x->disk = c->level;
	if (c->level != DOCTOR_OK)
		FIX(c, "free space: `sandboxd gc` (unused images), `docker "
		       "system df`, delete apps you do not need (node_modules "
		       "per app adds up)");
}

/*
 * The trash of deleted apps (<data>/trash/kept): what it holds.  A warn
 * only when the disk is short as well (the trash is room to win back).
 */
static void
check_trash(struct ctx *x, struct doctor_check *c)
{
	char path[PATH_MAX + 32];
	int64_t bytes = 0;
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/trash/" WORKSPACE_KEPT_DIR,
	         x->cfg->data_dir);
	if ((d = opendir(path)) != NULL) {
		char entry[PATH_MAX + 300];
		while ((de = readdir(d)) != NULL) {
			int64_t b;
			if (de->d_name[0] == '.')
				continue;
			snprintf(entry, sizeof(entry), "%s/%s", path,
			         de->d_name);
			b = ws_usage_walk(entry, NULL);
			bytes += b > 0 ? b : 0;
			n++;
		}
		closedir(d);
	}
	SAY(c, n && x->disk != DOCTOR_OK ? DOCTOR_WARN : DOCTOR_OK,
	    "%d deleted app%s in the trash, %lld MiB; kept %lld s "
	    "(SANDBOXD_TRASH_RETENTION_SECONDS)",
	    n, n == 1 ? "" : "s", (long long)(bytes >> 20),
	    (long long)x->cfg->trash_retention_s);
	if (c->level != DOCTOR_OK)
		FIX(c, "the disk is short: `sandboxd trash` lists them, "
		       "`sandboxd trash purge ID` removes one now");
}

static void
check_memory(struct ctx *x, struct doctor_check *c)
{
	long long total_kb, avail_kb;
	int64_t avail, total;

	meminfo_host_kb(&total_kb, &avail_kb);
	avail = avail_kb < 0 ? -1 : avail_kb / 1024;
	total = total_kb < 0 ? -1 : total_kb / 1024;
	if (avail < 0 || total <= 0) {
		SAY(c, DOCTOR_WARN, "cannot read /proc/meminfo");
		return;
	}
	SAY(c,
	    doctor_mem_level(avail, total, x->cfg->memory_mb,
	                     x->cfg->mem_headroom_pct),
	    "%lld MiB available of %lld MiB; %d sandbox%s running, each "
	    "allowed %lld MiB",
	    (long long)avail, (long long)total, x->running,
	    x->running == 1 ? "" : "es", (long long)x->cfg->memory_mb);
	if (c->level != DOCTOR_OK)
		FIX(c,
		    "stop sandboxes you do not use, lower "
		    "SANDBOXD_MEMORY_MB, or add memory/swap; the pressure "
		    "reaper stops sandboxes below SANDBOXD_MEM_HEADROOM_PCT");
}

static void
check_clock(struct ctx *x, struct doctor_check *c)
{
	char t[64], msg[DOCKER_MSG_LEN];
	struct timex tx = {0};
	int64_t engine, skew;
	bool synced = adjtimex(&tx) != TIME_ERROR;

	if (!x->engine_up ||
	    docker_system_time(x->docker, t, msg) != DOCKER_OK ||
	    (engine = doctor_parse_time(t)) < 0) {
		SAY(c, synced ? DOCTOR_OK : DOCTOR_WARN,
		    "the kernel says the clock is %ssynchronised (the engine's "
		    "clock was not read)",
		    synced ? "" : "not ");
		if (!synced)
			FIX(c, "enable NTP (timedatectl set-ntp true, chrony "
			       "or systemd-timesyncd): certificates need the "
			       "right time");
		return;
	}
	skew = engine - clock_now();
	if (skew < 0)
		skew = -skew;
	if (skew > DOCTOR_CLOCK_FAIL_S)
		c->level = DOCTOR_FAIL;
	else if (skew > DOCTOR_CLOCK_WARN_S || !synced)
		c->level = DOCTOR_WARN;
	snprintf(c->msg, sizeof(c->msg),
	         "this clock and the engine's differ by %lld s; the kernel "
	         "says it is %ssynchronised",
	         (long long)skew, synced ? "" : "not ");
	if (c->level != DOCTOR_OK)
		FIX(c, "enable NTP on this host (and the engine's, if it is "
		       "another): TLS certificates and Let's Encrypt need the "
		       "right time");
}

static void
check_datadir(struct ctx *x, struct doctor_check *c)
{
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/workspaces", x->cfg->data_dir);
	if (stat(path, &st) < 0) {
		SAY(c, DOCTOR_WARN, "%s does not exist yet", path);
		FIX(c, "the first start makes it");
		return;
	}
	/* Every directory from / down to workspaces/. */
	for (char *p = path + 1;; p++) {
		bool last = *p == '\0';
		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (stat(path, &st) == 0 &&
		    !doctor_can_traverse(st.st_mode, st.st_uid, st.st_gid,
		                         WORKSPACE_UID, WORKSPACE_GID)) {
			SAY(c, DOCTOR_FAIL,
			    "uid %d cannot pass through %s (mode %04o, owner "
			    "%d:%d): sandboxes cannot reach their workspace",
			    WORKSPACE_UID, path, (unsigned)(st.st_mode & 07777),
			    (int)st.st_uid, (int)st.st_gid);
			FIX(c,
			    "chmod o+x %s (or move SANDBOXD_DATA_DIR out "
			    "from under it)",
			    path);
			return;
		}
		if (last)
			break;
		*p = '/';
	}
	SAY(c, DOCTOR_OK, "uid %d can reach %s/workspaces", WORKSPACE_UID,
	    x->cfg->data_dir);
}

/* HTTP_PORT's row is named port-443 when it is 443, as HTTPS's is. */
static void
check_http_port(struct ctx *x, struct doctor_check *c)
{
	if (x->cfg->http_port == 443)
		snprintf(c->name, sizeof(c->name), "port-443");
	check_port(c, x->cfg->http_port, "HTTP_PORT, the preview edge");
}

static void
check_https_port(struct ctx *x, struct doctor_check *c)
{
	(void)x;
	check_port(c, 443, "HTTPS");
}

static bool
wants_https(const struct ctx *x)
{
	return x->cfg->preview_tls && x->cfg->http_port != 443;
}

static bool
wants_swarm(const struct ctx *x)
{
	return strcmp(x->cfg->orchestrator, "swarm") == 0;
}

/* The rows in order, each run only if its when says so; a check uses
 * what one above left in ctx, one of another file only cfg. */
static const struct check {
	const char *name;
	void (*run)(struct ctx *x, struct doctor_check *c);
	bool (*when)(const struct ctx *x);
	void (*alone)(const struct config *cfg, struct doctor_check *c);
} checks[] = {
    {"engine", check_engine, NULL, NULL},
    {"compose", check_compose, NULL, NULL},
    {"port", check_http_port, NULL, NULL},
    {"port-443", check_https_port, wants_https, NULL},
    {"image", check_image, NULL, NULL},
    {"proxy", check_proxy, NULL, NULL},
    {"provider", NULL, NULL, doctor_providers},
    {"network", check_network, NULL, NULL},
    {"egress", check_egress, NULL, NULL},
    {"disk", check_disk, NULL, NULL},
    {"trash", check_trash, NULL, NULL},
    {"releases", NULL, NULL, doctor_releases},
    {"memory", check_memory, NULL, NULL},
    {"clock", check_clock, NULL, NULL},
    {"datadir", check_datadir, NULL, NULL},
    {"swarm", NULL, wants_swarm, doctor_swarm},
};

void
doctor_run(const struct config *cfg, struct doctor_report *r)
{
	struct ctx x = {.cfg = cfg};
	char path[PATH_MAX + 32], err[256];

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "%s/state/sandboxd.db", cfg->data_dir);
	x.have_db = access(path, F_OK) == 0 &&
	            store_db_peek(path, &x.db, err, sizeof(err)) == 0;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (checks[i].when && !checks[i].when(&x))
			continue;
		else if (checks[i].alone)
			checks[i].alone(cfg, add(r, checks[i].name));
		else
			checks[i].run(&x, add(r, checks[i].name));
	jv_free(x.status);
	docker_free(x.docker);
}
