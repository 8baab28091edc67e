#!/usr/bin/env bash
# Custom domains (docs/publish.md "Host names and custom domains"): a test
# DNS server (tests/integration/dnsd.py) in a network namespace of the
# test's own answers for the test's names, and SANDBOXD_DNS_RESOLVER
# points the daemon at it; the host's end of the namespace's veth is one
# of this machine's interface addresses, which the daemon finds itself
# (getifaddrs) and, after a restart, is told (SANDBOXD_PUBLIC_ADDRS).
# Cases: a published static app is served at its verified custom domain
# through the edge (and not before it is verified, nor after it is
# removed); bad hosts are 400 (not a DNS name, an IP literal, the console's,
# a preview's, under the publish domain, localhost); a name that does not
# resolve stays pending with a reason saying which record to create; one
# that resolves elsewhere says where; once the answer points here, verify
# makes it verified and Traefik's file gets its router (and passes
# scripts/traefik-check); a CNAME chain to this server verifies by the
# pending pass alone; another app's or another tenant's host is 409
# host_taken; state survives a restart; removal drops the router; the
# timeline has domain.added/verified/removed.
. "$(dirname "$0")/lib.sh"
need_docker
command -v ip >/dev/null || bail "iproute2 is missing"
python3 -c 'import yaml' 2>/dev/null || bail "python3-yaml is not installed (apt-get install python3-yaml)"

NS=sbxd105-$$
NET=$(pick_net24 10.251) || bail "no free /24 for the test's DNS host"
[[ -n $NET ]] || bail "no free /24 for the test's DNS host"
outside_host "$NS" "d105h$$" "d105n$$" "$NET" 53 80 || bail "cannot make the test's network namespace"
DNS=$NET.53
HERE=$NET.1 # the host's end of the veth: one of this machine's addresses
ELSEWHERE=$NET.80
ZONE=$IT_TMP/zone.json

# zone JSON: the DNS server's answers from now on (written whole).
zone() {
	printf '%s\n' "$1" >"$ZONE.tmp" && mv -f "$ZONE.tmp" "$ZONE"
}
zone '{}'
ip netns exec "$NS" python3 "$IT_ROOT/tests/integration/dnsd.py" "$DNS" 53 "$ZONE" >"$IT_TMP/dnsd.out" 2>&1 &
DNSD_PID=$!
stop_dnsd() { kill "$DNSD_PID" 2>/dev/null; wait "$DNSD_PID" 2>/dev/null; return 0; }
IT_CLEANUP_HOOKS+=(stop_dnsd)
wait_until 5 grep -q ready "$IT_TMP/dnsd.out" || bail "the test's DNS server did not start: $(cat "$IT_TMP/dnsd.out")"

# relay PORT: in the namespace, $ELSEWHERE:PORT relays to $HERE:PORT (a
# proxy in front of this server, at an address that is not one of its own).
relay() {
	ip netns exec "$NS" python3 -c '
import socket, sys, threading
src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((src, port))
l.listen(16)
print("ready", flush=True)
while True:
    c, _ = l.accept()
    u = socket.create_connection((dst, port))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
' "$ELSEWHERE" "$HERE" "$1" >"$IT_TMP/relay.out" 2>&1 &
	RELAY_PID=$!
	wait_until 5 grep -q ready "$IT_TMP/relay.out"
}
stop_relay() { [[ -z ${RELAY_PID:-} ]] || kill "$RELAY_PID" 2>/dev/null; RELAY_PID=; return 0; }
IT_CLEANUP_HOOKS+=(stop_relay)

