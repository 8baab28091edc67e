#!/usr/bin/env bash
# tests/fake-provider/selftest.sh: the real agent CLIs of the sandbox image,
# run end to end against provider.py.
#
# Starts the fake provider on a free port of the Docker default bridge's
# own address and runs Claude Code and OpenCode from sandboxd-base:0.1.0 (or
# FP_IMAGE) in containers hardened like a sandbox (read-only root, /tmp
# tmpfs, uid 1000, no capabilities, no-new-privileges, a throwaway
# workspace mounted at /home/sandbox), each with the recipe of README.md.
# For each CLI it checks that the task exits 0, that hello.txt was written
# in the app directory through the provider's tool call, that the provider
# saw the expected key on every request and nothing else, and that a 402
# fails the task at once.  As root it also serves the containers' DNS
# (port 53 of the gateway) to list every host name a CLI tried to resolve.
#
# Prints "ok - fake-provider: …" / "not ok - fake-provider: …" lines (with
# "#" comments saying what came instead); exit status 1 if any failed.
#   FP_KEEP=1 tests/fake-provider/selftest.sh   # keep the temp dir
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
IMAGE=${FP_IMAGE:-sandboxd-base:0.1.0}
KEY=sk-fp-real-$RANDOM$RANDOM$RANDOM
RUN_TIMEOUT=${FP_RUN_TIMEOUT:-120}
FAILS=0
CASES=0
NAMES=()
PROV_PID=

note() { printf '#   %s\n' "$@"; }
pass() {
	CASES=$((CASES + 1))
	echo "ok - fake-provider: $1"
}
fail() {
	CASES=$((CASES + 1))
	FAILS=$((FAILS + 1))
	echo "not ok - fake-provider: $1"
	shift
	local l
	for l in "$@"; do
		while IFS= read -r x; do note "$x"; done <<<"$l"
	done
}
check() { # check NAME CMD… : pass when CMD succeeds
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "${WHY:-}"; fi
	WHY=
}
bail() {
	echo "not ok - fake-provider: $1"
	exit 1
}

cleanup() {
	local rc=$?
	trap - EXIT TERM INT HUP
	local n
	for n in "${NAMES[@]}"; do docker rm -f "$n" >/dev/null 2>&1; done
	[[ -n $PROV_PID ]] && kill "$PROV_PID" 2>/dev/null && wait "$PROV_PID" 2>/dev/null
	if [[ -n ${FP_KEEP:-} ]]; then
		echo "# kept $T"
	elif [[ -n ${T:-} ]]; then
		rm -rf "$T" 2>/dev/null ||
			docker run --rm -v "$T:/t" --user 1000:1000 --entrypoint sh "$IMAGE" \
				-c 'rm -rf /t/*' >/dev/null 2>&1
		rm -rf "$T" 2>/dev/null
	fi
	exit "$rc"
}

command -v docker >/dev/null || bail "docker is not installed"
command -v python3 >/dev/null || bail "python3 is not installed"
docker image inspect "$IMAGE" >/dev/null 2>&1 || bail "image $IMAGE is missing (make image)"
# The bridge's own address: a freshly installed engine names no gateway in
# the network's IPAM config, but its bridge interface always has one.
BRIDGE=$(docker network inspect bridge -f '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null)
GW=$(ip -4 -o addr show dev "${BRIDGE:-docker0}" 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
[[ $GW =~ ^[0-9.]+$ ]] || bail "no IPv4 address on Docker's default bridge (${BRIDGE:-docker0})"

T=$(mktemp -d "${TMPDIR:-/tmp}/fake-provider-selftest.XXXXXX")
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
chmod 755 "$T"

# --- the provider -------------------------------------------------------------

DNS_ARGS=()
if [[ $(id -u) == 0 ]]; then
	DNS_ARGS=(--dns-port 53 --dns-log "$T/dns.jsonl")
fi
python3 "$here/provider.py" --port 0 --bind "$GW" --log "$T/provider.jsonl" \
	--expect-key "$KEY" --directives-file "$T/directives.txt" "${DNS_ARGS[@]}" >"$T/provider.out" 2>"$T/provider.err" &
PROV_PID=$!
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/provider.out")
	[[ -n $PORT ]] && break
	kill -0 "$PROV_PID" 2>/dev/null || break
	sleep 0.1
done
[[ -n $PORT ]] || bail "provider did not start: $(cat "$T/provider.err")"
DNS=
grep -q '^dns on ' "$T/provider.out" && DNS=$GW
BASE=http://$GW:$PORT
pass "provider listens on $GW:$PORT${DNS:+ (and answers DNS)}"

# The provider itself: a wrong key gets each protocol's 401.
wrong_key_shapes() {
	python3 - "$BASE" <<'EOF'
import json, sys, urllib.request, urllib.error
base = sys.argv[1]
def post(path, headers):
    req = urllib.request.Request(base + path, data=b'{"model":"m","messages":[]}',
                                 headers=dict(headers, **{"content-type": "application/json"}))
    try:
        urllib.request.urlopen(req, timeout=10)
        return 200, None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
c, b = post("/v1/messages", {"x-api-key": "sandboxd-proxy-injected", "anthropic-version": "2023-06-01"})
assert c == 401 and b["type"] == "error" and b["error"]["type"] == "authentication_error", (c, b)
c, b = post("/v1/chat/completions", {"authorization": "Bearer sandboxd-proxy-injected"})
assert c == 401 and b["error"]["code"] == "invalid_api_key", (c, b)
EOF
}
WHY="the provider did not answer a wrong key with the protocols' 401"
check "provider: a wrong key gets 401 (Anthropic and OpenAI shapes)" wrong_key_shapes

# --directives-file: the answer to a prompt without directives of its own,
# read again for each request; a prompt's own directives win.
file_directives() {
	python3 - "$BASE" "$KEY" "$T/directives.txt" <<'EOF'
import json, os, sys, urllib.request
base, key, path = sys.argv[1:4]
def text(prompt):
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}]}).encode()
    req = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                 headers={"content-type": "application/json", "authorization": "Bearer " + key})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())["choices"][0]["message"]["content"]
