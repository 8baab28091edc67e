#!/usr/bin/env bash
# Detection on import and the runtime-inspect API (docs/api.md, "Runtime
# detection"), against repositories served by a git server the test runs:
# a static site without sandbox.yaml gets one written by detection and
# committed as its own commit, and previews; a FastAPI app is detected as
# such; an app that brought its own sandbox.yaml keeps it, and a new
# detection refuses to replace it (409 manifest_is_users) unless forced;
# another recipe chosen is written, committed and takes effect; a
# running task refuses it (409 task_in_progress); an unknown recipe is a 400, another tenant's app a 404; a repository with
# nothing to run and one with a broken package.json each get a clear
# manifest error in the sandbox's status and warnings in runtime-inspect;
# GET /v1/runtime/recipes lists the table.  No network: the apps need no
# package from a registry.
. "$(dirname "$0")/lib.sh"
need_test_image

ROOT=$IT_TMP/repos
mkdir -p "$ROOT"
G=(git -c safe.directory='*' -c user.name=dev -c user.email=dev@example.com
	-c init.defaultBranch=main)

# make_repo NAME FILE=CONTENT…: a bare repository NAME.git with one commit.
make_repo() {
	local name=$1 w=$IT_TMP/work.$1 kv
	shift
	"${G[@]}" init -q "$w"
	for kv in "$@"; do
		mkdir -p "$(dirname "$w/${kv%%=*}")"
		printf '%s\n' "${kv#*=}" >"$w/${kv%%=*}"
	done
	"${G[@]}" -C "$w" add -A && "${G[@]}" -C "$w" commit -q -m "the app"
	"${G[@]}" clone -q --bare "$w" "$ROOT/$name.git"
}
make_repo site 'index.html=<!doctype html><title>site</title><h1>detected static site</h1>' \
	'style.css=h1 { color: teal }'
make_repo api 'requirements.txt=fastapi
uvicorn' 'main.py=from fastapi import FastAPI
app = FastAPI()

@app.get("/")
def root():
    return {"hello": "detected"}'
make_repo own 'index.html=<h1>mine</h1>' 'sandbox.yaml=# my own manifest
version: 1
web:
  command: python3 -m http.server 3000 --bind 0.0.0.0
  port: 3000'
make_repo nothing 'README.md=# notes only' 'data.csv=a,b
1,2'
make_repo broken 'package.json={ "name": "broken", "scripts": {' 'README.md=# broken'

start_git_server "$ROOT"
start_edge_daemon SANDBOXD_IMAGE="$TEST_IMAGE" SANDBOXD_GIT_ALLOW_HTTP=1 \
	SANDBOXD_API_TOKENS=it=$IT_TOKEN,b=tok-b-tenant
TOKEN_B=tok-b-tenant

# import NAME: an app from the repository NAME and its sandbox -> APP, SB.
import() {
	create_app "$1" "\"git\":{\"repo_url\":\"http://127.0.0.1:$GPORT/$1.git\"}" &&
		create_sandbox "$APP_ID" '{}' || return 1
	APP=$APP_ID SB=$SB_ID
}
app_file() { cat "$DATA/workspaces/$1/workspace/app/$2" 2>/dev/null; }
git_app() { git -c safe.directory='*' -C "$DATA/workspaces/$1/workspace/app" "${@:2}"; }
answer() { ecurl "s-$1-3000.preview.localhost:$EDGE_PORT" /; }
answers() { [[ $(answer "$1") == *"$2"* ]]; }
manifest_error() {
	api GET "/v1/sandboxes/$1"
	[[ $(j .manifest.valid) == false && $(j .manifest.error) == *"$2"* ]]
}

t_begin "GET /v1/runtime/recipes: the table, each with an id and a display name"
api GET /v1/runtime/recipes
expect_status 200 &&
	expect_jq '(.recipes | length) >= 8' 'at least eight recipes' &&
	expect_jq '[.recipes[] | select(.id == "static")] | length == 1' 'static is one' &&
	expect_jq '[.recipes[] | select(.id == "fastapi")] | length == 1' 'fastapi is one' &&
	expect_jq 'all(.recipes[]; (.id | type) == "string" and (.display_name | type) == "string")' 'ids and names'
t_end

