/*
 * Unit tests of the operations parts: the metrics text format, the JSON
 * log line's escaping, the backup manifest (round trip and refusals)
 * and doctor's pure checks.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ops/backup.h"
#include "ops/backup_tree.h"
#include "config/config.h"
#include "ops/doctor.h"
#include "lib/buf.h"
#include "lib/jv.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "unit.h"

static bool
has_line(const struct buf *b, const char *line)
{
	const char *p = b->data;
	size_t n = strlen(line);

	while (p && (p = strstr(p, line)) != NULL) {
		if ((p == b->data || p[-1] == '\n') && p[n] == '\n')
			return true;
		p += n;
	}
	return false;
}

static void
metrics_text_format(void)
{
	struct buf b;
	uint64_t before = metric_get(METRIC_TASKS_FAILED);

	metric_inc(METRIC_TASKS_FAILED);
	metric_add(METRIC_PROXY_BYTES_UP, 1000);
	metric_observe(METRIC_WAKE_SECONDS, 80);    /* le 0.1 */
	metric_observe(METRIC_WAKE_SECONDS, 700);   /* le 1 */
	metric_observe(METRIC_WAKE_SECONDS, 90000); /* +Inf only */
	CHECK(metric_get(METRIC_TASKS_FAILED) == before + 1);
	buf_init(&b, 1 << 20);
	CHECK(metrics_write(&b) == 0);
	/* HELP and TYPE once per family, before its first sample. */
	CHECK(has_line(&b, "# TYPE sandboxd_tasks_total counter"));
	CHECK(strstr(b.data, "# TYPE sandboxd_tasks_total") ==
	      strstr(b.data, "# TYPE sandboxd_tasks_total counter"));
	CHECK(strstr(strstr(b.data, "# TYPE sandboxd_tasks_total") + 1,
	             "# TYPE sandboxd_tasks_total") == NULL);
	CHECK(strstr(b.data, "# HELP sandboxd_tasks_total") <
	      strstr(b.data, "sandboxd_tasks_total{outcome=\"succeeded\"}"));
	CHECK(has_line(&b, "sandboxd_tasks_total{outcome=\"failed\"} 1"));
	CHECK(has_line(&b, "sandboxd_proxy_bytes_total{direction=\"upstream\"} "
	                   "1000"));
	CHECK(has_line(&b, "sandboxd_edge_requests_total 0"));
	/* Histogram buckets are cumulative and end with +Inf == count. */
	CHECK(has_line(&b, "# TYPE sandboxd_wake_seconds histogram"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_bucket{le=\"0.1\"} 1"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_bucket{le=\"0.5\"} 1"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_bucket{le=\"1\"} 2"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_bucket{le=\"60\"} 2"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_bucket{le=\"+Inf\"} 3"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_count 3"));
	CHECK(has_line(&b, "sandboxd_wake_seconds_sum 90.780"));
	/* Every line is a comment or "name[{labels}] value". */
	for (char *l = b.data, *nl; l && *l; l = nl + 1) {
		nl = strchr(l, '\n');
		CHECK(nl != NULL);
		if (nl == NULL)
			break;
		CHECK(l[0] == '#' || strncmp(l, "sandboxd_", 9) == 0);
		CHECK(memchr(l, ' ', (size_t)(nl - l)) != NULL);
	}
	buf_release(&b);
}

static void
metrics_label_escaping(void)
{
	char out[64];

	metrics_label_escape("a\"b\\c\nd", out, sizeof(out));
	CHECK_STR(out, "a\\\"b\\\\c\\nd");
	metrics_label_escape("\\\\\\\\\\\\", out, 8); /* never half an escape */
	CHECK(strlen(out) % 2 == 0);
}

static void
log_json_escapes(void)
{
	char line[2048], err[128];
	const char *kv[] = {"sandbox", "01J\"x", "bytes", "12", NULL};
	const char *msg = "quote \" back \\ nl \n tab \t ctl \x01 del \x7f "
	                  "utf8 \xc3\xa9 bad \xff\xfe end";
	size_t n = log_json_line(line, sizeof(line), "2026-12-01T00:00:00Z",
	                         "warn", msg, kv);
	struct jv *v;

	CHECK(n > 0 && line[n - 1] == '\n');
	CHECK(strchr(line, '\n') == line + n - 1); /* one line */
	v = jv_parse(line, n, 4, err, sizeof(err));
	CHECK(v != NULL);
	CHECK_STR(jv_str(jv_get(v, "ts")), "2026-12-01T00:00:00Z");
	CHECK_STR(jv_str(jv_get(v, "level")), "warn");
	CHECK_STR(jv_str(jv_get(v, "msg")),
	          "quote \" back \\ nl \n tab \t ctl \x01 del \x7f utf8 "
	          "\xc3\xa9 bad \xef\xbf\xbd\xef\xbf\xbd end");
	CHECK_STR(jv_str(jv_get(jv_get(v, "fields"), "sandbox")), "01J\"x");
	CHECK_STR(jv_str(jv_get(jv_get(v, "fields"), "bytes")), "12");
	jv_free(v);
	CHECK(strstr(line, "\\u0001") != NULL);
	CHECK(strstr(line, "\\ufffd") != NULL);
}

static void
log_json_long_message_stays_json(void)
{
	static char msg[8000];
	char line[2048], err[128];
	struct jv *v;
	size_t n;

	for (size_t i = 0; i < sizeof(msg) - 1; i++)
		msg[i] = i % 3 ? '"' : 'x'; /* two bytes each when escaped */
	n = log_json_line(line, sizeof(line), "t", "info", msg, NULL);
	CHECK(n < sizeof(line));
	v = jv_parse(line, n, 4, err, sizeof(err));
	CHECK(v != NULL);
	CHECK(v && jv_str_len(jv_get(v, "msg")) > 500);
	jv_free(v);
	CHECK(log_format_parse("json") == LOG_JSON);
	CHECK(log_format_parse("text") == LOG_TEXT);
	CHECK(log_format_parse("JSON") < 0);
}

static void
config_log_format(void)
{
	struct config c;
	char err[256];

	setenv("SANDBOXD_ENV_FILE", "/dev/null", 1);
	setenv("SANDBOXD_DATA_DIR", "/tmp/sandboxd-unit", 1);
	setenv("SANDBOXD_LOG_FORMAT", "yaml", 1);
	CHECK(config_load(&c, err, sizeof(err)) < 0);
	CHECK(strstr(err, "SANDBOXD_LOG_FORMAT") != NULL);
	setenv("SANDBOXD_LOG_FORMAT", "json", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR(c.log_format, "json");
	config_release(&c);
	unsetenv("SANDBOXD_LOG_FORMAT");
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR(c.log_format, "text");
	CHECK(c.disk_usage_interval_s == 300);
	config_release(&c);
	log_set_format(LOG_TEXT);
}

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char good_manifest[] =
    "{\"format\":1,\"version\":\"0.1.0\",\"schema_version\":7,"
    "\"created_at\":\"2026-12-01T22:00:00Z\",\"data_dir\":\"/var/lib/"
    "sandboxd\",\"counts\":{\"apps\":50,\"sandboxes\":2,\"tasks\":9,"
    "\"secrets\":3},\"secrets_key\":\"file\",\"files\":[{\"name\":"
    "\"sandboxd.db\",\"sha256\":\"" HEX_A "\",\"bytes\":4096},{\"name\":"
    "\"secret.key\",\"sha256\":\"" HEX_B "\",\"bytes\":45}],"
    "\"workspaces\":{\"included\":true,\"count\":2,\"bytes\":1000}}";

static void
manifest_parse_and_round_trip(void)
{
	struct backup_manifest m, again;
	char err[256];
	struct buf b;

	CHECK(backup_manifest_parse(good_manifest, strlen(good_manifest), &m,
	                            err, sizeof(err)) == 0);
	CHECK(m.format == 1 && m.schema_version == 7);
	CHECK(m.counts.apps == 50 && m.counts.tasks == 9);
	CHECK(!m.key_external && m.workspaces && m.workspaces_count == 2);
	CHECK(m.nfiles == 2);
	CHECK_STR(m.files[1].name, "secret.key");
	CHECK_STR(m.files[1].sha256, HEX_B);
	CHECK_STR(m.data_dir, "/var/lib/sandboxd");
	buf_init(&b, BACKUP_MANIFEST_BYTES);
	CHECK(backup_manifest_dump(&m, &b) == 0);
	CHECK(backup_manifest_parse(b.data, b.len, &again, err, sizeof(err)) ==
	      0);
	CHECK(again.nfiles == 2 && again.counts.secrets == 3);
	CHECK_STR(again.files[0].sha256, HEX_A);
	CHECK(!again.releases);
	buf_release(&b);
}

/* Format 2 with the published apps' releases and their list. */
static const char releases_manifest[] =
    "{\"format\":2,\"version\":\"0.1.0\",\"schema_version\":17,"
    "\"created_at\":\"2026-12-05T03:00:00Z\",\"data_dir\":\"/d\","
    "\"counts\":{\"apps\":1},\"secrets_key\":\"external\",\"files\":["
    "{\"name\":\"sandboxd.db\",\"sha256\":\"" HEX_A "\",\"bytes\":1},"
    "{\"name\":\"releases.list\",\"sha256\":\"" HEX_B "\",\"bytes\":9}],"
    "\"workspaces\":{\"included\":false},\"releases\":{\"included\":"
    "true,\"apps\":1,\"bytes\":5000}}";

static void
manifest_releases(void)
{
	struct backup_manifest m, again;
	char err[256];
	struct buf b;

	CHECK(backup_manifest_parse(releases_manifest,
	                            strlen(releases_manifest), &m, err,
	                            sizeof(err)) == 0);
	CHECK(m.releases && m.releases_apps == 1 && m.releases_bytes == 5000);
	CHECK(!m.workspaces && backup_manifest_lists(&m, BACKUP_REL_LIST));
	buf_init(&b, BACKUP_MANIFEST_BYTES);
	CHECK(backup_manifest_dump(&m, &b) == 0);
	CHECK(strstr(b.data, "\"releases\":{") != NULL);
	CHECK(backup_manifest_parse(b.data, b.len, &again, err, sizeof(err)) ==
	      0);
	CHECK(again.releases && again.releases_bytes == 5000);
	buf_release(&b);
	CHECK(backup_file_known(BACKUP_REL_LIST));
}

static void
manifest_refusals(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"[]", "not a JSON object"},
	    {"{\"format\":3}", "format 3"},
	    /* Format 2 with workspaces must list them. */
	    {"{\"format\":2,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"external\","
	     "\"schema_version\":7,\"files\":[{\"name\":\"sandboxd.db\","
	     "\"sha256\":\"" HEX_A "\",\"bytes\":1}],\"workspaces\":{"
	     "\"included\":true}}",
	     "workspaces.list must be listed"},
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"file\",\"schema_version\":"
	     "7,\"files\":[{\"name\":\"../../etc/passwd\",\"sha256\":\"" HEX_A
	     "\",\"bytes\":1}]}",
	     "not one a backup holds"},
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"file\",\"schema_version\":"
	     "7,\"files\":[{\"name\":\"sandboxd.db\",\"sha256\":\"XYZ\","
	     "\"bytes\":1}]}",
	     "not one a backup holds"},
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"file\",\"schema_version\":"
	     "7,\"files\":[{\"name\":\"sandboxd.db\",\"sha256\":\"" HEX_A
	     "\",\"bytes\":1}]}",
	     "lists no secret.key"},
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"cloud\",\"schema_version\":"
	     "7,\"files\":[]}",
	     "not file or external"},
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"external\","
	     "\"schema_version\":7,\"files\":[]}",
	     "lists no sandboxd.db"},
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"external\","
	     "\"schema_version\":7,\"files\":[{\"name\":\"sandboxd.db\","
	     "\"sha256\":\"" HEX_A "\",\"bytes\":1},{\"name\":\"sandboxd.db\","
	     "\"sha256\":\"" HEX_A "\",\"bytes\":1}]}",
	     "listed twice"},
	    /* No "files" at all (the fuzzer's first find). */
	    {"{\"format\":1,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"file\",\"schema_version\":"
	     "7}",
	     "files must be an array"},
	    /* Releases included must be listed, and listed only then. */
	    {"{\"format\":2,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"external\","
	     "\"schema_version\":7,\"files\":[{\"name\":\"sandboxd.db\","
	     "\"sha256\":\"" HEX_A "\",\"bytes\":1}],\"releases\":{"
	     "\"included\":true}}",
	     "releases.list must be listed"},
	    {"{\"format\":2,\"version\":\"x\",\"created_at\":\"t\","
	     "\"data_dir\":\"/d\",\"secrets_key\":\"external\","
	     "\"schema_version\":7,\"files\":[{\"name\":\"sandboxd.db\","
	     "\"sha256\":\"" HEX_A "\",\"bytes\":1},{\"name\":"
	     "\"releases.list\",\"sha256\":\"" HEX_A "\",\"bytes\":1}]}",
	     "releases.list must be listed"},
	    {"{\"format\":1", NULL},
	};
	struct backup_manifest m;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(backup_manifest_parse(bad[i].text, strlen(bad[i].text),
		                            &m, err, sizeof(err)) < 0);
		if (bad[i].why && strstr(err, bad[i].why) == NULL) {
			fprintf(stderr, "  case %zu: %s\n", i, err);
			CHECK(!"the error names the problem");
		}
	}
	CHECK(backup_file_known("sandboxd.db"));
	CHECK(!backup_file_known("sandboxd.db-wal"));
	CHECK(!backup_file_known("workspaces"));
}

