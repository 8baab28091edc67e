#!/usr/bin/env bash
# Publishing through the command line against the real daemon: a
# react-vite preset app published with --follow (the build's log lines
# printed while it builds, exit 0 and the URL), served by its host
# through the edge; `releases` marks it active; a second publish read
# straight from the log route with curl -N (log events in order, ids
# rising, `end` last with the release; a resume by Last-Event-ID gives
# the rest and nothing twice; the text/plain log holds the same lines);
# rollback by number; another tenant's app and release are 404 (route
# and CLI); a failed build with --follow exits 1 with its error and
# leaves the release before it serving; Ctrl-C on --follow leaves the
# build going, and a client that never reads its stream holds nothing
# back; unpublish.
. "$(dirname "$0")/lib.sh"
need_docker

OTHER=tok-other-tenant-$RANDOM
EDGE_PORT=$(free_port)
start_daemon HTTP_PORT="$EDGE_PORT" \
	SANDBOXD_EDGE_ADDR=127.0.0.1 SANDBOXD_API_TOKENS="it=$IT_TOKEN,other=$OTHER" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
TOKEN=$IT_TOKEN
# shellcheck disable=SC2034 # read by edge_get (lib.sh)
EDGE=http://127.0.0.1:$EDGE_PORT

export SANDBOXD_API=$API_URL
export SANDBOXD_TOKEN=$IT_TOKEN
export XDG_CONFIG_HOME=$IT_TMP/xdg # never the real user's config
sbd() { "$SANDBOXD_BIN" "$@" </dev/null; }

# stamp: each line of stdin prefixed with the time it came, in ms.
stamp() {
	local l
	while IFS= read -r l; do printf '%s %s\n' "$(date +%s%3N)" "$l"; done
}

# The host of a URL (no scheme, no port).
url_host() { sed -E 's#^https?://##; s#[:/].*$##' <<<"$1"; }

t_begin "setup: a react-vite app and its sandbox, through the CLI"
APP=$(sbd app create shop --preset react-vite -q)
ulid_ok "$APP" || bail "app create -q printed '$APP'"
SB=$(sbd sandbox create "$APP" -q)
ulid_ok "$SB" || bail "sandbox create -q printed '$SB'"
# As a user would: the app's files are in place once its preview runs.
for ((i = 0; i < 360; i++)); do
	[[ $(sbd sandbox show "$SB" --json | jq -r .preview.status) == ready ]] && break
	sleep 0.25
done
[[ $(sbd sandbox show "$SB" --json | jq -r .preview.status) == ready ]] ||
	t_err "the preview is not ready: $(sbd sandbox show "$SB" --json | head -c 300)"
t_end

# --- publish --follow ------------------------------------------------------------

