/*
 * helper.c - the git work that talks to a remote (push, clone) runs in a
 * child process: this same binary run as `sandboxd git-helper`.
 *
 * Why a process: libgit2 1.5 has no timeout of its own, so a remote that
 * accepts the connection and then stalls would hold an API thread and
 * the app's lock forever; a child can be killed.  And the child parses
 * what an arbitrary server sends (pack files, HTTP) and checks out an
 * arbitrary tree as the sandbox user (uid/gid 1000, no supplementary
 * groups, no new privileges, killed with the daemon), not as root.
 *
 * Protocol: the parent writes one line of JSON, the request without the
 * token, then the token on a line of its own (a stored token has no CR,
 * LF or NUL), so the token never passes through a JSON library; the
 * child writes one JSON answer to stdout, {"not_repo":true}
 * (GITWS_NOT_REPO), or {"error":{status, code, message}}.  The parent holds the
 * app's lock for the whole run, so operations on one app stay serialized across
 * the two processes.  The child's environment is fixed (PATH,
 * HOME=/nonexistent); its stderr is /dev/null; every other descriptor is closed
 * at its start.
 *
 * Before connecting, the child resolves the URL's host and refuses
 * loopback, private, link-local, CGNAT, multicast and reserved addresses
 * (blocked_host) unless the operator allowed private hosts, so an API
 * client cannot make the server fetch from its own network; off-site
 * redirects are not followed.  A name that resolves differently at
 * connect time (DNS rebinding) is not caught.
 *
 * Rejected: fork() without exec in a threaded daemon (locks held by
 * other threads stay held in the child); a thread with pthread_cancel
 * (libgit2 is not cancellation-safe); the git CLI (see remote.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ws/workspace.h"
#include "git/git.h"
#include "git/internal.h"
#include "lib/buf.h"

#define HELPER_EXE     "/proc/self/exe"
#define HELPER_REQ_MAX (64u << 10) /* request line + token */
#define HELPER_OUT_MAX (1u << 20)  /* the answer */
#define HELPER_KILL_MS 2000        /* after the timeout, for the reap */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- parent ------------------------------------------------------------ */

static int
spawn(pid_t *pid, int *to, int *from, struct err *e)
{
	static char *const argv[] = {"sandboxd", "git-helper", NULL};
	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/nonexistent",
	                             "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, rc;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		rc = errno;
		goto fail;
	}
	sigemptyset(&none);
	sigfillset(&def);
	sigdelset(&def, SIGKILL);
	sigdelset(&def, SIGSTOP);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(pid, HELPER_EXE, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0)
		goto fail;
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return ERR_INTERNAL(e, "git: cannot start the helper: %s",
	                    strerror(rc));
}

static void
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the child died; its exit says why */
		p += w;
		n -= (size_t)w;
	}
}

/*
 * Reads the child's answer until EOF or the deadline: 0, or 1 when the
 * deadline passed (the child is killed).
 */
static int
read_answer(int fd, pid_t pid, int64_t deadline, struct buf *b)
{
	char chunk[4096];

	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			return 1;
		}
		if (poll(&p, 1, (int)(left > 60000 ? 60000 : left)) <= 0)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (b->len + (size_t)n <= HELPER_OUT_MAX)
			buf_append(b, chunk, (size_t)n);
	}
}

static int
reap(pid_t pid, int64_t deadline)
{
	int st = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return st;
		if (now_ms() > deadline)
			kill(pid, SIGKILL);
		usleep(2000);
	}
}