t_begin "a static site without sandbox.yaml: detected, written, committed alone, previews"
import site || bail "cannot import the site: ${T_ERRS[*]}"
SITE=$APP SITE_SB=$SB
[[ $(app_file "$SB" sandbox.yaml | head -n 1) == "# Written by sandboxd"* ]] ||
	t_err "sandbox.yaml's first line: $(app_file "$SB" sandbox.yaml | head -n 1)"
[[ $(git_app "$SB" log -1 --format=%s) == "sandboxd: add sandbox.yaml for "*" (detected)" ]] ||
	t_err "the last commit: $(git_app "$SB" log -1 --format=%s)"
[[ $(git_app "$SB" show --name-only --format= HEAD) == sandbox.yaml ]] ||
	t_err "the commit has more than sandbox.yaml: $(git_app "$SB" show --name-only --format= HEAD)"
[[ $(git_app "$SB" rev-list --count HEAD) == 2 ]] || t_err "not one commit on top of the import"
[[ -z $(git_app "$SB" status --porcelain) ]] || t_err "the tree is not clean: $(git_app "$SB" status --porcelain)"
[[ $(stat -c %u "$DATA/workspaces/$SB/workspace/app/sandbox.yaml") == 1000 ]] ||
	t_err "sandbox.yaml is not the sandbox user's"
wait_until 60 answers "$SB" "detected static site" || t_err "the preview does not answer: $(answer "$SB")"
api GET "/v1/sandboxes/$SB"
expect_json .manifest.source sandbox.yaml && expect_json .manifest.valid true
api GET "/v1/apps/$APP/events"
expect_jq '[.events[] | select(.type == "runtime.detected" and .payload.recipe == "static")] | length == 1' \
	'runtime.detected {recipe: static} on the timeline'
t_end

t_begin "GET runtime-inspect: the manifest present and ours, the detection, suggestions"
api GET "/v1/apps/$SITE/runtime-inspect"
expect_status 200 &&
	expect_json .sandbox_id "$SITE_SB" &&
	expect_json .existing_manifest.present true &&
	expect_json .existing_manifest.written_by_sandboxd true &&
	expect_json .existing_manifest.valid true &&
	expect_json .existing_manifest.web_port 3000 &&
	expect_json .detection.recipe static &&
	expect_jq '.detection.confidence_label | IN("high","medium","low")' 'a confidence label' &&
	expect_jq '(.detection.reasons | length) >= 1' 'reasons' &&
	expect_jq '.suggestions[0].recipe == "static" and (.suggestions[0] | has("display_name","confidence","confidence_label","dir"))' \
		'suggestions[0] in the reference shape' &&
	expect_jq '.warnings | type == "array"' 'warnings'
t_end

t_begin "another tenant: 404 for GET and POST"
api_as "$TOKEN_B" GET "/v1/apps/$SITE/runtime-inspect"
expect_status 404
api_as "$TOKEN_B" POST "/v1/apps/$SITE/runtime-inspect" '{}'
expect_status 404
t_end

t_begin "a FastAPI app is detected as FastAPI, its manifest committed"
import api || bail "cannot import the api: ${T_ERRS[*]}"
API=$APP API_SB=$SB
api GET "/v1/apps/$API/runtime-inspect"
expect_json .detection.recipe fastapi && expect_json .existing_manifest.written_by_sandboxd true
[[ $(git_app "$SB" log -1 --format=%s) == "sandboxd: add sandbox.yaml for "*" (detected)" ]] ||
	t_err "the last commit: $(git_app "$SB" log -1 --format=%s)"
t_end

t_begin "POST runtime-inspect with another recipe: written, committed, in effect"
api POST "/v1/apps/$API/runtime-inspect" '{"recipe":"static"}'
expect_status 200 &&
	expect_json .written true &&
	expect_json .detection.recipe static &&
	expect_jq '.commit | test("^[0-9a-f]{40}$")' 'the commit sha'
SHA=$(j .commit)
[[ $(git_app "$API_SB" rev-parse HEAD) == "$SHA" ]] || t_err "HEAD is not the answer's commit"
[[ $(git_app "$API_SB" log -1 --format=%s) == "sandboxd: add sandbox.yaml for "*" (detected)" ]] ||
	t_err "the commit's message: $(git_app "$API_SB" log -1 --format=%s)"
