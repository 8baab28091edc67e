#!/usr/bin/env bash
# A hostile sandbox against the real daemon, acting from inside its own
# container as uid 1000 (and from the edge as an anonymous client), with
# a second tenant beside it.  Each case ends with the daemon answering
# the other tenant within RESPONSIVE_MS and the attacker's own request
# failing (or degrading) with a clear error:
#   a. the supervisor socket replaced by a listener that never accepts,
#      its backlog full: the other tenant's status, stop and start answer
#      at once, eight concurrent status requests for the attacker hold no
#      one else, and the attacker's status says its supervisor does not
#      accept connections (preview.status error);
#   b. sandbox.yaml a FIFO, then a stop and a wake (an anonymous preview
#      request and POST start): no start blocks, the other tenant is
#      answered meanwhile, the attacker's sandbox starts with the manifest
#      error "not a regular file", and the files API refuses the FIFO at
#      once.
# A sparse or endlessly growing agent.out and steps are covered by the
# unit tests of task/derive (tests/unit/test_task_derive.c).
. "$(dirname "$0")/lib.sh"
need_docker

RESPONSIVE_MS=2000
MAL_TOKEN=tok-mal-$RANDOM$RANDOM
EDGE_PORT=$(free_port)
start_daemon SANDBOXD_NETWORK=none "SANDBOXD_API_TOKENS=it=$IT_TOKEN,mal=$MAL_TOKEN" \
	"HTTP_PORT=$EDGE_PORT" SANDBOXD_EDGE_ADDR=127.0.0.1 ||
	bail "the daemon did not come up"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# timed METHOD PATH [BODY] as the victim tenant: sets MS (and STATUS, BODY).
timed() {
	local t0
	t0=$(now_ms)
	api "$@"
	MS=$(($(now_ms) - t0))
}
timed_mal() {
	local t0
	t0=$(now_ms)
	api_as "$MAL_TOKEN" "$@"
	MS=$(($(now_ms) - t0))
}

# other_tenant_answers WHAT: the victim's sandbox status within RESPONSIVE_MS.
other_tenant_answers() {
	timed GET "/v1/sandboxes/$V"
	[[ $STATUS == 200 && $(j .status) == running ]] ||
		t_err "$1: GET the other tenant's sandbox: $STATUS $(short_body)"
	((MS <= RESPONSIVE_MS)) ||
		t_err "$1: the other tenant's status took $MS ms (> $RESPONSIVE_MS)"
}

t_begin "setup: one sandbox per tenant, both ready"
create_app victim && create_sandbox "$APP_ID" && V=$SB_ID
TOKEN=$MAL_TOKEN
create_app attacker && create_sandbox "$APP_ID" && A=$SB_ID
A_APP=$APP_ID
TOKEN=$IT_TOKEN
[[ -n ${V:-} && -n ${A:-} ]] || bail "no sandboxes"
wait_sb "$V" '.preview.status == "ready"' 90
TOKEN=$MAL_TOKEN wait_sb "$A" '.preview.status == "ready"' 90
AC=$(container_of "$A")
t_end

# --- a. a listener that never accepts at the supervisor's socket path ------

t_begin "a: the supervisor socket is replaced by a full-backlog listener that never accepts"
docker exec -d -u 1000 "$AC" python3 -c '
import os, socket, time
p = "/home/sandbox/.sandboxd/sock"
os.rename(p, p + ".real")
s = socket.socket(socket.AF_UNIX)
s.bind(p)
s.listen(0)
held = []
for i in range(16):
    c = socket.socket(socket.AF_UNIX)
    c.setblocking(False)
    try:
        c.connect(p)
    except OSError:
        pass
    held.append(c)
open("/tmp/planted", "w").close()
time.sleep(3600)
'
wait_until 10 docker exec "$AC" test -e /tmp/planted ||
	t_err "the listener was not planted"
other_tenant_answers "right after"
t_end

