/*
 * sandbox.yaml parsing with libyaml's document API.
 *
 * The whole text (at most MANIFEST_MAX_BYTES) is loaded as one document,
 * then walked against the schema: top-level keys version, web, workers,
 * build, install, publish; unknown keys are errors, not silently ignored, so a
 * typo such as "comand" is reported where the user will see it.  Integers must
 * be plain scalars, booleans true/false (YAML 1.1's yes/no/on/off too).
 * Commands are single lines: run.conf is line-based and a command with a
 * newline would be a second record.  The walk is bounded by the schema
 * (three levels, at most MANIFEST_MAX_WORKERS workers), so aliases that
 * point back at nodes cannot make it long.
 */
#include "sandbox/manifest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

struct walk {
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

static int fail(struct walk *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, w->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static yaml_node_t *
node(struct walk *w, int id)
{
	return yaml_document_get_node(w->doc, id);
}

static const char *
scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
	           ? (const char *)n->data.scalar.value
	           : NULL;
}

static int
get_string(struct walk *w, yaml_node_t *n, const char *field, char *out,
           size_t outlen, bool one_line)
{
	const char *s = scalar(n);

	if (s == NULL)
		return fail(w, "%s: must be a string", field);
	if (strlen(s) != n->data.scalar.length)
		return fail(w, "%s: must not contain NUL", field);
	if (strlen(s) >= outlen)
		return fail(w, "%s: longer than %zu characters", field,
		            outlen - 1);
	if (one_line && strpbrk(s, "\r\n\t"))
		return fail(w, "%s: must be a single line without tabs", field);
	snprintf(out, outlen, "%s", s);
	return 0;
}

static int
get_int(struct walk *w, yaml_node_t *n, const char *field, int min, int max,
        int *out)
{
	const char *s = scalar(n);
	char *end;
	long v;

	if (s == NULL || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    *s == '\0')
		return fail(w, "%s: must be a whole number from %d to %d",
		            field, min, max);
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return fail(w,
		            "%s: must be a whole number from %d to %d, not "
		            "\"%s\"",
		            field, min, max, s);
	*out = (int)v;
	return 0;
}

static int
get_bool(struct walk *w, yaml_node_t *n, const char *field, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	const char *s = scalar(n);

	for (size_t i = 0; s && i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return *out = true, 0;
		if (strcasecmp(s, no[i]) == 0)
			return *out = false, 0;
	}
	return fail(w, "%s: must be true or false", field);
}

/* Calls fn for each key of a mapping; keys outside allowed are errors. */
static int
each_key(struct walk *w, yaml_node_t *map, const char *section,
         const char *allowed,
         int (*fn)(struct walk *, const char *key, yaml_node_t *val, void *),
         void *arg)
{
	yaml_node_pair_t *p;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return fail(w, "%s: must be a mapping of keys to values",
		            section);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *key = scalar(node(w, p->key));
		char pattern[64];

		if (key == NULL)
			return fail(w, "%s: keys must be plain words", section);
		snprintf(pattern, sizeof(pattern), " %s ", key);
		if (strstr(allowed, pattern) == NULL)
			return fail(w, "%s%s%s: unknown key (allowed:%s)",
			            section, *section ? "." : "", key, allowed);
		if (fn(w, key, node(w, p->value), arg) < 0)
			return -1;
	}
	return 0;
}

struct proc_ctx {
	struct manifest_proc *p;
	const char *section;
	bool has_port, has_command, has_name;
};

static int
proc_key(struct walk *w, const char *key, yaml_node_t *val, void *arg)
{
	struct proc_ctx *c = arg;
	char field[96];

	snprintf(field, sizeof(field), "%s.%s", c->section, key);
	if (strcmp(key, "command") == 0) {
		c->has_command = true;
		if (get_string(w, val, field, c->p->command,
		               sizeof(c->p->command), true) < 0)
			return -1;
		return c->p->command[0] ? 0 : fail(w, "%s: is empty", field);
	}
	if (strcmp(key, "port") == 0) {
		c->has_port = true;
		return get_int(w, val, field, 1, 65535, &c->p->port);
	}
	if (strcmp(key, "health_path") == 0) {
		if (get_string(w, val, field, c->p->health_path,
		               sizeof(c->p->health_path), true) < 0)
			return -1;
		if (c->p->health_path[0] != '/' ||
		    strpbrk(c->p->health_path, " \t"))
			return fail(w,
			            "%s: must start with / and contain no "
			            "spaces",
			            field);
		return 0;
	}
	if (strcmp(key, "restart_after_task") == 0)
		return get_bool(w, val, field, &c->p->restart_after_task);

	c->has_name = true;
	return get_string(w, val, field, c->p->name, sizeof(c->p->name), true);
}