api GET "/v1/apps/$API/runtime-inspect"
expect_json .existing_manifest.written_by_sandboxd true
api GET "/v1/apps/$API/events"
expect_jq '[.events[] | select(.type == "runtime.detected")] | length == 2' 'a second runtime.detected'
api POST "/v1/apps/$API/runtime-inspect" '{"recipe":"no-such-recipe"}'
expect_status 400 && expect_envelope invalid_request &&
	expect_jq '.error.message | contains("/v1/runtime/recipes")' 'the message says where the ids are'
api POST "/v1/apps/$API/runtime-inspect" '{"recipe":7}'
expect_status 400
api POST "/v1/apps/$API/runtime-inspect" '{"color":"red"}'
expect_status 400
t_end

t_begin "a running task refuses a detection (409 task_in_progress); the file stays"
before=$(app_file "$SITE_SB" sandbox.yaml)
submit "$SITE_SB" '{"prompt":"[[fake:sleep=30]] long"}'
T=$TASK_ID
api POST "/v1/apps/$SITE/runtime-inspect" '{"recipe":"fastapi"}'
expect_status 409 && expect_envelope task_in_progress
[[ $(app_file "$SITE_SB" sandbox.yaml) == "$before" ]] || t_err "sandbox.yaml changed"
api POST "/v1/sandboxes/$SITE_SB/tasks/$T/cancel"
wait_task "$SITE_SB" "$T" 30
t_end

t_begin "a repository with its own sandbox.yaml keeps it; a detection refuses it unless forced"
import own || bail "cannot import own: ${T_ERRS[*]}"
OWN=$APP OWN_SB=$SB
[[ $(app_file "$SB" sandbox.yaml | head -n 1) == "# my own manifest" ]] || t_err "the user's sandbox.yaml changed"
[[ $(git_app "$SB" rev-list --count HEAD) == 1 ]] || t_err "a commit was added"
api GET "/v1/apps/$OWN/runtime-inspect"
expect_json .existing_manifest.present true && expect_json .existing_manifest.written_by_sandboxd false
api POST "/v1/apps/$OWN/runtime-inspect" '{}'
expect_status 409 && expect_envelope manifest_is_users
[[ $(app_file "$SB" sandbox.yaml | head -n 1) == "# my own manifest" ]] || t_err "the refused detection wrote"
api POST "/v1/apps/$OWN/runtime-inspect" '{"force":true}'
expect_status 200 && expect_json .written true && expect_json .detection.recipe static
[[ $(app_file "$SB" sandbox.yaml | head -n 1) == "# Written by sandboxd"* ]] || t_err "force did not write"
wait_until 60 answers "$SB" mine || t_err "the preview does not answer after the forced detection: $(answer "$SB")"
t_end

t_begin "nothing to detect: no file written, the status names what was looked for"
import nothing || bail "cannot import nothing: ${T_ERRS[*]}"
NOTHING=$APP
[[ ! -e $DATA/workspaces/$SB/workspace/app/sandbox.yaml ]] || t_err "a sandbox.yaml was written"
[[ $(git_app "$SB" rev-list --count HEAD) == 1 ]] || t_err "a commit was added"
wait_until 30 manifest_error "$SB" "no sandbox.yaml, and no framework detected: " ||
	t_err "the status's manifest: $(jq -c .manifest <<<"$BODY")"
api GET "/v1/apps/$NOTHING/runtime-inspect"
expect_json .existing_manifest.present false &&
	expect_jq '.detection.recipe == null' 'no recipe' &&
	expect_jq '(.detection.looked_for | length) > 10' 'looked_for' &&
	expect_jq '(.warnings | length) >= 1' 'a warning'
api POST "/v1/apps/$NOTHING/runtime-inspect" '{}'
expect_status 200 && expect_json .written false
api GET "/v1/apps/$NOTHING/events"
expect_jq '[.events[] | select(.type == "runtime.undetected")] | length >= 1' 'runtime.undetected'
t_end

t_begin "a broken package.json: a warning naming it, and a clear manifest error"
import broken || bail "cannot import broken: ${T_ERRS[*]}"
BROKEN=$APP
wait_until 30 manifest_error "$SB" "no sandbox.yaml" ||
	t_err "the status's manifest: $(jq -c .manifest <<<"$BODY")"