t_begin "a: the attacker's status answers within ${RESPONSIVE_MS} ms and says its supervisor does not answer"
timed_mal GET "/v1/sandboxes/$A"
expect_status 200
((MS <= RESPONSIVE_MS)) || t_err "the attacker's status took $MS ms"
expect_jq '.status == "running" and .preview.status == "error"' &&
	expect_jq '.preview.detail | test("supervisor")'
note "first status $MS ms: $(j .preview.detail)"
timed_mal GET "/v1/sandboxes/$A"
((MS <= 500)) || t_err "a second status within the quiet window took $MS ms"
expect_jq '.preview.status == "error"'
t_end

t_begin "a: eight concurrent status requests for the attacker hold up no one else"
pids=()
for i in 1 2 3 4 5 6 7 8; do
	curl -s -o /dev/null --max-time 30 -H "Authorization: Bearer $MAL_TOKEN" \
		"$API_URL/v1/sandboxes/$A" &
	pids+=($!)
done
sleep 0.2
for i in 1 2 3; do other_tenant_answers "concurrent round $i"; done
t0=$(now_ms)
wait "${pids[@]}"
ms=$(($(now_ms) - t0))
((ms <= 3000)) || t_err "the attacker's own requests took $ms ms"
t_end

t_begin "a: the other tenant's stop and start work, the attacker's too"
timed POST "/v1/sandboxes/$V/stop"
expect_status 200 && expect_json .status stopped
timed POST "/v1/sandboxes/$V/start"
expect_status 200 && expect_json .status running
wait_sb "$V" '.preview.status == "ready"' 60
timed_mal POST "/v1/sandboxes/$A/stop"
expect_status 200
((MS <= 15000)) || t_err "the attacker's stop took $MS ms"
other_tenant_answers "after the attacker's stop"
TOKEN=$MAL_TOKEN
api POST "/v1/sandboxes/$A/start"
expect_status 200
wait_sb "$A" '.preview.status == "ready"' 60
TOKEN=$IT_TOKEN
t_end

# --- b. sandbox.yaml a FIFO, then a wake ---------------------------------------

t_begin "b: sandbox.yaml becomes a FIFO; the files API refuses it at once"
AC=$(container_of "$A")
docker exec -u 1000 "$AC" sh -c \
	'cd /home/sandbox/workspace/app && rm -f sandbox.yaml && mkfifo sandbox.yaml' ||
	t_err "mkfifo failed"
timed_mal GET "/v1/sandboxes/$A/files/content?path=sandbox.yaml"
expect_status 400 && expect_jq '.error.message | test("not a regular file")'
((MS <= RESPONSIVE_MS)) || t_err "reading the FIFO took $MS ms"
t_end

t_begin "b: a stop, then a wake by an anonymous preview request and POST start: nothing blocks"
timed_mal POST "/v1/sandboxes/$A/stop"
expect_status 200 && expect_json .status stopped
host="s-${A,,}-3000.preview.localhost:$EDGE_PORT"
curl -s -o /dev/null --max-time 20 -H "Host: $host" "http://127.0.0.1:$EDGE_PORT/" &
edge_pid=$!
sleep 0.3
other_tenant_answers "during the wake"
timed_mal POST "/v1/sandboxes/$A/start"
expect_status 200 && expect_json .status running
((MS <= 15000)) || t_err "the attacker's start took $MS ms"
other_tenant_answers "after the attacker's start"
wait "$edge_pid"
t_end

t_begin "b: the attacker's sandbox runs with a clear manifest error"
TOKEN=$MAL_TOKEN
wait_sb "$A" '.manifest.valid == false' 30 &&
	expect_jq '.manifest.error | test("sandbox.yaml") and test("not a regular file")'
TOKEN=$IT_TOKEN
note "manifest: $(j .manifest)"
t_end

t_begin "b: the other tenant's stop and start work afterwards"
timed POST "/v1/sandboxes/$V/stop"
expect_status 200
timed POST "/v1/sandboxes/$V/start"
expect_status 200 && expect_json .status running
wait_sb "$V" '.preview.status == "ready"' 60
other_tenant_answers "at the end"
t_end

api_as "$MAL_TOKEN" DELETE "/v1/apps/$A_APP"
finish