if os.path.exists(path):
    os.remove(path)
assert text("Fix it.") == "Hello from the fake provider", "no file: " + text("Fix it.")
with open(path, "w") as f:
    f.write("[[provider:text=first answer]]\n")
assert text("Fix it.") == "first answer", "the file's text: " + text("Fix it.")
with open(path, "w") as f:
    f.write("[[provider:text=second answer]]\n")
assert text("Fix it.") == "second answer", "not read again: " + text("Fix it.")
assert text("Mine. [[provider:text=own]]") == "own", "the prompt's own directives lost"
os.remove(path)
EOF
}
WHY="the directives file was not applied as documented"
check "provider: --directives-file answers a prompt without directives, read per request" file_directives

# --- helpers --------------------------------------------------------------------

# new_ws NAME: a fresh workspace $T/NAME/home with workspace/app in it
new_ws() {
	WS=$T/$1/home
	mkdir -p "$WS/workspace/app"
	if [[ $(id -u) == 0 ]]; then
		chown -R 1000:1000 "$WS"
	else
		chmod -R a+rwx "$T/$1"
	fi
}

# sandbox NAME ARGS…: docker run hardened like a sandbox, workspace $WS,
# cwd the app dir; stdout/stderr to $T/NAME.out/.err, status in RC,
# wall time (ms) in MS
sandbox() {
	local name=fp-selftest-$$-$1
	shift
	NAMES+=("$name")
	local dns=()
	[[ -n $DNS ]] && dns=(--dns "$DNS")
	local t0
	t0=$(date +%s%N)
	timeout "$RUN_TIMEOUT" docker run --rm --name "$name" \
		--read-only --tmpfs /tmp --user 1000:1000 --cap-drop ALL \
		--security-opt no-new-privileges "${dns[@]}" \
		-v "$WS:/home/sandbox" -w /home/sandbox/workspace/app \
		"$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
	OUT=$T/$name.out
	ERR=$T/$name.err
	docker rm -f "$name" >/dev/null 2>&1
}

# mark: remembers where the provider and DNS logs end, for since_*
mark() {
	LOG_MARK=$(wc -l <"$T/provider.jsonl" 2>/dev/null || echo 0)
	DNS_MARK=$(wc -l <"$T/dns.jsonl" 2>/dev/null || echo 0)
}
since_log() { tail -n +$((LOG_MARK + 1)) "$T/provider.jsonl" 2>/dev/null; }
since_dns() { tail -n +$((DNS_MARK + 1)) "$T/dns.jsonl" 2>/dev/null; }

