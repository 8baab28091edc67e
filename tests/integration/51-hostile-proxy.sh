#!/usr/bin/env bash
# A hostile sandbox against the credential proxy, and a stranger against
# the API, with the real daemon and dockerd.  From inside a sandbox as
# uid 1000: a request with no or a wrong token is refused from its head,
# before its 10 MiB body is read; one sandbox's connections and buffered
# bytes are capped (429) while another sandbox is still served; paths
# outside the inference endpoints, and an agent's key towards another
# agent's upstream, are 403 and never reach the provider; the provider's
# organisation headers and cookies do not come back.  The API: a
# request without a token is refused before its body is read; with
# authentication off, only loopback Host names are served.
. "$(dirname "$0")/lib.sh"
need_docker

KEY=sk-ant-real-$RANDOM$RANDOM$RANDOM$RANDOM
OKEY=sk-oc-real-$RANDOM$RANDOM$RANDOM$RANDOM
PLOG=$IT_TMP/provider.log
PPORT=$(free_port)
start_fake_provider --expect-key "$KEY" --expect-key "$OKEY"

PROXY_PORT=$(free_port)
start_daemon SANDBOXD_PROXY_PORT="$PROXY_PORT" \
	SANDBOXD_ANTHROPIC_BASE_URL="http://127.0.0.1:$PPORT" \
	SANDBOXD_OPENAI_BASE_URL="http://127.0.0.1:$PPORT/v1" \
	SANDBOXD_ZEN_BASE_URL="http://127.0.0.1:$PPORT/v1" ||
	bail "the daemon did not start: $(tail -n 5 "$DAEMON_ERR")"
daemon_gateway || bail "GET /v1/status shows no gateway: $(short_body)"
wait_until 10 grep -q "credential proxy listening on $GW:$PROXY_PORT" "$DAEMON_ERR" ||
	bail "the proxy does not listen on $GW:$PROXY_PORT"

# The in-sandbox client (uid 1000, the image's python3).  Modes:
#   upload PATH TOKEN TOTAL  a POST declaring TOTAL bytes, the body sent
#                            in 64 KiB pieces until an answer is readable:
#                            "STATUS SENT MS" (MS: head sent to answer)
#   head PATH TOKEN TOTAL    the head of such a POST and 64 KiB of body,
#                            then waits 5 s for an answer: "STATUS MS"
#   req METHOD PATH TOKEN [BODY]  one request: "STATUS", then the
#                            response headers (lower-cased), then the body
#   hold N PATH TOKEN        N idle connections, then one request on
#                            another: "STATUS BODY", "holding"; keeps
#                            them until stdin closes
#   budget N PATH TOKEN TOTAL  N heads declaring TOTAL bytes each, no
#                            body; the status each got within 2 s
#   flood N                  N connections: how many the server closed
#                            at once (EOF or reset within 1 s)
# shellcheck disable=SC2016
CLIENT='
import http.client, select, socket, sys, time
host, port, mode, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]

def head(path, token, total):
    h = "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" % (path, host, port, total)
    if token != "-":
        h += "x-api-key: %s\r\n" % token
    return (h + "\r\n").encode()

def status_of(s, limit):
    s.settimeout(limit)
    data = b""
    try:
        while b"\r\n" not in data:
            d = s.recv(4096)
            if not d:
                break
            data += d
    except OSError:
        pass
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 else "none"

if mode == "upload":
    path, token, total = args[0], args[1], int(args[2])
    s = socket.create_connection((host, port), 5)
    s.sendall(head(path, token, total))
    t0 = time.perf_counter()
    sent, piece = 0, b"x" * 65536
    s.setblocking(False)
    while sent < total:
        r, w, _ = select.select([s], [s], [], 5)
        if r:
            break
        if w:
            try:
                sent += s.send(piece[: min(len(piece), total - sent)])
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                break
    s.setblocking(True)
    st = status_of(s, 5)
    print("%s %d %.0f" % (st, sent, (time.perf_counter() - t0) * 1000))
