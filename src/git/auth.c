/*
 * auth.c - the token's way to a transport, and the failure answers of
 * push and clone, which must never carry it.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "git/internal.h"

void
gitws_url_authority(const char *url, char *out, size_t len)
{
	const char *a = strstr(url, "://"), *end, *at;

	out[0] = '\0';
	if (a == NULL)
		return;
	a += 3;
	end = a + strcspn(a, "/?#");
	at = memchr(a, '@', (size_t)(end - a));
	if (at)
		a = at + 1;
	snprintf(out, len, "%.*s", (int)(end - a), a);
}

/* Whether the credential's host ("name" or "name:port") is the URL's. */
static bool
host_matches(const char *cred, const char *url)
{
	char auth[300];
	char *colon;

	gitws_url_authority(url, auth, sizeof(auth));
	if (auth[0] == '\0')
		return false;
	if (strchr(cred, ':') == NULL && (colon = strrchr(auth, ':')) &&
	    auth[0] != '[')
		*colon = '\0';
	return strcasecmp(cred, auth) == 0;
}

int
gitws_auth_cb(git_credential **out, const char *url, const char *user,
              unsigned int allowed, void *payload)
{
	struct gitws_auth *a = payload;
	const char *name =
	    a->username && a->username[0] ? a->username : "x-access-token";

	(void)user;
	if (a->asked++ > 0 || a->cred_host == NULL || a->token == NULL ||
	    !(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) ||
	    !host_matches(a->cred_host, url)) {
		a->refused = true;
		return GIT_EAUTH;
	}
	return git_credential_userpass_plaintext_new(out, name, a->token);
}

bool
gitws_auth_failed(int rc, const struct gitws_auth *a, const char *msg)
{
	return rc == GIT_EAUTH || a->refused || strstr(msg, "401") ||
	       strstr(msg, "403") || strcasestr(msg, "authentication");
}

const char *
gitws_net_reason(int rc)
{
	const git_error *ge = git_error_last();

	if (rc == GIT_ECERTIFICATE || (ge && ge->klass == GIT_ERROR_SSL))
		return "tls_failed";
	if (ge && (ge->klass == GIT_ERROR_NET || ge->klass == GIT_ERROR_OS))
		return "unreachable";
	return NULL;
}

void
gitws_redact(const char *msg, const char *token, char *out, size_t len)
{
	size_t tl = token ? strlen(token) : 0, o = 0;

	for (const char *m = msg; *m && o + 1 < len;) {
		if (tl && strncmp(m, token, tl) == 0) {
			o += (size_t)snprintf(out + o, len - o, "[redacted]");
			if (o >= len)
				o = len - 1;
			m += tl;
		} else {
			out[o++] = *m++;
		}
	}
	out[o] = '\0';
}

struct jv *
gitws_failure(const char *flag, const char *reason, const char *msg,
              const char *token)
{
	char clean[512];
	struct jv *o = jv_obj();

	gitws_redact(msg, token, clean, sizeof(clean));
	jv_set_bool(o, flag, false);
	jv_set_str(o, "reason", reason);
	jv_set_str(o, "message", clean);
	return o;
}