EDGE_PORT=$(free_port)
TRAEFIK_DIR=$IT_TMP/traefik-dynamic
mkdir -p "$TRAEFIK_DIR"
DOMAIN_FILE=$TRAEFIK_DIR/sandboxd-domains.yml
daemon() {
	start_daemon SANDBOXD_API_TOKENS=it=$IT_TOKEN,other=tok-other-tenant \
		PREVIEW_DOMAIN=example.test PREVIEW_TLS=true PREVIEW_ENTRYPOINT=websecure SANDBOXD_DNS_RESOLVER=$DNS \
		SANDBOXD_TRAEFIK_DYNAMIC_DIR=$TRAEFIK_DIR \
		SANDBOXD_DOMAIN_CHECK_INTERVAL_SECONDS=1 HTTP_PORT=$EDGE_PORT SANDBOXD_EDGE_ADDR=0.0.0.0 \
		SANDBOXD_VERIFY_HTTP_PORT=$EDGE_PORT "$@" ||
		bail "the daemon did not come up (exit status ${DAEMON_RC:-none}): $(tail -5 "$DAEMON_ERR")"
}
daemon

t_begin "an app to put domains on"
create_app shop
APP=$APP_ID
t_end

# add HOST: POST the domain; BODY its JSON
add() { api POST "/v1/apps/$APP/domains" "{\"host\":\"$1\"}"; }

for bad in "shop" "-x.example.org" "a..b.org" "sh_op.example.org" "203.0.113.7" "[::1]" "::1" \
	"console.example.test" "s-01hx5v3k9q8r7t6y5w4e3d2c1b-3000.preview.example.test" \
	"preview.example.test" "shop.apps.example.test" "apps.example.test" "localhost" "x.localhost" \
	"$(printf 'a%.0s' {1..64}).example.org"; do
	t_begin "400 for \"${bad:0:40}\""
	add "$bad"
	expect_status 400 && expect_envelope invalid_request
	t_end
done

t_begin "400 without a host, 404 for a domain the app does not have"
api POST "/v1/apps/$APP/domains" '{}'
expect_status 400 && expect_envelope invalid_request
api POST "/v1/apps/$APP/domains" '{"host":7}'
expect_status 400 && expect_envelope invalid_request
api DELETE "/v1/apps/$APP/domains/none.example.org"
expect_status 404
api POST "/v1/apps/$APP/domains/none.example.org/verify"
expect_status 404
t_end

t_begin "a name that does not resolve: pending, saying which record to create"
add Shop.Example.ORG.
expect_status 201 && expect_json .host shop.example.org && expect_json .status pending &&
	expect_json .app_id "$APP" && expect_json .tls traefik
expect_jq '.reason | test("^shop.example.org does not resolve \\(NXDOMAIN\\): create an A record shop.example.org → ")'
expect_jq '.records[0].type == "A" and .records[0].name == "shop.example.org" and (.records[0].value | length > 0)'
expect_jq '(.token | test("^[0-9a-f]{32}$")) and .verified_at == null and (.checked_at | length > 0)'
TOKEN1=$(j .token)
t_end

t_begin "resolves elsewhere: still pending, saying where it points"
zone "{\"shop.example.org\": {\"A\": [\"$ELSEWHERE\"]}}"
api POST "/v1/apps/$APP/domains/shop.example.org/verify"
expect_status 200 && expect_json .status pending
expect_jq ".reason | test(\"^shop.example.org resolves to $ELSEWHERE, not to this server \\\\(\")" ||
	note "$(j .reason)"
expect_jq '.reason | test("and the HTTP check: http://shop.example.org/ \\(.*\\) did not answer")' || note "$(j .reason)"
t_end

t_begin "the edge answers the HTTP check of a custom domain with its token, and nothing else"
curl -s -o "$IT_TMP/tok" -w '%{http_code}' -H 'Host: shop.example.org' \
	"http://127.0.0.1:$EDGE_PORT/.well-known/sandboxd-domain/$TOKEN1" >"$IT_TMP/code"
[[ $(cat "$IT_TMP/code") == 200 && $(tr -d '\r\n' <"$IT_TMP/tok") == "$TOKEN1" ]] ||
	t_err "the token's answer: $(cat "$IT_TMP/code") $(cat "$IT_TMP/tok")"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: shop.example.org' \
	"http://127.0.0.1:$EDGE_PORT/.well-known/sandboxd-domain/${TOKEN1%?}0")