static void
list_lines_parse_and_round_trip(void)
{
	static const char *const good[] = {
	    "f 0644 7 1764626400 " HEX_A " 01JD/workspace/app/a.txt",
	    "d 0700 0 -5 - 01JD",
	    "l 0777 17 0 ../pkg/bin/cli.js 01JD/node_modules/.bin/cli",
	    "l 0777 16 0 /usr/bin/python3 01JD/.venv/bin/python",
	    "f 0600 0 1 " HEX_B " 01JD/odd%20name%0A%25%FF.txt",
	};
	static struct backup_entry e, again;
	char err[256];
	struct buf b;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(backup_entry_parse(good[i], strlen(good[i]), &e, err,
		                         sizeof(err)) == 0);
		buf_init(&b, BACKUP_LINE_MAX + 1);
		CHECK(backup_entry_format(&e, &b) == 0);
		CHECK(b.len == strlen(good[i]) + 1 &&
		      memcmp(b.data, good[i], b.len - 1) == 0);
		CHECK(backup_entry_parse(b.data, b.len - 1, &again, err,
		                         sizeof(err)) == 0);
		CHECK_STR(again.path, e.path);
		buf_release(&b);
	}
	CHECK(backup_entry_parse(good[4], strlen(good[4]), &e, err,
	                         sizeof(err)) == 0);
	CHECK_STR(e.path, "01JD/odd name\n%\xff.txt");
	CHECK(backup_entry_parse(good[2], strlen(good[2]), &e, err,
	                         sizeof(err)) == 0);
	CHECK(e.type == 'l' && e.size == 17);
	CHECK_STR(e.target, "../pkg/bin/cli.js");
	/* The order of a walk: a directory, its entries, then its sibling. */
	CHECK(backup_path_cmp("a", "a/b") < 0);
	CHECK(backup_path_cmp("a/b", "a-b") < 0);
	CHECK(backup_path_cmp("a/z/z", "a-b") < 0);
	CHECK(backup_path_cmp("a-b", "b") < 0);
	CHECK(backup_path_cmp("a/b", "a/b") == 0);
}