/* The child's {"error":{...}} as e, or its answer as *out. */
static int
take_answer(const struct buf *b, int status, struct jv **out, struct err *e)
{
	char perr[64];
	struct jv *v =
	    b->len ? jv_parse(b->data, b->len, 16, perr, sizeof(perr)) : NULL;
	struct jv *ev;

	if (v == NULL || jv_type(v) != JV_OBJECT) {
		jv_free(v);
		if (WIFSIGNALED(status))
			return ERR_INTERNAL(e,
			                    "git: the helper died (signal %d)",
			                    WTERMSIG(status));
		return ERR_INTERNAL(e,
		                    "git: the helper gave no answer "
		                    "(exit %d)",
		                    WIFEXITED(status) ? WEXITSTATUS(status)
		                                      : -1);
	}
	if (jv_is_true(jv_get(v, "not_repo"))) {
		jv_free(v);
		return GITWS_NOT_REPO;
	}
	if ((ev = jv_get(v, "error")) != NULL) {
		struct jv *st = jv_get(ev, "status"),
		          *code = jv_get(ev, "code");
		struct jv *msg = jv_get(ev, "message");
		int s = (int)jv_int(st);

		err_set(e, s >= 400 && s < 600 ? s : 500,
		        jv_str(code) ? jv_str(code) : "internal", "%s",
		        jv_str(msg) ? jv_str(msg) : "git: the helper failed");
		jv_free(v);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * Runs req (+ token) in a helper under key's lock; past timeout_s the
 * answer is {<flag>:false, reason:"timeout"}.
 */
static int
helper_run(const char *key, struct jv *req, const struct gitws_remote *r,
           const char *flag, struct jv **out, struct err *e)
{
	const char *token = r->token;
	int timeout_s = r->timeout_s;
	struct buf line, ans;
	int64_t deadline;
	int to = -1, from = -1, rc, status, late;
	pid_t pid;

	*out = NULL;
	buf_init(&line, HELPER_REQ_MAX);
	buf_init(&ans, HELPER_OUT_MAX);
	if (jv_dump(req, &line) < 0) {
		buf_release(&line);
		return ERR_INTERNAL(e, "git: the request is too large");
	}
	gitws_lock(key);
	if (spawn(&pid, &to, &from, e) < 0) {
		gitws_unlock(key);
		buf_release(&line);
		return -1;
	}
	deadline = now_ms() + (int64_t)(timeout_s > 0 ? timeout_s : 300) * 1000;
	write_all(to, line.data, line.len);
	write_all(to, "\n", 1);
	if (token)
		write_all(to, token, strlen(token));
	write_all(to, "\n", 1);
	close(to);
	late = read_answer(from, pid, deadline, &ans);
	close(from);
	status = reap(pid, now_ms() + HELPER_KILL_MS);
	gitws_unlock(key);
	buf_release(&line);
	if (late) {
		char msg[128];

		snprintf(msg, sizeof(msg),
		         "the remote did not finish within %d s", timeout_s);
		*out = gitws_failure(flag, "timeout", msg, NULL);
		rc = 0;
	} else {
		rc = take_answer(&ans, status, out, e);
	}
	buf_release(&ans);
	return rc;
}

static void
set_opt(struct jv *o, const char *k, const char *v)
{
	if (v && v[0])
		jv_set_str(o, k, v);
}

/* The request's fields that say where and how (not the token). */
static struct jv *
remote_request(const char *op, const struct gitws_remote *r)
{
	struct jv *req = jv_obj();

	jv_set_str(req, "op", op);
	jv_set_str(req, "url", r->url);
	set_opt(req, "cred_host", r->cred_host);
	set_opt(req, "username", r->username);
	jv_set_bool(req, "allow_private", r->allow_private);
	jv_set_bool(req, "allow_loopback", r->allow_loopback);
	set_opt(req, "ca_file", r->ca_file);
	return req;
}

int
gitws_push(const char *key, const char *ws, const struct gitws_push *p,
           struct jv **out, struct err *e)
{
	struct jv *req = remote_request("push", &p->r);
	int rc;

	jv_set_str(req, "key", key);
	jv_set_str(req, "ws", ws);
	set_opt(req, "branch", p->branch);
	set_opt(req, "prefix", p->prefix);
	rc = helper_run(key, req, &p->r, "pushed", out, e);
	jv_free(req);
	return rc;
}

int
gitws_clone(const char *key, const char *ws, const struct gitws_clone *c,
            struct jv **out, struct err *e)
{
	struct jv *req = remote_request("clone", &c->r);
	char dir[4200];
	int rc;

	snprintf(dir, sizeof(dir), "%s/workspace/app", ws);
	jv_set_str(req, "dir", dir);
	set_opt(req, "branch", c->branch);
	jv_set_int(req, "max_bytes", (int64_t)c->max_bytes);
	rc = helper_run(key, req, &c->r, "imported", out, e);
	jv_free(req);
	return rc;
}

/* --- host check (in the child) ----------------------------------------- */

static bool
v4_blocked(const unsigned char *a)
{
	uint32_t x = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
	             (uint32_t)a[2] << 8 | a[3];
	static const struct {
		uint32_t net, mask;
	} nets[] = {
	    {0x00000000, 0xff000000}, /* 0/8 "this network" */
	    {0x0a000000, 0xff000000}, /* 10/8 */
	    {0x64400000, 0xffc00000}, /* 100.64/10 CGNAT */
	    {0x7f000000, 0xff000000}, /* 127/8 loopback */
	    {0xa9fe0000, 0xffff0000}, /* 169.254/16 link-local, metadata */
	    {0xac100000, 0xfff00000}, /* 172.16/12 */
	    {0xc0000000, 0xffffff00}, /* 192.0.0/24 */
	    {0xc0a80000, 0xffff0000}, /* 192.168/16 */
	    {0xc6120000, 0xfffe0000}, /* 198.18/15 benchmarking */
	    {0xe0000000, 0xe0000000}, /* 224/3 multicast, reserved */
	};

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if ((x & nets[i].mask) == nets[i].net)
			return true;
	return false;
}

static bool
v6_blocked(const unsigned char *a)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
	                                         0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char zero[16] = {0};

	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return v4_blocked(a + 12);
	if (memcmp(a, zero, 15) == 0) /* :: and ::1 */
		return true;
	return (a[0] & 0xfe) == 0xfc ||                /* fc00::/7 ULA */
	       (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) /* fe80::/10 */
	       || a[0] == 0xff;                        /* multicast */
}

/* host (no brackets, no port) of an http(s) URL, into out. */
static void
url_host(const char *url, char *out, size_t len)
{
	char auth[300];
	char *rb;

	gitws_url_authority(url, auth, sizeof(auth));
	if (auth[0] == '[') {
		rb = strchr(auth, ']');
		snprintf(out, len, "%.*s", rb ? (int)(rb - auth - 1) : 0,
		         auth + 1);
		return;
	}
	auth[strcspn(auth, ":")] = '\0';
	snprintf(out, len, "%s", auth);
}

int
gitws_host_check(const char *flag, const char *url, bool allow_private,
                 bool allow_loopback, struct jv **out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	char host[300], addr[INET6_ADDRSTRLEN], msg[512];
	int rc;

	url_host(url, host, sizeof(host));
	if (host[0] == '\0') {
		*out = gitws_failure(flag, "clone_failed",
		                     "the URL has no host", NULL);
		return 0;
	}
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		snprintf(msg, sizeof(msg), "cannot resolve %s: %s", host,
		         gai_strerror(rc));
		*out = gitws_failure(flag, "unreachable", msg, NULL);
		return 0;
	}
	for (struct addrinfo *ai = res; ai && !allow_private;
	     ai = ai->ai_next) {
		bool bad = false;

		if (ai->ai_family == AF_INET) {
			struct sockaddr_in *s = (void *)ai->ai_addr;

			bad = v4_blocked((unsigned char *)&s->sin_addr) &&
			      !(allow_loopback &&
			        ((unsigned char *)&s->sin_addr)[0] == 127);
			inet_ntop(AF_INET, &s->sin_addr, addr, sizeof(addr));
		} else if (ai->ai_family == AF_INET6) {
			struct sockaddr_in6 *s = (void *)ai->ai_addr;

			bad = v6_blocked(s->sin6_addr.s6_addr) &&
			      !(allow_loopback &&
			        IN6_IS_ADDR_LOOPBACK(&s->sin6_addr));
			inet_ntop(AF_INET6, &s->sin6_addr, addr, sizeof(addr));
		}
		if (bad) {
			snprintf(msg, sizeof(msg),
			         "%s resolves to %s, a loopback, private or "
			         "reserved address; set "
			         "SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true to "
			         "allow hosts on your own network",
			         host, addr);
			freeaddrinfo(res);
			*out = gitws_failure(flag, "blocked_host", msg, NULL);
			return 0;
		}
	}
	freeaddrinfo(res);
	return 1;
}

