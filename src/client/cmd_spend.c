/*
 * sandboxd spend: what the credential proxy counted for the caller's
 * tenant and each of its apps, with their budgets (GET /v1/spend and
 * GET /v1/apps); `spend budget APP` sets an app's budget (PATCH
 * /v1/apps/APP).  Text from the API goes through the table, which
 * shows control characters as '?'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/table.h"

/* "1234 tokens, $0.52" of a spend object. */
static void
spent_text(const struct jv *s, char *out, size_t len)
{
	snprintf(out, len, "%lld tokens, $%.4f",
	         (long long)jv_int(jv_get(s, "tokens")),
	         jv_num(jv_get(s, "usd")));
}

/* "$5.00 / 100000 tokens", "none" of a budget. */
static void
budget_text(const struct jv *b, const char *source, char *out, size_t len)
{
	char usd[48] = "", tok[48] = "";

	if (jv_type(b) != JV_OBJECT) {
		snprintf(out, len, "none");
		return;
	}
	if (jv_type(jv_get(b, "usd")) != JV_NULL)
		snprintf(usd, sizeof(usd), "$%.2f", jv_num(jv_get(b, "usd")));
	if (jv_type(jv_get(b, "tokens")) != JV_NULL)
		snprintf(tok, sizeof(tok), "%lld tokens",
		         (long long)jv_int(jv_get(b, "tokens")));
	snprintf(out, len, "%s%s%s%s%s%s", usd, usd[0] && tok[0] ? " / " : "",
	         tok, source ? " (" : "", source ? source : "",
	         source ? ")" : "");
}

static void
print_apps(struct cli *c, const struct jv *apps)
{
	static const char *const head[] = {"APP", "NAME", "SPENT", "BUDGET",
	                                   NULL};
	struct table t;
	char sp[96], bu[128];

	table_init(&t, head);
	for (size_t i = 0; i < jv_len(apps); i++) {
		const struct jv *a = jv_at(apps, i);
		const struct jv *s = jv_get(a, "spend");
		const char *row[4];

		spent_text(jv_get(s, "spent"), sp, sizeof(sp));
		budget_text(jv_get(s, "budget"),
		            jv_str(jv_get(s, "budget_source")), bu, sizeof(bu));
		row[0] = jv_str(jv_get(a, "id"));
		row[1] = jv_str(jv_get(a, "name"));
		row[2] = sp;
		row[3] = bu;
		table_add(&t, row);
	}
	cli_print_table(c, &t);
	table_release(&t);
}

int
cmd_spend(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r, ra;
	const struct jv *o;
	char sp[96], bu[128];
	int rc;

	(void)a;
	rc = cli_call(c, "GET", "/v1/spend", NULL, &r);
	if (rc != 0 || c->json) {
		if (rc == 0)
			cli_print_raw(&r);
		cli_resp_release(&r);
		return rc;
	}
	o = r.json;
	spent_text(jv_get(o, "spent"), sp, sizeof(sp));
	budget_text(jv_get(o, "budget"), jv_str(jv_get(o, "budget_source")), bu,
	            sizeof(bu));
	if (!c->quiet) {
		/* The tenant's name is a token's name: printable, ours. */
		printf(
		    "tenant %s: %s in %lld answers; budget %s%s\n",
		    jv_str(jv_get(o, "tenant")) ?: "?", sp,
		    (long long)jv_int(jv_get(jv_get(o, "spent"), "requests")),
		    bu,
		    jv_is_true(jv_get(o, "counting"))
		        ? ""
		        : " (counting is off: SANDBOXD_SPEND_COUNTING)");
	}
	cli_resp_release(&r);
	rc = cli_call(c, "GET", "/v1/apps", NULL, &ra);
	if (rc == 0 && !c->quiet)
		print_apps(c, jv_get(ra.json, "apps"));
	cli_resp_release(&ra);
	return rc;
}

/* PATCH /v1/apps/{id} {field: budget|null}; prints the app's spend. */
static int
patch_budget(struct cli *c, const struct cli_args *a, const char *field,
             const char *cmd)
{
	const char *tokens = cli_args_get(a, "tokens"),
	           *usd = cli_args_get(a, "usd");
	struct jv *body = jv_obj(), *b;
	struct cli_resp r;
	char path[512], *end;
	int rc;

	if (cli_pathf(path, sizeof(path), "/v1/apps/%s", a->pos[0]) < 0) {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage", "the id is too long");
	}
	if (cli_args_has(a, "none")) {
		jv_set(body, field, jv_new_null());
	} else if (tokens || usd) {
		b = jv_obj();
		if (tokens) {
			long long n = strtoll(tokens, &end, 10);
			if (*end || n <= 0) {
				jv_free(b);
				jv_free(body);
				return cli_fail(CLI_EUSAGE, "usage",
				                "--tokens: a whole number");
			}
			jv_set_int(b, "tokens", n);
		}
		if (usd) {
			double d = strtod(usd, &end);
			if (*end || !(d > 0)) {
				jv_free(b);
				jv_free(body);
				return cli_fail(CLI_EUSAGE, "usage",
				                "--usd: an amount of dollars");
			}
			jv_set_real(b, "usd", d);
		}
		jv_set(body, field, b);
	} else {
		jv_free(body);
		return cli_fail(CLI_EUSAGE, "usage",
		                "%s: --tokens N, --usd X, or --none", cmd);
	}
	rc = cli_call(c, "PATCH", path, body, &r);
	jv_free(body);
	if (rc == 0 && c->json)
		cli_print_raw(&r);
	else if (rc == 0 && !c->quiet)
		cli_print_object(c, jv_get(r.json, "spend"));
	cli_resp_release(&r);
	return rc;
}

int
cmd_spend_budget(struct cli *c, const struct cli_args *a)
{
	return patch_budget(c, a, "budget", "spend budget");
}

int
cmd_spend_own_calls(struct cli *c, const struct cli_args *a)
{
	return patch_budget(c, a, "own_model_calls", "spend own-calls");
}