t_begin "publish --follow: log lines while it builds, exit 0, the URL"
sbd publish "$APP" --follow 2>"$IT_TMP/p1.err" | stamp >"$IT_TMP/p1.out"
RC=${PIPESTATUS[0]}
((RC == 0)) || t_err "exit $RC; stderr: $(cat "$IT_TMP/p1.err"); stdout: $(tail -n 5 "$IT_TMP/p1.out")"
head1=$(sed -n 1p "$IT_TMP/p1.out" | cut -d' ' -f2-)
RID1=$(awk '{print $3}' <<<"$head1")
[[ $head1 =~ ^release\ #1\ [0-9A-Z]{26}\ building ]] || t_err "first line: '$head1'"
ulid_ok "$RID1" || t_err "no release id in '$head1'"
URL=$(sed -n 2p "$IT_TMP/p1.out" | cut -d' ' -f2- | sed -n 's/^url: //p')
[[ $URL == http://* ]] || t_err "second line is not 'url: http://…': $(sed -n 2p "$IT_TMP/p1.out")"
ready=$(grep -n ' release #1 ready (static, ' "$IT_TMP/p1.out" | head -n 1)
[[ -n $ready ]] || t_err "no 'release #1 ready (static, …)' line: $(tail -n 5 "$IT_TMP/p1.out")"
[[ $(tail -n 1 "$IT_TMP/p1.out" | cut -d' ' -f2-) == "$URL" ]] ||
	t_err "the last line is not the URL: $(tail -n 1 "$IT_TMP/p1.out")"
# The log: the lines between the head and the end, with the build's own.
nlog=$(($(cut -d: -f1 <<<"$ready") - 3))
((nlog >= 2)) || t_err "only $nlog log lines were printed"
grep -q 'vite' "$IT_TMP/p1.out" || t_err "the build's output (vite) is not in the log printed: $(cat "$IT_TMP/p1.out")"
# Streamed: the first log line came well before the end (a log printed
# only at the end would come in one burst).
t_first=$(sed -n 3p "$IT_TMP/p1.out" | cut -d' ' -f1)
t_ready=$(cut -d: -f2 <<<"$ready" | cut -d' ' -f1)
((t_ready - t_first >= 1000)) ||
	t_err "the first log line came $((t_ready - t_first)) ms before the end, not while it built"
note "publish --follow: $nlog log lines, the first $((t_ready - t_first)) ms before the end"
t_end

HOST=$(url_host "$URL")
t_begin "the release serves at its host through the edge"
edge_get "$HOST" /
[[ $E_STATUS == 200 && $E_BODY == *'<div id="root">'* ]] ||
	t_err "GET / at $HOST: $E_STATUS $(head -c 200 <<<"$E_BODY")"
t_end

t_begin "releases: a table with the release active; -q the ids; --json the API's"
out=$(sbd releases "$APP")
grep -qE '^ACTIVE +# +ID +STATUS +KIND +COMMIT +SIZE +AGE' <<<"$out" || t_err "no header: $out"
grep -qE "^\* +1 +$RID1 +ready +static +[0-9a-f-]+ +[0-9.]+ (B|KiB|MiB) +[0-9]+[smhd]\$" <<<"$out" ||
	t_err "no active row for release 1: $out"
[[ $(sbd releases "$APP" -q) == "$RID1" ]] || t_err "releases -q: $(sbd releases "$APP" -q)"
[[ $(sbd releases "$APP" --json | jq -r '.releases[0] | "\(.id) \(.active)"') == "$RID1 true" ]] ||
	t_err "releases --json: $(sbd releases "$APP" --json | head -c 300)"
t_end

# --- the log route, straight --------------------------------------------------

t_begin "publish again (-q: the id); its log with curl -N: lines in order, end last"
RID2=$(sbd publish "$APP" -q)
ulid_ok "$RID2" || t_err "publish -q printed '$RID2'"
LOGURL="$API_URL/v1/apps/$APP/releases/$RID2/log"
curl -sN --max-time 170 -H "Authorization: Bearer $IT_TOKEN" -H 'Accept: text/event-stream' \
	-D "$IT_TMP/sse.head" "$LOGURL" >"$IT_TMP/sse.out"
grep -qi '^content-type: text/event-stream' "$IT_TMP/sse.head" || t_err "not an event stream: $(cat "$IT_TMP/sse.head")"
# The events' names in order: log… then end, once, last.
events=$(sed -n 's/^event: //p' "$IT_TMP/sse.out")
[[ $(tail -n 1 <<<"$events") == end ]] || t_err "the last event is not end: $(tail -n 3 <<<"$events")"
[[ $(grep -c '^end$' <<<"$events") == 1 ]] || t_err "end is not once"
[[ $(grep -vc '^log$' <<<"$events") == 1 ]] || t_err "events other than log and end: $(sort -u <<<"$events")"
nlog2=$(grep -c '^log$' <<<"$events")
((nlog2 >= 2)) || t_err "$nlog2 log events"
# ids rising: each the byte offset after its line.
sed -n 's/^id: //p' "$IT_TMP/sse.out" >"$IT_TMP/ids"
sort -n -c "$IT_TMP/ids" 2>/dev/null && [[ $(sort -un "$IT_TMP/ids" | wc -l) == $(wc -l <"$IT_TMP/ids") ]] ||
	t_err "ids not rising: $(tr '\n' ' ' <"$IT_TMP/ids")"
end=$(grep -A1 '^event: end$' "$IT_TMP/sse.out" | sed -n 's/^data: //p')
[[ $(jq -r '"\(.id) \(.number) \(.status) \(.kind) \(.active)"' <<<"$end") == "$RID2 2 ready static true" ]] ||
	t_err "end's release: $end"
t_end

t_begin "the log: a resume by Last-Event-ID gives the rest, nothing twice; text/plain has the lines"
mid=$(sed -n "$(((nlog2 + 1) / 2))p" "$IT_TMP/ids")
curl -sN --max-time 30 -H "Authorization: Bearer $IT_TOKEN" -H "Last-Event-ID: $mid" \
	"$LOGURL?follow=1" >"$IT_TMP/sse2.out"
sed -n 's/^id: //p' "$IT_TMP/sse2.out" >"$IT_TMP/ids2"
[[ $(awk -v m="$mid" '$1 > m' "$IT_TMP/ids") == "$(cat "$IT_TMP/ids2")" ]] ||
	t_err "after $mid: $(tr '\n' ' ' <"$IT_TMP/ids2"), want $(awk -v m="$mid" '$1 > m' "$IT_TMP/ids" | tr '\n' ' ')"
[[ $(sed -n 's/^event: //p' "$IT_TMP/sse2.out" | tail -n 1) == end ]] || t_err "the resumed stream has no end"
api GET "/v1/apps/$APP/releases/$RID2/log"
expect_status 200
[[ $(header Content-Type) == text/plain* ]] || t_err "text log's type: $(header Content-Type)"
first=$(grep -m1 -A0 '^data: ' "$IT_TMP/sse.out" | sed 's/^data: //')
[[ -n $first && $BODY == *"$first"* ]] || t_err "the text log lacks the first line '$first'"
api_hdr 'Last-Event-ID: x' GET "/v1/apps/$APP/releases/$RID2/log?follow=1"
expect_status 400
t_end

t_begin "rollback by number: release 1 is served again, at once"
sbd rollback "$APP" 1 >"$IT_TMP/rb.out" 2>"$IT_TMP/rb.err" || t_err "rollback exit $?: $(cat "$IT_TMP/rb.err")"
grep -q "serves release 1 again at $URL" "$IT_TMP/rb.out" || t_err "rollback said: $(cat "$IT_TMP/rb.out")"
grep -qE "^\* +1 +$RID1 " <<<"$(sbd releases "$APP")" || t_err "release 1 not active: $(sbd releases "$APP")"
grep -qE "^ +2 +$RID2 +ready" <<<"$(sbd releases "$APP")" || t_err "release 2 not listed inactive"
edge_get "$HOST" /
[[ $E_STATUS == 200 ]] || t_err "GET / after the rollback: $E_STATUS"
sbd rollback "$APP" 9 >/dev/null 2>"$IT_TMP/rb9.err"
RC=$?
((RC == 5)) && grep -q 'no release #9' "$IT_TMP/rb9.err" || t_err "rollback to #9: exit $RC $(cat "$IT_TMP/rb9.err")"
t_end

t_begin "another tenant: the log, the releases and a publish are 404"
api_as "$OTHER" GET "/v1/apps/$APP/releases/$RID1/log"
expect_status 404 && expect_envelope not_found
api_as "$OTHER" GET "/v1/apps/$APP/releases/$RID1/log?follow=1"
expect_status 404
SANDBOXD_TOKEN=$OTHER sbd releases "$APP" >/dev/null 2>&1
RC=$?
((RC == 5)) || t_err "releases as the other tenant: exit $RC, want 5"
SANDBOXD_TOKEN=$OTHER sbd publish "$APP" >/dev/null 2>&1
RC=$?
((RC == 5)) || t_err "publish as the other tenant: exit $RC, want 5"
# A release of another app of the same tenant is not this app's.
APP2=$(sbd app create other-app -q)
api GET "/v1/apps/$APP2/releases/$RID1/log"
expect_status 404
t_end

# --- a failed build --------------------------------------------------------------

t_begin "a failed build: --follow exits 1 with the error; release 1 keeps serving"
cat >"$IT_TMP/sandbox.yaml" <<'EOF'
version: 1
web:
  command: npm run dev
  port: 3000
  health_path: /
publish:
  build: echo about-to-fail-on-purpose && exit 3
  output: dist
EOF
"$SANDBOXD_BIN" sandbox put "$SB" sandbox.yaml -q <"$IT_TMP/sandbox.yaml" || t_err "cannot write sandbox.yaml"
"$SANDBOXD_BIN" publish "$APP" --follow >"$IT_TMP/p3.out" 2>"$IT_TMP/p3.err" </dev/null
RC=$?
((RC == 1)) || t_err "exit $RC, want 1; stderr: $(cat "$IT_TMP/p3.err")"
grep -q 'about-to-fail-on-purpose' "$IT_TMP/p3.out" || t_err "the build's line is not printed: $(cat "$IT_TMP/p3.out")"
grep -qE '^error: release [0-9A-Z]{26} failed: .+ \(build_failed\)$' "$IT_TMP/p3.err" ||
	t_err "stderr: $(cat "$IT_TMP/p3.err")"
grep -qE "^\* +1 +$RID1 " <<<"$(sbd releases "$APP")" || t_err "release 1 is not active: $(sbd releases "$APP")"
grep -qE '^ +3 +[0-9A-Z]{26} +failed ' <<<"$(sbd releases "$APP")" || t_err "release 3 not failed"
edge_get "$HOST" /
[[ $E_STATUS == 200 && $E_BODY == *'<div id="root">'* ]] || t_err "GET / after the failure: $E_STATUS"
t_end

t_begin "Ctrl-C on --follow: exit 130, the build goes on; a stalled reader holds nothing back"
cat >"$IT_TMP/sandbox.yaml" <<'EOF'
version: 1
web:
  command: npm run dev
  port: 3000
  health_path: /
publish:
  build: echo slow-build-begins && sleep 4 && mkdir -p out && echo '<p>four</p>' >out/index.html && echo slow-build-ends
  output: out
EOF
"$SANDBOXD_BIN" sandbox put "$SB" sandbox.yaml -q <"$IT_TMP/sandbox.yaml" || t_err "cannot write sandbox.yaml"
"$SANDBOXD_BIN" publish "$APP" --follow >"$IT_TMP/p4.out" 2>"$IT_TMP/p4.err" </dev/null &
P4=$!
wait_until 60 grep -q slow-build-begins "$IT_TMP/p4.out" || t_err "no first line: $(cat "$IT_TMP/p4.out" "$IT_TMP/p4.err")"
RID4=$(awk 'NR == 1 {print $3}' "$IT_TMP/p4.out")
kill -INT "$P4"
wait "$P4"
RC=$?
((RC == 130)) || t_err "exit $RC after Ctrl-C, want 130"
grep -q 'stopped following; the build goes on' "$IT_TMP/p4.err" || t_err "stderr: $(cat "$IT_TMP/p4.err")"
# A client that asks for the stream and never reads it.
python3 - "$API_ADDR" "$APP" "$RID4" "$IT_TOKEN" <<'PY' &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
s.sendall(("GET /v1/apps/%s/releases/%s/log?follow=1 HTTP/1.1\r\nHost: x\r\n"
           "Authorization: Bearer %s\r\n\r\n" % (sys.argv[2], sys.argv[3], sys.argv[4])).encode())
time.sleep(60)
PY
STALL=$!
curl -sN --max-time 60 -H "Authorization: Bearer $IT_TOKEN" \
	"$API_URL/v1/apps/$APP/releases/$RID4/log?follow=1" >"$IT_TMP/sse4.out"
kill "$STALL" 2>/dev/null
wait "$STALL" 2>/dev/null
grep -q '^data: slow-build-ends$' "$IT_TMP/sse4.out" || t_err "the log lacks its last line: $(cat "$IT_TMP/sse4.out")"
end=$(grep -A1 '^event: end$' "$IT_TMP/sse4.out" | sed -n 's/^data: //p')
[[ $(jq -r '"\(.id) \(.status) \(.active)"' <<<"$end") == "$RID4 ready true" ]] || t_err "end: $end"
edge_get "$HOST" /
[[ $E_BODY == '<p>four</p>' ]] || t_err "GET / serves: $E_STATUS $(head -c 100 <<<"$E_BODY")"
t_end

t_begin "unpublish: the host stops answering; the releases stay"
sbd unpublish "$APP" >/dev/null 2>&1
RC=$?
((RC == 2)) || t_err "unpublish without --yes or a terminal: exit $RC, want 2"
sbd unpublish "$APP" --yes >"$IT_TMP/un.out" 2>&1 || t_err "unpublish --yes: $(cat "$IT_TMP/un.out")"
api GET "/v1/apps/$APP/publish"
expect_json .published false
edge_get "$HOST" /
[[ $E_STATUS != 200 ]] || t_err "GET / after unpublish: 200"
[[ $(sbd releases "$APP" -q | wc -l) == 4 ]] || t_err "releases after unpublish: $(sbd releases "$APP")"
grep -q '^\*' <<<"$(sbd releases "$APP")" && t_err "a release is still marked active"
t_end

finish
