/* What oauth.c and oauthparse.c share (see oauthparse.c). */
#ifndef CRED_OAUTH_INTERNAL_H
#define CRED_OAUTH_INTERNAL_H

#include <stddef.h>

#include "cred/credentials.h"
#include "lib/jv.h"

/* Frees an object after wiping its strings (tokens, codes). */
void cred_jv_free_wiped(struct jv *o);
/* The stored row's JSON into o; 0 or -1 (o wiped). */
int cred_oauth_row_parse(const char *text, size_t len, struct cred_oauth *o);

#endif