[[ $code == 404 ]] || t_err "a wrong token: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: other.example.org' \
	"http://127.0.0.1:$EDGE_PORT/.well-known/sandboxd-domain/$TOKEN1")
[[ $code == 404 ]] || t_err "another host with the token: $code"
t_end

t_begin "behind a proxy at another address: verified by the HTTP check through it"
relay "$EDGE_PORT" || t_err "the relay did not start: $(cat "$IT_TMP/relay.out")"
api POST "/v1/apps/$APP/domains/shop.example.org/verify"
expect_status 200 && expect_json .status verified && expect_json .method http || note "$(j .reason)"
stop_relay
# Not a state to keep for the cases below: back to pending.
api POST "/v1/apps/$APP/domains/shop.example.org/verify"
expect_json .status pending
t_end

t_begin "the answer points here: verify makes it verified (DNS)"
zone "{\"shop.example.org\": {\"A\": [\"$HERE\"]}}"
api POST "/v1/apps/$APP/domains/shop.example.org/verify"
expect_status 200 && expect_json .status verified && expect_json .method dns && expect_json .reason ""
expect_jq '.verified_at | length > 0'
[[ $(j .token) == "$TOKEN1" ]] || t_err "the token changed"
t_end

t_begin "Traefik's file has the verified host's router, and passes the check"
grep -q 'Host(`shop.example.org`)' "$DOMAIN_FILE" || t_err "no router in $(cat "$DOMAIN_FILE" 2>&1)"
grep -q 'certResolver: le-http' "$DOMAIN_FILE" || t_err "no HTTP-01 resolver"
CHK=$IT_TMP/chk
printf '%s\n' HTTP_PORT=443 SANDBOXD_EDGE_PORT=8480 PREVIEW_DOMAIN=example.test PREVIEW_ENTRYPOINT=websecure \
	PREVIEW_TLS=true ACME_EMAIL=ops@example.test ACME_DNS_PROVIDER=cloudflare CF_DNS_API_TOKEN=x >"$IT_TMP/chk.env"
out=$("$IT_ROOT/scripts/traefik-config" --env "$IT_TMP/chk.env" --out "$CHK" 2>&1) || t_err "traefik-config: $out"
cp "$DOMAIN_FILE" "$CHK/dynamic/"
out=$("$IT_ROOT/scripts/traefik-check" "$CHK" --expect-hosts shop.example.org,console.example.test 2>&1) ||
	t_err "traefik-check: $out"
t_end

t_begin "a CNAME chain to this server verifies at once, also when each link needs a query of its own"
zone "{\"shop.example.org\": {\"A\": [\"$HERE\"]}, \"www.example.org\": {\"CNAME\": \"edge.example.net\"},
       \"edge.example.net\": {\"CNAME\": \"lb.example.net\", \"alone\": true}, \"lb.example.net\": {\"A\": [\"$HERE\"]},
       \"loop.example.org\": {\"CNAME\": \"loop.example.org\", \"alone\": true}}"
add www.example.org
expect_status 201 && expect_json .status verified && expect_json .method dns
t_end

t_begin "a CNAME loop stays pending and the call returns"
add loop.example.org
expect_status 201 && expect_json .status pending
t_end

t_begin "the pending pass: a domain becomes verified when its answer changes, with no call"
add late.example.org
expect_status 201 && expect_json .status pending
zone "{\"shop.example.org\": {\"A\": [\"$HERE\"]}, \"www.example.org\": {\"A\": [\"$HERE\"]},
       \"late.example.org\": {\"A\": [\"$HERE\"]}}"
wait_until 15 eval 'api GET "/v1/apps/$APP/domains/late.example.org"; [[ $(j .status) == verified ]]' ||
	t_err "late.example.org: $(j .status): $(j .reason)"
