/*
 * `sandboxd doctor [--json]`: the checks of ops/doctor.c, one line each
 * ("ok    engine    what it saw", then " -- fix: …" when one is
 * needed), or one JSON object.  Exit status: 0 every check ok, 1 a
 * warning and no failure, 2 a failure (also for a usage or
 * configuration error), so a script can tell "works" from "look at it"
 * from "broken".
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/config.h"
#include "ops/doctor.h"
#include "lib/buf.h"
#include "lib/jv.h"

static void
print_json(const struct doctor_report *r)
{
	struct jv *o = jv_obj(), *a = jv_arr();
	struct buf b;

	for (size_t i = 0; i < r->n; i++) {
		struct jv *c = jv_obj();
		jv_set_str(c, "name", r->c[i].name);
		jv_set_str(c, "status", doctor_level_name(r->c[i].level));
		jv_set_str(c, "message", r->c[i].msg);
		if (r->c[i].fix[0])
			jv_set_str(c, "fix", r->c[i].fix);
		jv_push(a, c);
	}
	jv_set_str(o, "status", doctor_level_name(doctor_worst(r)));
	jv_set(o, "checks", a);
	buf_init(&b, 1u << 20);
	if (jv_dump(o, &b) == 0)
		printf("%s\n", b.data);
	buf_release(&b);
	jv_free(o);
}

int
cmd_doctor(int argc, char **argv)
{
	struct doctor_report r;
	struct config cfg;
	char err[512];
	bool json = argc == 3 && strcmp(argv[2], "--json") == 0;

	if (argc > 3 || (argc == 3 && !json)) {
		fprintf(stderr, "usage: sandboxd doctor [--json]\n");
		return 2;
	}
	if (config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "sandboxd: configuration error: %s\n", err);
		return 2;
	}
	doctor_run(&cfg, &r);
	if (json) {
		print_json(&r);
	} else {
		for (size_t i = 0; i < r.n; i++) {
			printf("%-4s  %-8s  %s%s%s\n",
			       doctor_level_name(r.c[i].level), r.c[i].name,
			       r.c[i].msg, r.c[i].fix[0] ? " -- fix: " : "",
			       r.c[i].fix);
		}
	}
	config_release(&cfg);
	return (int)doctor_worst(&r);
}