api GET "/v1/apps/$BROKEN/runtime-inspect"
expect_jq 'any(.warnings[]; contains("package.json"))' 'a warning names package.json'
t_end

t_begin "CLI: sandbox create of an import prints the detection; app inspect, app detect, recipes"
export SANDBOXD_API=$API_URL SANDBOXD_TOKEN=$IT_TOKEN XDG_CONFIG_HOME=$IT_TMP/xdg
sbd() { "$SANDBOXD_BIN" "$@"; }
CAPP=$(sbd app create cli-site --git "http://127.0.0.1:$GPORT/site.git" --no-import -q)
ulid_ok "$CAPP" || t_err "app create --no-import -q: '$CAPP'"
api GET "/v1/apps/$CAPP"
[[ $(j '.current_sandbox_id // ""') == "" ]] || t_err "app create --no-import made a sandbox: $BODY"
out=$(sbd sandbox create "$CAPP" 2>&1)
grep -qE '^Detected .+ \((high|medium|low)\)' <<<"$out" || t_err "sandbox create: $out"
# app create --git imports at once and says what it detected.
out=$(sbd app create cli-site-2 --git "http://127.0.0.1:$GPORT/site.git" 2>&1)
grep -qE '^imported into sandbox [0-9A-Z]{26}$' <<<"$out" || t_err "app create --git: no import line: $out"
grep -qE '^Detected Static site \((high|medium|low)\)' <<<"$out" || t_err "app create --git: no detection: $out"
[[ $(sbd app inspect "$CAPP" -q) == static ]] || t_err "inspect -q: $(sbd app inspect "$CAPP" -q)"
out=$(sbd app inspect "$CAPP")
grep -q '^sandbox.yaml: written by sandboxd, valid$' <<<"$out" || t_err "inspect: $out"
api PUT "/v1/sandboxes/$OWN_SB/files?path=sandbox.yaml" $'# mine again\nversion: 1\nweb:\n  command: python3 -m http.server 3000 --bind 0.0.0.0\n  port: 3000\n'
expect_status 200
out=$(sbd app detect "$OWN" 2>&1) && t_err "detect of the user's manifest succeeded: $out"
grep -q '(manifest_is_users)' <<<"$out" || t_err "detect of the user's manifest: $out"
out=$(sbd app detect "$OWN" --force) || t_err "detect --force: $out"
grep -q '^wrote sandbox.yaml' <<<"$out" || t_err "detect --force: $out"
out=$(sbd app detect "$NOTHING")
grep -q '^No framework detected: ' <<<"$out" && grep -q '^sandbox.yaml left as it was$' <<<"$out" ||
	t_err "detect of nothing: $out"
out=$(sbd app detect "$CAPP" --recipe fastapi)
grep -q '^wrote sandbox.yaml (commit [0-9a-f]\{12\})$' <<<"$out" || t_err "detect --recipe: $out"
sbd recipes -q | grep -qx static || t_err "recipes -q: $(sbd recipes -q | head -3)"
sbd recipes | head -n 1 | grep -q '^ID  *NAME  *LANGUAGE  *PORT' || t_err "recipes: $(sbd recipes | head -n 2)"
t_end

t_begin "an app without a sandbox or whose import failed: nothing to inspect, a detection is a 409"
create_app bare
api GET "/v1/apps/$APP_ID/runtime-inspect"
expect_status 200 && expect_json .existing_manifest.present false && expect_json .detection null &&
	expect_jq '(.warnings | length) == 1' 'a warning'
api POST "/v1/apps/$APP_ID/runtime-inspect" '{}'
expect_status 409 && expect_envelope conflict
# a failed import: a sandbox in error with no files
create_app gone "\"git\":{\"repo_url\":\"http://127.0.0.1:$GPORT/no-such.git\"}"
api POST "/v1/apps/$APP_ID/sandbox" '{}'
expect_status 502
api GET "/v1/apps/$APP_ID/runtime-inspect"
expect_status 200 && expect_json .existing_manifest.present false && expect_json .detection null &&
	expect_jq '.warnings[0] | contains("import")' 'the warning names the import'
t_end

finish