elif mode == "head":
    path, token, total = args[0], args[1], int(args[2])
    s = socket.create_connection((host, port), 5)
    s.sendall(head(path, token, total) + b"x" * 65536)
    t0 = time.perf_counter()
    st = status_of(s, 5)
    print("%s %.0f" % (st, (time.perf_counter() - t0) * 1000))
elif mode == "req":
    method, path, token = args[0], args[1], args[2]
    body = args[3].encode() if len(args) > 3 else None
    c = http.client.HTTPConnection(host, port, timeout=10)
    h = {"content-type": "application/json"}
    if token != "-":
        h["x-api-key"] = token
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    print(r.status)
    for k, v in r.getheaders():
        print("%s: %s" % (k.lower(), v))
    print()
    print(r.read().decode("utf-8", "replace"))
elif mode == "hold":
    n, path, token = int(args[0]), args[1], args[2]
    held = [socket.create_connection((host, port), 5) for _ in range(n)]
    time.sleep(0.3)
    c = http.client.HTTPConnection(host, port, timeout=10)
    c.request("POST", path, body=b"{}", headers={"x-api-key": token, "content-type": "application/json"})
    r = c.getresponse()
    print(r.status, r.read().decode("utf-8", "replace").replace("\n", " "))
    print("holding", flush=True)
    sys.stdin.read()
elif mode == "budget":
    n, path, token, total = int(args[0]), args[1], args[2], int(args[3])
    socks, out = [], []
    for _ in range(n):
        s = socket.create_connection((host, port), 5)
        s.sendall(head(path, token, total))
        socks.append(s)
        time.sleep(0.2)
    for s in socks:
        out.append(status_of(s, 2))
    print(" ".join(out))
elif mode == "flood":
    n = int(args[0])
    socks = [socket.create_connection((host, port), 5) for _ in range(n)]
    time.sleep(0.5)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print(closed)
'
# in_sb CONTAINER MODE ARGS…: the client from inside CONTAINER, to the proxy
in_sb() {
	local c=$1
	shift
	docker exec -u 1000 "$c" python3 -c "$CLIENT" "$GW" "$PROXY_PORT" "$@" 2>&1
}

MSG='{"model":"fake-model","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
CHAT='{"model":"fake-model","messages":[{"role":"user","content":"hi"}]}'

t_begin "two sandboxes, each with its own proxy token"
api POST /v1/agents/claude-code/api-key "{\"api_key\":\"$KEY\"}"
expect_status 200
api POST /v1/agents/opencode/api-key "{\"api_key\":\"$OKEY\"}"
expect_status 200
# A token is made for a sandbox's first task; the task's env file has it.
token_of_task() { # SB TASK
	tr '\0' '\n' <"$DATA/workspaces/$1/.sandboxd/tasks/$2/env" | sed -n 's/^ANTHROPIC_API_KEY=//p'
}
create_app attacker '"runtime_preset":"static"'
own_calls "$APP_ID" # the tokens are used between tasks below
create_sandbox "$APP_ID"
SA=$SB_ID
CA=$SB_CONTAINER
create_app victim '"runtime_preset":"static"'
own_calls "$APP_ID"
create_sandbox "$APP_ID"
SB=$SB_ID
CB=$SB_CONTAINER
submit "$SA" '{"prompt":"hello","agent":"claude-code","model":"fake-model"}'
wait_task "$SA" "$TASK_ID" 90
TA=$(token_of_task "$SA" "$TASK_ID")
submit "$SB" '{"prompt":"hello","agent":"claude-code","model":"fake-model"}'
wait_task "$SB" "$TASK_ID" 90
TB=$(token_of_task "$SB" "$TASK_ID")
[[ $TA == sk_* && $TB == sk_* && $TA != "$TB" ]] || t_err "no two proxy tokens: '$TA' '$TB'"
t_end
[[ $TA == sk_* && $TB == sk_* ]] || bail "cannot go on without the sandboxes' tokens"

TEN_MIB=$((10 << 20))