static bool
valid_name(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

static int
parse_web(struct walk *w, yaml_node_t *n, struct manifest *m)
{
	struct proc_ctx c = {.p = &m->web, .section = "web"};

	snprintf(m->web.name, sizeof(m->web.name), "web");
	snprintf(m->web.health_path, sizeof(m->web.health_path), "/");
	if (each_key(w, n, "web",
	             " command port health_path "
	             "restart_after_task ",
	             proc_key, &c) < 0)
		return -1;
	if (!c.has_command)
		return fail(w, "web.command: is required");
	if (!c.has_port)
		return fail(w, "web.port: is required");
	m->has_web = true;
	return 0;
}

static int
parse_worker(struct walk *w, yaml_node_t *n, struct manifest *m, int i)
{
	char section[32];
	struct proc_ctx c = {.p = &m->workers[i], .section = section};

	snprintf(section, sizeof(section), "workers[%d]", i);
	if (each_key(w, n, section, " name command restart_after_task ",
	             proc_key, &c) < 0)
		return -1;
	if (!c.has_name || !valid_name(c.p->name) ||
	    strcmp(c.p->name, "web") == 0)
		return fail(w,
		            "%s.name: is required: lower-case letters, "
		            "digits, _ and -, at most %d, not \"web\"",
		            section, MANIFEST_NAME_LEN);
	if (!c.has_command)
		return fail(w, "%s.command: is required", section);
	for (int j = 0; j < i; j++)
		if (strcmp(m->workers[j].name, c.p->name) == 0)
			return fail(w, "%s.name: \"%s\" is used twice", section,
			            c.p->name);
	return 0;
}

static int
parse_workers(struct walk *w, yaml_node_t *n, struct manifest *m)
{
	yaml_node_item_t *it;

	if (n == NULL || n->type != YAML_SEQUENCE_NODE)
		return fail(w, "workers: must be a list");
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		if (m->nworkers == MANIFEST_MAX_WORKERS)
			return fail(w, "workers: more than %d",
			            MANIFEST_MAX_WORKERS);
		if (parse_worker(w, node(w, *it), m, m->nworkers) < 0)
			return -1;
		m->nworkers++;
	}
	return 0;
}

static int
build_key(struct walk *w, const char *key, yaml_node_t *val, void *arg)
{
	struct manifest *m = arg;

	if (strcmp(key, "command") == 0)
		return get_string(w, val, "build.command", m->build_command,
		                  sizeof(m->build_command), true);
	return get_int(w, val, "build.timeout_seconds", 1, 3600,
	               &m->build_timeout_s);
}

/* A relative path without "", ".", ".." components or control bytes. */
static bool
clean_path(const char *s)
{
	const char *c = s;

	if (*s == '\0' || *s == '/')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
		if (*c == '/' && *++c == '\0')
			return false; /* a trailing slash */
	}
	return true;
}

static int
parse_inputs(struct walk *w, yaml_node_t *n, struct manifest *m)
{
	yaml_node_item_t *it;
	char field[48];

	if (n == NULL || n->type != YAML_SEQUENCE_NODE)
		return fail(w, "install.inputs: must be a list of paths");
	m->install_inputs_set = true;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		int i = m->ninstall_inputs;

		if (i == MANIFEST_MAX_INPUTS)
			return fail(w, "install.inputs: more than %d",
			            MANIFEST_MAX_INPUTS);
		snprintf(field, sizeof(field), "install.inputs[%d]", i);
		if (get_string(w, node(w, *it), field, m->install_inputs[i],
		               sizeof(m->install_inputs[i]), true) < 0)
			return -1;
		if (!clean_path(m->install_inputs[i]))
			return fail(w,
			            "%s: must be a relative path inside the "
			            "app (no \"..\", \".\", empty parts or "
			            "leading /)",
			            field);
		m->ninstall_inputs++;
	}
	return 0;
}

