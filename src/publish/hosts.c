/*
 * The host table: what the edge asks for every request whose Host is
 * neither the console's nor a preview's (publish_route).  Two arrays
 * under one mutex: the apps the table knows (what their hosts answer:
 * a static release's site, a server release's address, or why
 * nothing) and the host names (a label's "<label>.<PUBLISH_DOMAIN>",
 * custom domains) that lead to them.  A lookup copies the answer out
 * and takes a reference on the site, so a swap (publish, rollback)
 * never frees files an answer is still sending: the old site goes when
 * its last answer ends.  Nothing here reads the store or the disk; the
 * callers (release.c, domain.c) load first and swap under the lock.
 *
 * Linear scans: an instance has tens or hundreds of published apps,
 * and a scan of them is shorter than the syscall that read the request.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish/internal.h"
#include "publish/runner.h"
#include "site/site.h"

struct pub_app {
	char app_id[ULID_LEN + 1];
	char label[PUB_LABEL_MAX + 1];
	struct pub_serve s;
	uint64_t requests;
};

struct pub_host {
	char host[DOMAIN_HOST_MAX + 1]; /* "<label>.<PUBLISH_DOMAIN>" */
	char app_id[ULID_LEN + 1];
};

int
pub_host_norm(const char *host, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	if (host == NULL)
		return -1;
	if (len > 0 && host[0] == '[')
		return -1; /* an IPv6 literal is never a published host */
	for (size_t i = 0; i < len && host[i] != ':'; i++) {
		unsigned char ch = (unsigned char)host[i];

		if (n + 1 >= outlen || ch <= ' ' || ch >= 0x7f)
			return -1;
		out[n++] = (char)tolower(ch);
	}
	while (n > 0 && out[n - 1] == '.')
		n--;
	out[n] = '\0';
	return n > 0 ? 0 : -1;
}

static struct pub_app *
app_find(struct publish *p, const char *app_id)
{
	for (size_t i = 0; i < p->napps; i++)
		if (strcmp(p->apps[i].app_id, app_id) == 0)
			return &p->apps[i];
	return NULL;
}

static struct pub_host *
host_find(struct publish *p, const char *host)
{
	for (size_t i = 0; i < p->nhosts; i++)
		if (strcmp(p->hosts[i].host, host) == 0)
			return &p->hosts[i];
	return NULL;
}

static void
host_remove_at(struct publish *p, size_t i)
{
	p->hosts[i] = p->hosts[--p->nhosts];
}

static struct pub_host *
host_add(struct publish *p)
{
	if (p->nhosts == p->chosts) {
		size_t n = p->chosts ? p->chosts * 2 : 16;
		struct pub_host *h = realloc(p->hosts, n * sizeof(*h));

		if (h == NULL)
			return NULL;
		p->hosts = h;
		p->chosts = n;
	}
	memset(&p->hosts[p->nhosts], 0, sizeof(p->hosts[0]));
	return &p->hosts[p->nhosts++];
}

static struct pub_app *
app_add(struct publish *p, const char *app_id)
{
	struct pub_app *a;

	if (p->napps == p->capps) {
		size_t n = p->capps ? p->capps * 2 : 16;

		a = realloc(p->apps, n * sizeof(*a));
		if (a == NULL)
			return NULL;
		p->apps = a;
		p->capps = n;
	}
	a = &p->apps[p->napps++];
	memset(a, 0, sizeof(*a));
	snprintf(a->app_id, sizeof(a->app_id), "%s", app_id);
	return a;
}

/* The label's host: the old one dropped, the new one added. */
static int
label_set(struct publish *p, struct pub_app *a, const char *label)
{
	struct pub_host *h;

	if (label[0] == '\0' || strcmp(label, a->label) == 0)
		return 0;
	for (size_t i = 0; i < p->nhosts; i++)
		if (strcmp(p->hosts[i].app_id, a->app_id) == 0) {
			host_remove_at(p, i);
			break;
		}
	h = host_add(p);
	if (h == NULL)
		return -1;
	snprintf(h->host, sizeof(h->host), "%s.%s", label, p->domain);
	snprintf(h->app_id, sizeof(h->app_id), "%s", a->app_id);
	snprintf(a->label, sizeof(a->label), "%s", label);
	return 0;
}

int
pub_hosts_set(struct publish *p, const char *app_id, const char *label,
              struct pub_serve *s)
{
	struct site *old = NULL;
	struct pub_app *a;
	int rc = 0;