# requests_ok UA_PREFIX MIN: since the mark, at least MIN requests, every
# one with User-Agent UA_PREFIX… carrying KEY (x-api-key or Bearer) and
# answered 2xx, and no other key anywhere
requests_ok() {
	WHY=$(since_log | python3 -c '
import json, sys
ua, want, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n, bad = 0, []
for line in sys.stdin:
    r = json.loads(line)
    h = r["headers"]
    got = h.get("x-api-key")
    if got is None and h.get("authorization", "").lower().startswith("bearer "):
        got = h["authorization"][7:]
    if not h.get("user-agent", "").startswith(ua):
        bad.append("request from another client: %s %s (%s)" % (r["method"], r["path"], h.get("user-agent")))
    elif got != key:
        bad.append("%s %s carried key %r" % (r["method"], r["path"], got))
    elif not 200 <= r["status"] < 300:
        bad.append("%s %s answered %s" % (r["method"], r["path"], r["status"]))
    n += 1
if n < want:
    bad.append("%d requests, expected at least %d" % (n, want))
print("\n".join(bad))
' "$1" "$2" "$KEY")
	[[ -z $WHY ]]
}

# answered_402 MAX: since the mark, the provider answered 402 at least
# once and at most MAX times
answered_402() {
	local n
	n=$(since_log | grep -c '"status":402')
	WHY="$n requests answered 402"
	((n >= 1 && n <= $1))
}

# dns_only NAMES…: since the mark, every DNS query was for one of NAMES
dns_only() {
	[[ -n $DNS ]] || return 0
	local got
	got=$(since_dns | python3 -c '
import json, sys
allowed = set(sys.argv[1:])
print("\n".join(sorted({json.loads(l)["dns"] for l in sys.stdin} - allowed)))' "$@")
	WHY="looked up: $got"
	[[ -z $got ]]
}

dns_names() {
	since_dns | python3 -c '
import json, sys
print(" ".join(sorted({json.loads(l)["dns"] for l in sys.stdin})) or "none")'
}

file_is() { # file_is PATH CONTENT
	if [[ ! -f $1 ]]; then
		WHY="$1 does not exist; $(ls -la "$(dirname "$1")" 2>&1)"
		return 1
	fi
	[[ $(cat "$1") == "$2" ]] || {
		WHY="content: $(head -c 200 "$1")"
		return 1
	}
}

exit_is() { # exit_is N
	[[ $RC == "$1" ]] || {
		WHY="exit status $RC, expected $1 ($MS ms); stderr: $(tail -c 600 "$ERR"); stdout: $(tail -c 600 "$OUT")"
		return 1
	}
}

# json_lines_has PY_EXPR: some stdout line (JSON) satisfies PY_EXPR over o
json_lines_has() {
	python3 -c '
import json, sys
expr = sys.argv[2]
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    try:
        if eval(expr, {"o": o}):
            sys.exit(0)
    except Exception:
        pass
sys.exit(1)' "$OUT" "$1" || {
		WHY="no stdout line with $1; stdout: $(tail -c 800 "$OUT")"
		return 1
	}
}

CONTENT='written through the provider'

# --- Claude Code ----------------------------------------------------------------

claude_env=(
	-e "ANTHROPIC_BASE_URL=$BASE"
	-e "ANTHROPIC_API_KEY=$KEY"
	-e CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
)
claude_cmd=(--entrypoint claude "$IMAGE" -p --output-format stream-json --verbose
	--dangerously-skip-permissions --model fake-model)

new_ws claude
mark
sandbox claude "${claude_env[@]}" "${claude_cmd[@]}" \
	"Create hello.txt in the app. [[provider:write=hello.txt]]"
check "claude: the task exits 0 (${MS} ms)" exit_is 0
check "claude: hello.txt written in the app dir" \
	file_is "$WS/workspace/app/hello.txt" "$CONTENT"
check "claude: a Write tool_use in its stream" \
	json_lines_has 'o["type"] == "assistant" and any(b.get("type") == "tool_use" and b.get("name") == "Write" for b in o["message"]["content"])'
check "claude: result 'Done: wrote hello.txt', not an error" \
	json_lines_has 'o["type"] == "result" and o["is_error"] is False and o["result"] == "Done: wrote hello.txt"'
check "claude: every request reached the provider with the real key (x-api-key)" \
	requests_ok claude-cli/ 2
check "claude: no DNS lookup at all" dns_only
[[ -n $DNS ]] && note "claude looked up: $(dns_names)"

new_ws claude402
mark
sandbox claude402 "${claude_env[@]}" "${claude_cmd[@]}" "Anything. [[provider:status=402]]"
check "claude: a 402 fails the task at once (exit 1 in ${MS} ms)" exit_is 1
check "claude: the 402 is reported as an API error in the result" \
	json_lines_has 'o["type"] == "result" and o["is_error"] is True and o.get("api_error_status") == 402'
check "claude: no retry after the 402" answered_402 1

# --- OpenCode -------------------------------------------------------------------

new_ws opencode
cat >"$T/opencode/opencode.json" <<EOF
{
  "\$schema": "https://opencode.ai/config.json",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "fake provider",
      "options": { "baseURL": "$BASE/v1", "apiKey": "$KEY" },
      "models": { "fake-model": { "name": "fake-model" } }
    }
  },
  "share": "disabled",
  "autoupdate": false
}
EOF
chmod 644 "$T/opencode/opencode.json"
opencode_quiet=(
	-e OPENCODE_DISABLE_AUTOUPDATE=1
	-e OPENCODE_DISABLE_MODELS_FETCH=1
	-e OPENCODE_DISABLE_LSP_DOWNLOAD=1
	-e OPENCODE_DISABLE_SHARE=1
)
# The file stands for the one the supervisor writes under /tmp.
opencode_env=(
	"${opencode_quiet[@]}"
	-v "$T/opencode/opencode.json:/tmp/sandboxd/opencode.json:ro"
	-e OPENCODE_CONFIG=/tmp/sandboxd/opencode.json
)
opencode_cmd=(--entrypoint opencode "$IMAGE" run --format json
	--dangerously-skip-permissions --model fake/fake-model)