t_end

t_begin "409 host_taken: the same host again, on another app, and for another tenant"
add shop.example.org
expect_status 409 && expect_envelope host_taken
create_app other
OTHER=$APP_ID
api POST "/v1/apps/$OTHER/domains" '{"host":"SHOP.example.org"}'
expect_status 409 && expect_envelope host_taken
api_as tok-other-tenant POST /v1/apps '{"name":"theirs"}'
THEIRS=$(j .id)
api_as tok-other-tenant POST "/v1/apps/$THEIRS/domains" '{"host":"shop.example.org"}'
expect_status 409 && expect_envelope host_taken
api_as tok-other-tenant GET "/v1/apps/$APP/domains"
expect_status 404
api_as tok-other-tenant DELETE "/v1/apps/$APP/domains/shop.example.org"
expect_status 404
t_end

t_begin "the list; a host the app does not have is 404"
api GET "/v1/apps/$APP/domains"
expect_status 200 && expect_jq '[.domains[].host] | sort == ["late.example.org","loop.example.org","shop.example.org","www.example.org"]'
api GET "/v1/apps/$OTHER/domains/shop.example.org"
expect_status 404
api GET "/v1/apps/$APP/domains/WWW.Example.org."
expect_status 200 && expect_json .host www.example.org
t_end

t_begin "a restart keeps them; SANDBOXD_PUBLIC_ADDRS names this server's address in the reasons"
daemon SANDBOXD_PUBLIC_ADDRS=$HERE
api GET "/v1/apps/$APP/domains/shop.example.org"
expect_status 200 && expect_json .status verified
expect_jq ".records[0] == {\"type\":\"A\",\"name\":\"shop.example.org\",\"value\":\"$HERE\"}"
add gone.example.org
expect_json .reason "gone.example.org does not resolve (NXDOMAIN): create an A record gone.example.org → $HERE"
grep -q 'Host(`www.example.org`)' "$DOMAIN_FILE" || t_err "the restart lost a router"
grep -q 'gone.example.org' "$DOMAIN_FILE" && t_err "a pending host has a router"
t_end

t_begin "remove: the row and the router go, the host is free again"
api DELETE "/v1/apps/$APP/domains/shop.example.org"
expect_status 204
api GET "/v1/apps/$APP/domains/shop.example.org"
expect_status 404
grep -q 'shop.example.org' "$DOMAIN_FILE" && t_err "the router stayed"
api POST "/v1/apps/$OTHER/domains" '{"host":"shop.example.org"}'
expect_status 201
t_end

t_begin "the command line: domain add, list, verify, remove"
sbd() { env SANDBOXD_API="$API_URL" SANDBOXD_TOKEN="$IT_TOKEN" XDG_CONFIG_HOME="$IT_TMP/xdg" NO_COLOR=1 "$SANDBOXD_BIN" "$@"; }
out=$(sbd domain add "$APP" cli.example.org 2>&1) || t_err "domain add: $out"
grep -qa '^cli.example.org: pending$' <<<"$out" || t_err "add: $out"
grep -qa "create one of these DNS records" <<<"$out" && grep -qaE "^    A +cli.example.org -> $HERE$" <<<"$out" ||
	t_err "no records to create: $out"
zone "{\"cli.example.org\": {\"A\": [\"$HERE\"]}}"
out=$(sbd domain verify "$APP" cli.example.org 2>&1) || t_err "domain verify: $out"
[[ $out == "cli.example.org: verified (dns)" ]] || t_err "verify: $out"
out=$(sbd domain list "$APP" 2>&1) || t_err "domain list: $out"
grep -qE '^cli.example.org +verified +dns' <<<"$out" || t_err "list: $out"
out=$(sbd domain add "$APP" cli.example.org 2>&1) && t_err "a second add succeeded: $out"
grep -q host_taken <<<"$out" || t_err "second add: $out"
out=$(sbd domain remove "$APP" cli.example.org 2>&1) || t_err "domain remove: $out"
[[ $out == "removed cli.example.org from app $APP" ]] || t_err "remove: $out"
sbd domain list "$APP" -q | grep -q cli.example.org && t_err "still listed"
t_end