	pthread_mutex_lock(&p->hmu);
	a = app_find(p, app_id);
	if (a == NULL)
		a = app_add(p, app_id);
	if (a != NULL) {
		old = a->s.site;
		a->s = *s;
		rc = label_set(p, a, label ? label : "");
	} else {
		old = s->site;
		rc = -1;
	}
	pthread_mutex_unlock(&p->hmu);
	s->site = NULL;
	if (old != NULL)
		site_unref(old);
	return rc;
}

bool
pub_hosts_get(struct publish *p, const char *app_id, struct pub_serve *s)
{
	struct pub_app *a;

	pthread_mutex_lock(&p->hmu);
	a = app_find(p, app_id);
	if (a != NULL) {
		*s = a->s;
		if (s->site != NULL)
			site_ref(s->site);
	}
	pthread_mutex_unlock(&p->hmu);
	return a != NULL;
}

void
pub_hosts_drop(struct publish *p, const char *app_id)
{
	struct site *old = NULL;

	pthread_mutex_lock(&p->hmu);
	for (size_t i = 0; i < p->nhosts;)
		if (strcmp(p->hosts[i].app_id, app_id) == 0)
			host_remove_at(p, i);
		else
			i++;
	for (size_t i = 0; i < p->napps; i++)
		if (strcmp(p->apps[i].app_id, app_id) == 0) {
			old = p->apps[i].s.site;
			p->apps[i] = p->apps[--p->napps];
			break;
		}
	pthread_mutex_unlock(&p->hmu);
	if (old != NULL)
		site_unref(old);
}

void
pub_hosts_free(struct publish *p)
{
	for (size_t i = 0; i < p->napps; i++)
		if (p->apps[i].s.site != NULL)
			site_unref(p->apps[i].s.site);
	free(p->apps);
	free(p->hosts);
	p->apps = NULL;
	p->hosts = NULL;
	p->napps = p->nhosts = p->capps = p->chosts = 0;
}

/* The app a host leads to: its label's, else a verified custom domain's. */
static struct pub_app *
route_app(struct publish *p, const char *name, const char *domain_app)
{
	struct pub_host *h = host_find(p, name);

	if (h != NULL)
		return app_find(p, h->app_id);
	return domain_app[0] ? app_find(p, domain_app) : NULL;
}

void
publish_route(struct core *c, const char *host, size_t len,
              struct publish_target *t)
{
	struct publish *p = c->pub;
	char name[DOMAIN_HOST_MAX + 1], domain_app[ULID_LEN + 1] = "";
	struct pub_app *a;
	size_t dl;

	memset(t, 0, sizeof(*t));
	t->kind = PUBLISH_NONE;
	if (p == NULL || pub_host_norm(host, len, name, sizeof(name)) < 0)
		return;
	/* Not a label's host: maybe a custom domain (domain.c's table). */
	dl = strlen(p->domain);
	if (!(strlen(name) > dl + 1 && name[strlen(name) - dl - 1] == '.' &&
	      strcmp(name + strlen(name) - dl, p->domain) == 0) &&
	    !publish_domain_app(c, name, strlen(name), domain_app))
		return;
	pthread_mutex_lock(&p->hmu);
	a = route_app(p, name, domain_app);
	if (a != NULL && a->s.kind != PUBLISH_NONE) {
		a->requests++;
		t->kind = a->s.kind;
		snprintf(t->app_id, sizeof(t->app_id), "%s", a->app_id);
		snprintf(t->release_id, sizeof(t->release_id), "%s",
		         a->s.release_id);
		t->site = a->s.site;
		if (t->site != NULL)
			site_ref(t->site);
		t->spa = a->s.spa;
		t->private_gate = a->s.private_gate;
		t->retry_after_s = a->s.retry_after_s;
		snprintf(t->message, sizeof(t->message), "%s", a->s.message);
	}
	pthread_mutex_unlock(&p->hmu);
	if (t->kind == PUBLISH_SERVER &&
	    !publish_runner_route(c, t->release_id, t)) {
		t->kind = PUBLISH_DOWN;
		t->retry_after_s = 5;
		snprintf(t->message, sizeof(t->message),
		         "The app's server is starting.");
	}
}

size_t
publish_stats(struct core *c, struct publish_stat *out, size_t max)
{
	struct publish *p = c->pub;
	size_t n = 0;

	if (p == NULL)
		return 0;
	pthread_mutex_lock(&p->hmu);
	for (size_t i = 0; i < p->napps && n < max; i++) {
		snprintf(out[n].app_id, sizeof(out[n].app_id), "%s",
		         p->apps[i].app_id);
		snprintf(out[n].label, sizeof(out[n].label), "%s",
		         p->apps[i].label);
		out[n].requests = p->apps[i].requests;
		n++;
	}
	pthread_mutex_unlock(&p->hmu);
	return n;
}