mark
sandbox opencode "${opencode_env[@]}" "${opencode_cmd[@]}" \
	"Create hello.txt in the app. [[provider:write=hello.txt]]"
check "opencode: the task exits 0 (${MS} ms)" exit_is 0
check "opencode: hello.txt written in the app dir" \
	file_is "$WS/workspace/app/hello.txt" "$CONTENT"
check "opencode: a completed write tool call in its stream" \
	json_lines_has 'o["type"] == "tool_use" and o["part"]["tool"] == "write" and o["part"]["state"]["status"] == "completed"'
check "opencode: the final text 'Done: wrote hello.txt'" \
	json_lines_has 'o["type"] == "text" and o["part"]["text"] == "Done: wrote hello.txt"'
check "opencode: every request reached the provider with the real key (Bearer)" \
	requests_ok opencode/ 2
# OpenCode 1.18 still tries, in the background and without waiting for
# them: an npm install of @opencode-ai/plugin into ~/.config/opencode
# (registry.npmjs.org) and, as the image has no rg, a ripgrep download
# (github.com).  The models.dev catalogue (models.opencode.ai) is off.
check "opencode: no DNS lookup but registry.npmjs.org and github.com" \
	dns_only registry.npmjs.org github.com
[[ -n $DNS ]] && note "opencode looked up: $(dns_names)"

# The same configuration given as OPENCODE_CONFIG_CONTENT (OpenCode's
# runtime override) wins over an opencode.json in the app directory, which
# beats an OPENCODE_CONFIG file.
new_ws opencode-content
printf '%s\n' '{"provider":{"fake":{"options":{"baseURL":"http://127.0.0.1:9/v1"}}}}' \
	>"$WS/workspace/app/opencode.json"
[[ $(id -u) == 0 ]] && chown 1000:1000 "$WS/workspace/app/opencode.json"
mark
RUN_TIMEOUT=60 sandbox opencode-content \
	-e OPENCODE_CONFIG_CONTENT="$(cat "$T/opencode/opencode.json")" \
	"${opencode_quiet[@]}" "${opencode_cmd[@]}" \
	"Create hello.txt in the app. [[provider:write=hello.txt]]"
check "opencode: OPENCODE_CONFIG_CONTENT beats the app's opencode.json (exit 0 in ${MS} ms)" exit_is 0
check "opencode: hello.txt written with OPENCODE_CONFIG_CONTENT" \
	file_is "$WS/workspace/app/hello.txt" "$CONTENT"
check "opencode: OPENCODE_CONFIG_CONTENT requests reached the provider with the real key" \
	requests_ok opencode/ 2

new_ws opencode402
mark
sandbox opencode402 "${opencode_env[@]}" "${opencode_cmd[@]}" "Anything. [[provider:status=402]]"
check "opencode: a 402 fails the task (exit 1 in ${MS} ms)" exit_is 1
check "opencode: the 402 is an error event with statusCode 402" \
	json_lines_has 'o["type"] == "error" and o["error"]["data"]["statusCode"] == 402'
# One request for the session title, one for the task: neither retried.
check "opencode: no retry after the 402 (title + task request)" answered_402 2

# A prompt without directives (as a console writes it) scripted by the file.
new_ws opencodefile
printf '%s\n' '[[provider:write=fixed.txt]] [[provider:content=fixed by the file\n]]' >"$T/directives.txt"
sandbox opencodefile "${opencode_env[@]}" "${opencode_cmd[@]}" \
	"The app shows this error. Fix it."
rm -f "$T/directives.txt"
check "opencode: --directives-file scripts a plain prompt (exit 0 in ${MS} ms)" exit_is 0
check "opencode: fixed.txt written as the directives file says" \
	file_is "$WS/workspace/app/fixed.txt" "fixed by the file"

echo "# fake-provider selftest: $((CASES - FAILS)) passed, $FAILS failed"
((FAILS == 0))