t_begin "no token and a wrong token: 401 from the head, the 10 MiB body is not read"
before=$(wc -l <"$PLOG")
hwm0=$(awk '/^VmHWM/ {print $2}' "/proc/$DAEMON_PID/status")
for tok in - sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA; do
	# Only the head and 64 KiB: the answer cannot wait for the rest.
	read -r st ms <<<"$(in_sb "$CA" head /claude-code/anthropic/v1/messages "$tok" "$TEN_MIB")"
	[[ $st == 401 ]] || t_err "token '$tok', head only: expected 401, got '$st'"
	awk -v m="${ms:-99999}" 'BEGIN { exit !(m < 2000) }' || t_err "token '$tok': answered after ${ms} ms"
	# The whole body offered: the answer comes before it is sent.
	read -r st sent ms <<<"$(in_sb "$CA" upload /claude-code/anthropic/v1/messages "$tok" "$TEN_MIB")"
	[[ $st == 401 ]] || t_err "token '$tok', upload: expected 401, got '$st'"
	((${sent:-$TEN_MIB} < TEN_MIB)) || t_err "token '$tok': the whole body was sent before the answer"
	note "token '$tok': 401 after ${ms} ms with ${sent} of $TEN_MIB bytes sent"
done
hwm1=$(awk '/^VmHWM/ {print $2}' "/proc/$DAEMON_PID/status")
note "daemon peak RSS ${hwm0} kB before, ${hwm1} kB after"
((hwm1 - hwm0 < 8192)) || t_err "the daemon's peak RSS grew by $((hwm1 - hwm0)) kB"
[[ $(wc -l <"$PLOG") == "$before" ]] || t_err "refused requests reached the provider"
t_end

t_begin "paths outside the inference endpoints are 403 and never reach the provider"
before=$(wc -l <"$PLOG")
for mp in "GET /claude-code/anthropic/v1/organizations" "POST /claude-code/anthropic/v1/files" \
	"POST /claude-code/anthropic/v1/messages/batches" "GET /claude-code/anthropic/v1/messages" \
	"POST /claude-code/anthropic/v1/x/../messages" "POST /opencode/openai/files" \
	"GET /opencode/openai/organization/users"; do
	read -r m p <<<"$mp"
	out=$(in_sb "$CA" req "$m" "$p" "$TA" "$MSG")
	st=$(head -n 1 <<<"$out")
	[[ $st == 403 ]] || t_err "$mp: expected 403, got $st"
	grep -q "not a model endpoint" <<<"$out" || t_err "$mp: no clear message: $(tail -n 1 <<<"$out")"
done
note "$(tail -n 1 <<<"$out")"
[[ $(wc -l <"$PLOG") == "$before" ]] || t_err "a refused path reached the provider: $(tail -n 1 "$PLOG")"
grep -qE 'organizations|/files|batches' "$PLOG" && t_err "the provider saw an organisation/files/batches path"
t_end

t_begin "Claude Code's Anthropic key is never sent to another upstream"
before=$(wc -l <"$PLOG")
for p in /claude-code/openai/chat/completions /claude-code/zen/chat/completions; do
	out=$(in_sb "$CA" req POST "$p" "$TA" "$CHAT")
	[[ $(head -n 1 <<<"$out") == 403 ]] || t_err "POST $p: expected 403, got $(head -n 1 <<<"$out")"
done
[[ $(wc -l <"$PLOG") == "$before" ]] || t_err "a request reached the provider"
grep -qF "Bearer $KEY" "$PLOG" && t_err "the Anthropic key went out as a bearer token"
t_end

t_begin "the provider's organisation headers and cookies do not come back"
# The provider sends them (straight to it, from the host) ...
direct=$(curl -s -D - -o /dev/null -H "x-api-key: $KEY" -H 'content-type: application/json' \
	--data-binary "$MSG" "http://127.0.0.1:$PPORT/v1/messages" | tr -d '\r')