static void
list_line_refusals(void)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
	    {"f 4755 7 1 " HEX_A " 01JD/suid", "set-id"},
	    {"d 1777 0 1 - 01JD/tmp", "sticky"},
	    {"p 0644 0 1 - 01JD/pipe", "type p"},
	    {"f 0644 7 1 " HEX_A " 01JD/../../etc/passwd", "bad path"},
	    {"f 0644 7 1 " HEX_A " /etc/passwd", "bad path"},
	    {"f 0644 7 1 " HEX_A " 01JD//a", "bad path"},
	    {"f 0644 7 1 " HEX_A " 01JD/a/", "bad path"},
	    {"f 0644 7 1 " HEX_A " 01JD/./a", "bad path"},
	    {"f 0644 7 1 " HEX_A " 01JD%2F..%2Fx", "bad path"}, /* '/' spelt */
	    {"f 0644 7 1 " HEX_A " 01JD/a%00b", "bad path"},
	    {"f 0644 7 1 XYZ 01JD/a", "bad sha256"},
	    {"f 0644 -7 1 " HEX_A " 01JD/a", "bad size"},
	    {"l 0777 3 1 ../x 01JD/a", "bad link target"},
	    {"d 0755 0 1 x 01JD", "a directory has none"},
	    {"f 0644 7 1 " HEX_A, "not six fields"},
	    {"", "not six fields"},
	};
	static struct backup_entry e;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(backup_entry_parse(bad[i].line, strlen(bad[i].line), &e,
		                         err, sizeof(err)) < 0);
		if (strstr(err, bad[i].why) == NULL) {
			fprintf(stderr, "  case %zu: %s\n", i, err);
			CHECK(!"the error names the problem");
		}
	}
}