static int
install_field(struct walk *w, const char *key, yaml_node_t *val, void *arg)
{
	struct manifest *m = arg;

	if (strcmp(key, "command") == 0) {
		if (get_string(w, val, "install.command", m->install_command,
		               sizeof(m->install_command), true) < 0)
			return -1;
		return m->install_command[0]
		           ? 0
		           : fail(w, "install.command: is empty");
	}
	if (strcmp(key, "inputs") == 0)
		return parse_inputs(w, val, m);
	return get_int(w, val, "install.timeout_seconds", 1, 86400,
	               &m->install_timeout_s);
}

static int
parse_install(struct walk *w, yaml_node_t *n, struct manifest *m)
{
	m->install_timeout_s = MANIFEST_INSTALL_TIMEOUT_DEFAULT;
	if (each_key(w, n, "install", " command inputs timeout_seconds ",
	             install_field, m) < 0)
		return -1;
	if (m->install_command[0] == '\0')
		return fail(w, "install.command: is required");
	m->has_install = true;
	return 0;
}

static int
publish_field(struct walk *w, const char *key, yaml_node_t *val, void *arg)
{
	struct manifest_publish *p = arg;
	char field[48];

	snprintf(field, sizeof(field), "publish.%s", key);
	if (strcmp(key, "build") == 0)
		return get_string(w, val, field, p->build, sizeof(p->build),
		                  true);
	if (strcmp(key, "command") == 0)
		return get_string(w, val, field, p->command, sizeof(p->command),
		                  true);
	if (strcmp(key, "spa") == 0)
		return get_bool(w, val, field, &p->spa);
	if (strcmp(key, "port") == 0)
		return get_int(w, val, field, 1, 65535, &p->port);
	if (strcmp(key, "timeout_seconds") == 0)
		return get_int(w, val, field, 1, 86400, &p->timeout_s);
	if (strcmp(key, "health_path") == 0) {
		if (get_string(w, val, field, p->health_path,
		               sizeof(p->health_path), true) < 0)
			return -1;
		return p->health_path[0] == '/' &&
		               !strpbrk(p->health_path, " \t")
		           ? 0
		           : fail(w,
		                  "%s: must start with / and contain no "
		                  "spaces",
		                  field);
	}
	if (get_string(w, val, field, p->output, sizeof(p->output), true) < 0)
		return -1;
	return strcmp(p->output, ".") == 0 || clean_path(p->output)
	           ? 0
	           : fail(w,
	                  "%s: must be \".\" or a relative path inside "
	                  "the app (no \"..\", empty parts or leading /)",
	                  field);
}

static int
parse_publish(struct walk *w, yaml_node_t *n, struct manifest *m)
{
	struct manifest_publish *p = &m->publish;

	if (each_key(w, n, "publish",
	             " build output spa command port health_path "
	             "timeout_seconds ",
	             publish_field, p) < 0)
		return -1;
	if (p->output[0] && p->command[0])
		return fail(w, "publish: output (a static site) or command (a "
		               "server), not both");
	if (!p->output[0] && !p->command[0])
		return fail(w, "publish: needs output (the directory of a "
		               "static site) or command (how a server runs)");
	if (p->output[0] && (p->port || p->health_path[0]))
		return fail(w, "publish: port and health_path are for a "
		               "server (command), not a static output");
	if (p->spa && !p->output[0])
		return fail(w, "publish.spa: is for a static output");
	m->has_publish = true;
	return 0;
}

/* A server release's port and health path default to web's. */
static void
publish_defaults(struct manifest *m)
{
	struct manifest_publish *p = &m->publish;

	if (!m->has_publish || p->output[0])
		return;
	if (p->port == 0 && m->has_web)
		p->port = m->web.port;
	if (p->health_path[0] == '\0')
		snprintf(p->health_path, sizeof(p->health_path), "%s",
		         m->has_web && p->port == m->web.port
		             ? m->web.health_path
		             : "/");
}