grep -qi '^anthropic-organization-id:' <<<"$direct" || t_err "the fake provider sends no organisation header: $direct"
# ... and the proxy passes on only what a CLI needs.
for mp in "/claude-code/anthropic/v1/messages $MSG" "/opencode/openai/chat/completions $CHAT"; do
	read -r p b <<<"$mp"
	out=$(in_sb "$CA" req POST "$p" "$TA" "$b")
	hdrs=$(sed -n '2,/^$/p' <<<"$out")
	[[ $(head -n 1 <<<"$out") == 200 ]] || t_err "POST $p: expected 200, got $(head -n 1 <<<"$out")"
	for h in anthropic-organization-id openai-organization openai-project set-cookie; do
		grep -qi "^$h:" <<<"$hdrs" && t_err "POST $p: $h came back"
	done
	for h in content-type anthropic-ratelimit-requests-remaining x-ratelimit-remaining-requests; do
		grep -qi "^$h:" <<<"$hdrs" || t_err "POST $p: $h did not come back"
	done
done
grep -qi '^request-id:' <<<"$(in_sb "$CA" req POST /claude-code/anthropic/v1/messages "$TA" "$MSG")" ||
	t_err "Anthropic's request-id did not come back"
t_end

t_begin "connections past the sandbox's cap get 429 while another sandbox is served"
coproc HOLD { docker exec -i -u 1000 "$CA" python3 -c "$CLIENT" "$GW" "$PROXY_PORT" \
	hold 16 /claude-code/anthropic/v1/messages "$TA" 2>&1; }
read -r -t 20 -u "${HOLD[0]}" st rest || t_err "the holding client said nothing"
[[ $st == 429 ]] || t_err "the 17th connection: expected 429, got '$st $rest'"
grep -q PROXY_ADDR_MAX_CONNS <<<"$rest" || t_err "the 429 does not say why: $rest"
note "17th connection: $st $rest"
read -r -t 5 -u "${HOLD[0]}" word
[[ $word == holding ]] || t_err "the client does not hold its connections: $word"
t0=$(date +%s%N)
out=$(in_sb "$CB" req POST /claude-code/anthropic/v1/messages "$TB" "$MSG")
ms=$((($(date +%s%N) - t0) / 1000000))
[[ $(head -n 1 <<<"$out") == 200 ]] || t_err "the other sandbox: expected 200, got $(head -n 1 <<<"$out")"
note "the other sandbox got $(head -n 1 <<<"$out") in ${ms} ms (docker exec included)"
hold_in=${HOLD[1]}
exec {hold_in}>&-
wait "$HOLD_PID" 2>/dev/null
sleep 0.5
[[ $(in_sb "$CA" req POST /claude-code/anthropic/v1/messages "$TA" "$MSG" | head -n 1) == 200 ]] ||
	t_err "once its connections closed, the sandbox is not served again"
t_end

t_begin "a flood of connections past PROXY_ADDR_MAX_OPEN is closed at accept"
closed=$(in_sb "$CA" flood 40)
note "$closed of 40 connections closed at once"
[[ $closed =~ ^[0-9]+$ ]] && ((closed >= 40 - 24)) || t_err "expected at least 16 closed, got '$closed'"
[[ $(in_sb "$CB" req POST /claude-code/anthropic/v1/messages "$TB" "$MSG" | head -n 1) == 200 ]] ||
	t_err "the other sandbox is not served after the flood"
t_end

t_begin "request bytes in flight per sandbox are capped (429)"
# Three heads of 30 MiB each: two fit PROXY_ADDR_MAX_BODY_BYTES (64 MiB),
# the third is refused from its head; the first two wait for their body.
got=$(in_sb "$CA" budget 3 /claude-code/anthropic/v1/messages "$TA" $((30 << 20)))
[[ $got == "none none 429" ]] || t_err "expected 'none none 429', got '$got'"
sleep 0.5
[[ $(in_sb "$CA" req POST /claude-code/anthropic/v1/messages "$TA" "$MSG" | head -n 1) == 200 ]] ||
	t_err "the budget is not given back when the connections close"
t_end

# --- the API ------------------------------------------------------------------