static void
doctor_tcp_lines(void)
{
	unsigned port;
	unsigned long ino;

	CHECK(!doctor_tcp_listen_line(
	    "  sl  local_address rem_address   st tx_queue rx_queue tr "
	    "tm->when retrnsmt   uid  timeout inode",
	    &port, &ino));
	CHECK(doctor_tcp_listen_line(
	    "   0: 00000000:0050 00000000:0000 0A 00000000:00000000 "
	    "00:00000000 "
	    "00000000     0        0 31337 1 0000000000000000 100 0 0 10 0",
	    &port, &ino));
	CHECK(port == 80 && ino == 31337);
	/* tcp6, and an established socket is no listener. */
	CHECK(doctor_tcp_listen_line(
	    "   1: 00000000000000000000000000000000:01BB "
	    "00000000000000000000000000000000:0000 0A 00000000:00000000 "
	    "00:00000000 00000000     0        0 42 1 0000000000000000 100 0 0 "
	    "10 0",
	    &port, &ino));
	CHECK(port == 443 && ino == 42);
	CHECK(!doctor_tcp_listen_line(
	    "   2: 0100007F:0050 0100007F:D431 01 00000000:00000000 "
	    "00:00000000 "
	    "00000000     0        0 7 1 0000000000000000 20 4 30 10 -1",
	    &port, &ino));
}