/* --- child ------------------------------------------------------------- */

static int
drop_privileges(void)
{
	if (geteuid() == 0) {
		if (setgroups(0, NULL) < 0 || setgid(WORKSPACE_GID) < 0 ||
		    setuid(WORKSPACE_UID) < 0)
			return -1;
		if (setuid(0) == 0) /* must not be possible any more */
			return -1;
	}
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* stdin: the request line, then the token line; 0 or -1. */
static int
read_request(struct buf *b, char **token)
{
	char chunk[4096], *nl;
	ssize_t n;

	while ((n = read(0, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || buf_append(b, chunk, (size_t)n) < 0)
			return -1;
	}
	if (buf_append(b, "", 1) < 0 || (nl = strchr(b->data, '\n')) == NULL)
		return -1;
	*nl = '\0';
	*token = nl + 1;
	nl = strchr(*token, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

static void
print_json(struct jv *v)
{
	struct buf b;

	buf_init(&b, HELPER_OUT_MAX);
	if (jv_dump(v, &b) == 0) {
		buf_append(&b, "\n", 1);
		write_all(1, b.data, b.len);
	}
	buf_release(&b);
}

static void
print_err(const struct err *e)
{
	struct jv *o = jv_obj(), *ev = jv_obj();

	jv_set_int(ev, "status", e->status ? e->status : 500);
	jv_set_str(ev, "code", e->code[0] ? e->code : "internal");
	jv_set_str(ev, "message", e->msg);
	jv_set(o, "error", ev);
	print_json(o);
	jv_free(o);
}

static const char *
opt(const struct jv *req, const char *k)
{
	const char *s = jv_str(jv_get(req, k));

	return s && s[0] ? s : NULL;
}

static int
dispatch(const struct jv *req, const char *token, struct jv **out,
         struct err *e)
{
	const char *op = opt(req, "op");
	struct gitws_remote r = {
	    .url = opt(req, "url"),
	    .cred_host = opt(req, "cred_host"),
	    .username = opt(req, "username"),
	    .token = token[0] ? token : NULL,
	    .allow_private = jv_is_true(jv_get(req, "allow_private")),
	    .allow_loopback = jv_is_true(jv_get(req, "allow_loopback")),
	    .ca_file = opt(req, "ca_file"),
	};
	const char *flag =
	    op && strcmp(op, "clone") == 0 ? "imported" : "pushed";

	if (op == NULL || r.url == NULL)
		return ERR_INTERNAL(e, "git: a bad helper request");
	if (gitws_host_check(flag, r.url, r.allow_private, r.allow_loopback,
	                     out) == 0)
		return 0;
	if (gitws_init() < 0)
		return ERR_INTERNAL(e, "libgit2 did not initialize");
	if (r.ca_file && git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS,
	                                  r.ca_file, NULL) < 0)
		return gitws_lib_err(e, "loading SANDBOXD_GIT_CA_FILE");
	if (strcmp(op, "push") == 0) {
		struct gitws_push p = {.r = r,
		                       .branch = opt(req, "branch"),
		                       .prefix = opt(req, "prefix")};

		if (opt(req, "key") == NULL || opt(req, "ws") == NULL)
			return ERR_INTERNAL(e, "git: a bad helper request");
		if (p.prefix == NULL)
			p.prefix = "sandboxd/app-";
		return gitws_push_here(opt(req, "key"), opt(req, "ws"), &p, out,
		                       e);
	}
	if (strcmp(op, "clone") == 0) {
		struct gitws_clone c = {
		    .r = r,
		    .branch = opt(req, "branch"),
		    .max_bytes = (uint64_t)jv_int(jv_get(req, "max_bytes")),
		};

		if (opt(req, "dir") == NULL)
			return ERR_INTERNAL(e, "git: a bad helper request");
		return gitws_clone_here(opt(req, "dir"), &c, out, e);
	}
	return ERR_INTERNAL(e, "git: unknown helper op");
}

int
gitws_helper_main(void)
{
	struct rlimit core = {0, 0};
	struct err e = {0};
	struct jv *req = NULL, *out = NULL;
	struct buf b;
	char perr[64], *token = NULL;
	int rc;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
		return 1;
	close_range(3, ~0U, 0);
	setrlimit(RLIMIT_CORE, &core);
	umask(022);
	signal(SIGPIPE, SIG_IGN);
	if (drop_privileges() < 0) {
		ERR_INTERNAL(&e,
		             "git: the helper cannot become the sandbox "
		             "user: %s",
		             strerror(errno));
		print_err(&e);
		return 1;
	}
	buf_init(&b, HELPER_REQ_MAX);
	if (read_request(&b, &token) < 0 ||
	    (req = jv_parse(b.data, strlen(b.data), 8, perr, sizeof(perr))) ==
	        NULL) {
		ERR_INTERNAL(&e, "git: the helper got no request");
		print_err(&e);
		buf_release(&b);
		return 1;
	}
	rc = dispatch(req, token, &out, &e);
	explicit_bzero(b.data, b.cap);
	buf_release(&b);
	jv_free(req);
	if (rc == GITWS_NOT_REPO) {
		out = jv_obj();
		jv_set_bool(out, "not_repo", true);
	}
	if (rc < 0)
		print_err(&e);
	else
		print_json(out);
	jv_free(out);
	return rc < 0 ? 1 : 0;
}