# api_head METHOD PATH AUTH TOTAL [WAIT]: a head declaring TOTAL bytes
# and 64 KiB of its body, from the host; an answer is waited for WAIT
# seconds (5): "STATUS MS" ("none" when none came).
api_head() {
	python3 - "${API_ADDR%:*}" "${API_ADDR##*:}" "$@" <<'EOF'
import socket, sys, time
host, port, method, path, auth = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
total = int(sys.argv[6])
wait = float(sys.argv[7]) if len(sys.argv) > 7 else 5
h = "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Length: %d\r\nContent-Type: application/octet-stream\r\n" % (method, path, host, port, total)
if auth != "-":
    h += "Authorization: %s\r\n" % auth
s = socket.create_connection((host, port), 5)
s.sendall((h + "\r\n").encode() + b"x" * 65536)
t0 = time.perf_counter()
s.settimeout(wait)
data = b""
try:
    while b"\r\n" not in data:
        d = s.recv(4096)
        if not d:
            break
        data += d
except OSError:
    pass
parts = data.split(b" ", 2)
print(parts[1].decode() if len(parts) > 1 else "none", "%.0f" % ((time.perf_counter() - t0) * 1000))
EOF
}

t_begin "API: an upload with no or a wrong token is 401 from its head, its 10 MiB body unread"
for auth in - "Bearer wrong-token-123"; do
	read -r st ms <<<"$(api_head PUT "/v1/sandboxes/$SA/files?path=big" "$auth" "$TEN_MIB")"
	[[ $st == 401 ]] || t_err "auth '$auth': expected 401, got '$st'"
	awk -v m="${ms:-99999}" 'BEGIN { exit !(m < 2000) }' || t_err "auth '$auth': answered after ${ms} ms"
	note "auth '$auth': $st after ${ms} ms"
done
head -c "$TEN_MIB" /dev/zero >"$IT_TMP/big"
t0=$(date +%s%N)
api_noauth PUT "/v1/sandboxes/$SA/files?path=big" "@$IT_TMP/big"
ms=$((($(date +%s%N) - t0) / 1000000))
expect_status 401 && expect_envelope unauthorized
note "curl with the whole body: $STATUS in ${ms} ms"
# With a token the same head waits for its body: the refusal above came
# from the head, not from a server that answers everything early.
read -r st _ <<<"$(api_head PUT "/v1/sandboxes/$SA/files?path=big" "Bearer $TOKEN" "$TEN_MIB" 1)"
[[ $st == none ]] || t_err "with a token the head alone was answered: $st"
t_end

t_begin "API with auth disabled: only loopback Host names are served"
stop_daemon
start_daemon SANDBOXD_API_AUTH_DISABLED=true SANDBOXD_NETWORK=none -SANDBOXD_API_TOKENS ||
	bail "the daemon did not start with auth disabled: $(tail -n 5 "$DAEMON_ERR")"
port=${API_ADDR##*:}
for host in evil.example "evil.example:$port" "localhost.evil.example:$port" "127.0.0.1.nip.io:$port"; do
	STATUS=$(curl -s -o "$IT_TMP/body" -w '%{http_code}' --max-time 10 -H "Host: $host" "$API_URL/v1/apps")
	BODY=$(cat "$IT_TMP/body")
	REQ="GET /v1/apps (Host: $host)"
	expect_status 403 && expect_envelope host_not_allowed false
done
note "$(j .error.message)"
STATUS=$(curl -s -o "$IT_TMP/body" -w '%{http_code}' --max-time 10 -H "Host: evil.example" \
	--data-binary "@$IT_TMP/big" "$API_URL/v1/apps")
REQ="POST /v1/apps (Host: evil.example, 10 MiB)"
expect_status 403
for host in "localhost:$port" "127.0.0.1:$port" "[::1]:$port" localhost; do
	STATUS=$(curl -s -o "$IT_TMP/body" -w '%{http_code}' --max-time 10 -H "Host: $host" "$API_URL/v1/apps")
	REQ="GET /v1/apps (Host: $host)"
	expect_status 200
done
t_end

finish