static void
doctor_thresholds(void)
{
	const uint64_t g = 1ull << 30;

	CHECK(doctor_disk_level(50 * g, 100 * g) == DOCTOR_OK);
	CHECK(doctor_disk_level(8 * g, 100 * g) == DOCTOR_WARN);   /* < 10 % */
	CHECK(doctor_disk_level(4 * g, 20 * g) == DOCTOR_WARN);    /* < 5 GiB */
	CHECK(doctor_disk_level(g / 2, 20 * g) == DOCTOR_FAIL);    /* < 1 GiB */
	CHECK(doctor_disk_level(15 * g, 1000 * g) == DOCTOR_FAIL); /* < 2 % */
	CHECK(doctor_mem_level(8000, 16000, 2048, 15) == DOCTOR_OK);
	CHECK(doctor_mem_level(1500, 16000, 2048, 15) == DOCTOR_WARN);
	CHECK(doctor_mem_level(2100, 16000, 2048, 15) == DOCTOR_WARN);
	CHECK(doctor_mem_level(400, 16000, 2048, 15) == DOCTOR_FAIL);
}

static void
doctor_traverse_rule(void)
{
	CHECK(doctor_can_traverse(S_IFDIR | 0755, 0, 0, 1000, 1000));
	CHECK(!doctor_can_traverse(S_IFDIR | 0700, 0, 0, 1000, 1000));
	CHECK(doctor_can_traverse(S_IFDIR | 0711, 0, 0, 1000, 1000));
	CHECK(doctor_can_traverse(S_IFDIR | 0700, 1000, 0, 1000, 1000));
	/* The owner's bits decide for the owner, even when others have x. */
	CHECK(!doctor_can_traverse(S_IFDIR | 0601, 1000, 0, 1000, 1000));
	CHECK(doctor_can_traverse(S_IFDIR | 0710, 0, 1000, 1000, 1000));
	CHECK(!doctor_can_traverse(S_IFDIR | 0701, 0, 1000, 1000, 1000));
}