t_begin "a published static app answers at its verified custom domain through the edge"
create_app site '"runtime_preset":"static"' && create_sandbox "$APP_ID" || bail "no sandbox: ${T_ERRS[*]}"
SITE=$APP_ID
SB=$SB_ID
api PUT "/v1/sandboxes/$SB/files?path=index.html" '<!doctype html><title>site</title><h1>published at a custom domain</h1>'
[[ $STATUS =~ ^20[01]$ ]] || t_err "PUT index.html: $STATUS $(short_body)"
api POST "/v1/apps/$SITE/domains" '{"host":"www.site.test"}'
expect_status 201 && expect_json .status pending
api POST "/v1/apps/$SITE/publish" '{}'
expect_status 202
RID=$(j .release.id)
wait_until 150 eval 'api GET "/v1/apps/$SITE/releases/$RID"; [[ $(j .status) != building ]]'
expect_json .status ready || note "$(short_body)"
# Pending: the custom domain serves nothing yet (the edge's unknown-host page).
page() { curl -s -o "$IT_TMP/page" -w '%{http_code} %{content_type}' --max-time 5 -H "Host: $1" "http://127.0.0.1:$EDGE_PORT/"; }
got=$(page www.site.test)
grep -q 'published at a custom domain' "$IT_TMP/page" && t_err "served before it was verified ($got)"
zone "{\"www.site.test\": {\"A\": [\"$HERE\"]}}"
api POST "/v1/apps/$SITE/domains/www.site.test/verify"
expect_json .status verified
expect_jq ".records[1] == {\"type\":\"CNAME\",\"name\":\"www.site.test\",\"value\":\"site.apps.example.test\"}" ||
	note "$(j .records)"
got=$(page WWW.Site.Test:$EDGE_PORT)
[[ $got == "200 text/html"* ]] && grep -q 'published at a custom domain' "$IT_TMP/page" ||
	t_err "at the custom domain: $got $(head -c 200 "$IT_TMP/page")"
got=$(page site.apps.example.test)
[[ $got == "200 text/html"* ]] || t_err "at its label's host: $got"
t_end

t_begin "kill -9 and a start again: the custom domain answers at once, Traefik's file is whole"
kill9_daemon
daemon SANDBOXD_PUBLIC_ADDRS=$HERE
got=$(page www.site.test)
[[ $got == "200 text/html"* ]] && grep -q 'published at a custom domain' "$IT_TMP/page" ||
	t_err "after kill -9: $got"
grep -q 'Host(`www.site.test`)' "$DOMAIN_FILE" || t_err "no router after kill -9"
ls -A "$TRAEFIK_DIR" | grep -v '^sandboxd-domains.yml$' && t_err "a temporary file left in $TRAEFIK_DIR"
t_end

t_begin "removed: the custom domain serves nothing"
api DELETE "/v1/apps/$SITE/domains/www.site.test"
expect_status 204
got=$(page www.site.test)
grep -q 'published at a custom domain' "$IT_TMP/page" && t_err "still served after the removal ($got)"
t_end

t_begin "the timeline: domain.added, domain.verified, domain.removed"
api GET "/v1/apps/$APP/events?limit=100"
expect_status 200
expect_jq '[.events[] | select(.type == "domain.added")] | length >= 3'
expect_jq '[.events[] | select(.type == "domain.verified" and .payload.host == "shop.example.org")] | map(.payload.method) == ["dns","http"]'
expect_jq '[.events[] | select(.type == "domain.removed") | .payload.host] == ["cli.example.org","shop.example.org"]'
t_end

finish