static int
top_key(struct walk *w, const char *key, yaml_node_t *val, void *arg)
{
	struct manifest *m = arg;
	int version;

	if (strcmp(key, "version") == 0) {
		if (get_int(w, val, "version", 1, 1, &version) < 0)
			return fail(w, "version: must be 1");
		return 0;
	}
	if (strcmp(key, "web") == 0)
		return parse_web(w, val, m);
	if (strcmp(key, "workers") == 0)
		return parse_workers(w, val, m);
	if (strcmp(key, "install") == 0)
		return parse_install(w, val, m);
	if (strcmp(key, "publish") == 0)
		return parse_publish(w, val, m);
	m->build_timeout_s = 120;
	if (each_key(w, val, "build", " command timeout_seconds ", build_key,
	             m) < 0)
		return -1;
	if (m->build_command[0] == '\0')
		return fail(w, "build.command: is required");
	m->has_build = true;
	return 0;
}

int
manifest_parse(const char *text, size_t len, struct manifest *m, char *err,
               size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct walk w = {.doc = &doc, .err = err, .errlen = errlen};
	yaml_node_t *root;
	int rc;

	memset(m, 0, sizeof(*m));
	if (len > MANIFEST_MAX_BYTES)
		return fail(&w, "sandbox.yaml is larger than %u bytes",
		            MANIFEST_MAX_BYTES);
	if (!yaml_parser_initialize(&parser))
		return fail(&w, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = fail(&w, "sandbox.yaml line %zu: %s",
		          parser.problem_mark.line + 1,
		          parser.problem ? parser.problem : "invalid YAML");
		yaml_parser_delete(&parser);
		return rc;
	}
	root = yaml_document_get_root_node(&doc);
	if (root == NULL)
		rc = fail(&w, "sandbox.yaml is empty");
	else
		rc = each_key(&w, root, "",
		              " version web workers build install publish ",
		              top_key, m);
	if (rc == 0 && !m->has_web && m->nworkers == 0)
		rc = fail(&w, "sandbox.yaml declares neither web nor workers");
	if (rc == 0)
		publish_defaults(m);
	for (int i = 0; rc == 0 && m->has_install && i < m->nworkers; i++)
		if (strcmp(m->workers[i].name, "install") == 0)
			rc =
			    fail(&w,
			         "workers[%d].name: \"install\" is the install "
			         "step's (its log is install.log): rename the "
			         "worker",
			         i);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

void
manifest_default(struct manifest *m, int port, bool has_package_json)
{
	memset(m, 0, sizeof(*m));
	m->has_web = true;
	snprintf(m->web.name, sizeof(m->web.name), "web");
	m->web.port = port;
	snprintf(m->web.health_path, sizeof(m->web.health_path), "/");
	if (has_package_json)
		snprintf(m->web.command, sizeof(m->web.command), "npm run dev");
	else
		snprintf(m->web.command, sizeof(m->web.command),
		         "python3 -m http.server %d --bind 0.0.0.0", port);
}

int
manifest_runconf(const struct manifest *m, struct buf *out)
{
	int rc = buf_appendf(out, "# sandboxd run.conf 1\n");

	if (m->has_web)
		rc |= buf_appendf(out, "web\t%d\t%s\t%d\t%s\n", m->web.port,
		                  m->web.health_path, m->web.restart_after_task,
		                  m->web.command);
	for (int i = 0; i < m->nworkers; i++)
		rc |= buf_appendf(
		    out, "worker\t%s\t%d\t%s\n", m->workers[i].name,
		    m->workers[i].restart_after_task, m->workers[i].command);
	if (m->has_build)
		rc |= buf_appendf(out, "build\t%d\t%s\n", m->build_timeout_s,
		                  m->build_command);
	if (m->has_install && m->install_key[0])
		rc |= buf_appendf(out, "install\t%d\t%s\t%s\n",
		                  m->install_timeout_s, m->install_key,
		                  m->install_command);
	return rc ? -1 : 0;
}