static void
doctor_times_and_versions(void)
{
	CHECK(doctor_parse_time("2026-12-01T22:30:00Z") == 1796164200);
	CHECK(doctor_parse_time("2026-12-01T22:30:00.123456789Z") ==
	      1796164200);
	CHECK(doctor_parse_time("2026-12-01T23:30:00.5+01:00") == 1796164200);
	CHECK(doctor_parse_time("2026-12-01 22:30:00") < 0);
	CHECK(doctor_parse_time("2026-12-01T22:30:00") < 0);
	CHECK(doctor_parse_time("") < 0);
	CHECK(doctor_compose_major("1.29.2") == 1);
	CHECK(doctor_compose_major("v2.20.3") == 2);
	CHECK(doctor_compose_major("2.20.3+ds1-0+deb12u1") == 2);
	CHECK(doctor_compose_major("docker: 'compose' is not a docker "
	                           "command.") == 0);
	CHECK(doctor_compose_major("") == 0);
}

static const struct unit_test tests[] = {
    {"metrics: the text format, one HELP/TYPE per family, cumulative "
     "buckets",
     metrics_text_format},
    {"metrics: label values are escaped", metrics_label_escaping},
    {"log: a JSON line escapes quotes, controls and bad UTF-8",
     log_json_escapes},
    {"log: a long message is cut and the line stays JSON",
     log_json_long_message_stays_json},
    {"config: SANDBOXD_LOG_FORMAT is text or json", config_log_format},
    {"backup: a manifest parses and round-trips",
     manifest_parse_and_round_trip},
    {"backup: manifests that name other files or lack one are refused",
     manifest_refusals},
    {"backup: a manifest with the releases parses and round-trips",
     manifest_releases},
    {"backup: a list's lines parse, round-trip and sort as a walk",
     list_lines_parse_and_round_trip},
    {"backup: a list's line with a bad path, mode, type or data is refused",
     list_line_refusals},
    {"doctor: /proc/net/tcp listeners", doctor_tcp_lines},
    {"doctor: disk and memory thresholds", doctor_thresholds},
    {"doctor: who may pass through a directory", doctor_traverse_rule},
    {"doctor: engine times and compose versions", doctor_times_and_versions},
};

int
main(void)
{
	return UNIT_RUN("ops", tests);
}
