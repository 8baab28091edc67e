#!/usr/bin/env bash
# Traefik's configuration, checked statically (Traefik's image cannot be
# pulled here, so Traefik itself never reads it in this test; docs/deploy.md
# says so): scripts/traefik-config writes it from a .env, and
# scripts/traefik-check (PyYAML) checks every entrypoint, router, service
# and resolver of it.  Cases: web only; websecure with the DNS-01 resolver
# for each documented provider (Cloudflare, Hetzner, DigitalOcean), a
# redirect from web and a wildcard for the previews; the router set (the
# console and every preview host go to the edge, the API nowhere); what
# the generator refuses; that the checker fails on broken files; that
# Traefik's environment gets the provider's credentials and not the
# daemon's token; that docker-compose accepts the compose file with and
# without the traefik profile; and that systemd-analyze accepts the unit
# of native installs.
. "$(dirname "$0")/lib.sh"

python3 -c 'import yaml' 2>/dev/null || bail "python3-yaml is not installed (apt-get install python3-yaml)"
gen=$IT_ROOT/scripts/traefik-config
chk=$IT_ROOT/scripts/traefik-check

# config NAME LINES…: writes $IT_TMP/NAME.env and runs the generator into
# $IT_TMP/NAME/; GEN_RC, GEN_OUT
config() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$IT_TMP/$name.env"
	GEN_OUT=$("$gen" --env "$IT_TMP/$name.env" --out "$IT_TMP/$name" 2>&1)
	GEN_RC=$?
}

# yq FILE EXPR: a value from a YAML file (python), as JSON
yq() {
	python3 -c 'import json, sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2], {"d": d})))' "$1" "$2"
}

t_begin "web only: one plain entrypoint on HTTP_PORT, no resolver, both routers on web"
config web HTTP_PORT=8080 SANDBOXD_EDGE_PORT=8480 SANDBOXD_EDGE_ADDR=127.0.0.1 \
	SANDBOXD_API_ADDR=127.0.0.1:9090 SANDBOXD_API_TOKENS=default=sk_secret_token_value
((GEN_RC == 0)) || t_err "traefik-config: $GEN_OUT"
out=$("$chk" "$IT_TMP/web" --api 127.0.0.1:9090 --edge 8480 \
	--expect-hosts console.localhost,s-01hx5v3k9q8r7t6y5w4e3d2c1b-3000.preview.localhost \
	--reject-hosts localhost,preview.localhost,a.b.preview.localhost,console.localhost.evil.com 2>&1) ||
	t_err "traefik-check: $out"
[[ $(yq "$IT_TMP/web/traefik.yml" 'sorted(d["entryPoints"])') == '["ping", "web"]' ]] || t_err "entrypoints"
[[ $(yq "$IT_TMP/web/traefik.yml" 'd["entryPoints"]["web"]["address"]') == '":8080"' ]] || t_err "web address"
[[ $(yq "$IT_TMP/web/traefik.yml" '"certificatesResolvers" in d') == false ]] || t_err "a resolver without TLS"
[[ $(yq "$IT_TMP/web/dynamic/dynamic.yml" 'sorted(d["http"]["routers"])') == '["sandboxd-console", "sandboxd-domain-check", "sandboxd-previews", "sandboxd-published"]' ]] || t_err "routers"
[[ $(yq "$IT_TMP/web/dynamic/dynamic.yml" '[r["entryPoints"] for r in d["http"]["routers"].values()]') == '[["web"], ["web"], ["web"], ["web"]]' ]] || t_err "router entrypoints"
[[ $(yq "$IT_TMP/web/dynamic/dynamic.yml" '[r.get("tls") for r in d["http"]["routers"].values()]') == '[null, null, null, null]' ]] || t_err "tls without TLS"
grep -q 'sk_secret' "$IT_TMP/web/acme.env" && t_err "the daemon's token is in acme.env"
t_end

for provider in cloudflare:CF_DNS_API_TOKEN hetzner:HETZNER_API_KEY digitalocean:DO_AUTH_TOKEN; do
	name=${provider%%:*}
	var=${provider#*:}
	t_begin "websecure with DNS-01 ($name): redirect, wildcard certificate, credentials for Traefik only"
	config "tls-$name" HTTP_PORT=443 SANDBOXD_EDGE_PORT=8480 PREVIEW_DOMAIN=example.com \
		PREVIEW_ENTRYPOINT=websecure PREVIEW_TLS=true ACME_EMAIL=ops@example.com \
		"ACME_DNS_PROVIDER=$name" "$var=\"secret-$name\"" \
		ACME_CA_SERVER=https://acme-staging-v02.api.letsencrypt.org/directory \
		SANDBOXD_API_TOKENS=default=sk_secret_token_value SANDBOXD_SECRETS_KEY=c2VjcmV0
	((GEN_RC == 0)) || t_err "traefik-config: $GEN_OUT"
	d=$IT_TMP/tls-$name
	out=$("$chk" "$d" --api 127.0.0.1:9090 --edge 8480 \
		--expect-hosts console.example.com,s-01HX5V3K9Q8R7T6Y5W4E3D2C1B-5173.preview.example.com,shop.apps.example.com \
		--reject-hosts example.com,preview.example.com,console.localhost,apps.example.com,a.b.apps.example.com 2>&1) || t_err "traefik-check: $out"
	[[ $(yq "$d/traefik.yml" 'sorted(d["entryPoints"])') == '["ping", "web", "websecure"]' ]] || t_err "entrypoints"
	[[ $(yq "$d/traefik.yml" 'd["entryPoints"]["websecure"]["address"]') == '":443"' ]] || t_err "websecure address"
	[[ $(yq "$d/traefik.yml" 'd["entryPoints"]["web"]["address"]') == '":80"' ]] || t_err "web address"
	[[ $(yq "$d/traefik.yml" 'd["entryPoints"]["web"]["http"]["redirections"]["entryPoint"]') == '{"to": "websecure", "scheme": "https", "permanent": true, "priority": 1}' ]] ||
		t_err "no HTTP->HTTPS redirect"
	[[ $(yq "$d/traefik.yml" 'd["certificatesResolvers"]["letsencrypt"]["acme"]["dnsChallenge"]["provider"]') == "\"$name\"" ]] || t_err "provider"
	[[ $(yq "$d/traefik.yml" 'd["certificatesResolvers"]["letsencrypt"]["acme"]["caServer"]') == '"https://acme-staging-v02.api.letsencrypt.org/directory"' ]] || t_err "caServer"
	[[ $(yq "$d/dynamic/dynamic.yml" 'd["http"]["routers"]["sandboxd-previews"]["tls"]["domains"]') == '[{"main": "preview.example.com", "sans": ["*.preview.example.com"]}]' ]] ||
		t_err "no wildcard for the previews"
	[[ $(yq "$d/dynamic/dynamic.yml" 'd["http"]["routers"]["sandboxd-published"]["tls"]') == '{"certResolver": "letsencrypt", "domains": [{"main": "apps.example.com", "sans": ["*.apps.example.com"]}]}' ]] ||
		t_err "no wildcard (DNS-01) for the published apps"
	[[ $(yq "$d/traefik.yml" 'd["certificatesResolvers"]["le-http"]["acme"]["httpChallenge"]') == '{"entryPoint": "web"}' ]] ||
		t_err "no HTTP-01 resolver for custom domains"
	[[ $(yq "$d/traefik.yml" 'd["providers"]["file"]') == '{"directory": "/var/lib/traefik/dynamic", "watch": true}' ]] ||
		t_err "the file provider does not watch the dynamic directory"
	[[ $(yq "$d/dynamic/dynamic.yml" '[r["entryPoints"] for r in d["http"]["routers"].values()]') == '[["websecure"], ["websecure"], ["websecure"], ["web"]]' ]] ||
		t_err "a router not on websecure (a stopped app could not be woken over HTTPS), or the HTTP check not on web"
	[[ $(grep -v '^#' "$d/acme.env") == "$var=secret-$name" ]] || t_err "acme.env: $(cat "$d/acme.env")"
	[[ $(stat -c %a "$d/acme.env") == 600 ]] || t_err "acme.env mode $(stat -c %a "$d/acme.env")"
	t_end
done

t_begin "the generator refuses what cannot work, naming the setting"
refuse() { # refuse WANTED-TEXT LINES…
	local want=$1
	shift
	config refused "$@"
	((GEN_RC != 0)) || t_err "accepted: $*"
	grep -qF -- "$want" <<<"$GEN_OUT" || t_err "for $*: expected '$want' in: $GEN_OUT"
}
tlsbase=(SANDBOXD_EDGE_PORT=8480 PREVIEW_DOMAIN=example.com PREVIEW_ENTRYPOINT=websecure PREVIEW_TLS=true
	ACME_EMAIL=ops@example.com ACME_DNS_PROVIDER=cloudflare)
refuse "PREVIEW_TLS=true needs PREVIEW_ENTRYPOINT=websecure" HTTP_PORT=443 SANDBOXD_EDGE_PORT=8480 PREVIEW_TLS=true
refuse "set HTTP_PORT=443" HTTP_PORT=80 "${tlsbase[@]}"
refuse "ACME_EMAIL" HTTP_PORT=443 "${tlsbase[@]}" ACME_EMAIL=
refuse "ACME_DNS_PROVIDER" HTTP_PORT=443 "${tlsbase[@]}" ACME_DNS_PROVIDER=
refuse "PREVIEW_ENTRYPOINT=websecure needs PREVIEW_TLS=true" HTTP_PORT=80 SANDBOXD_EDGE_PORT=8480 PREVIEW_ENTRYPOINT=websecure
refuse "SANDBOXD_EDGE_PORT: empty" HTTP_PORT=80
refuse "a port Traefik listens on" HTTP_PORT=8480 SANDBOXD_EDGE_PORT=8480
refuse "the API's port" HTTP_PORT=80 SANDBOXD_EDGE_PORT=9090
refuse "PREVIEW_DOMAIN" HTTP_PORT=80 SANDBOXD_EDGE_PORT=8480 'PREVIEW_DOMAIN=ex`ample.com'
refuse "PREVIEW_TLS" HTTP_PORT=80 SANDBOXD_EDGE_PORT=8480 PREVIEW_TLS=yes
t_end

t_begin "the checker fails on broken configurations"
broken() { # broken WANTED-TEXT SED-EXPR FILE
	rm -rf "$IT_TMP/broken"
	cp -r "$IT_TMP/tls-cloudflare" "$IT_TMP/broken"
	sed -i "$2" "$IT_TMP/broken/$3"
	out=$("$chk" "$IT_TMP/broken" --api 127.0.0.1:9090 --edge 8480 \
		--expect-hosts console.example.com,s-x-3000.preview.example.com 2>&1) &&
		t_err "accepted with $2 on $3"
	grep -qF -- "$1" <<<"$out" || t_err "for $2 on $3: expected '$1' in: $out"
}
broken "points at the API's port" 's/127.0.0.1:8480/127.0.0.1:9090/' dynamic/dynamic.yml
broken "service 'nope' does not exist" 's/service: sandboxd-edge/service: nope/' dynamic/dynamic.yml
broken "entrypoint 'webs' does not exist" 's/entryPoints: \[websecure\]/entryPoints: [webs]/' dynamic/dynamic.yml
broken "certResolver 'le' does not exist" 's/certResolver: letsencrypt/certResolver: le/' dynamic/dynamic.yml
broken "httpChallenge entrypoint None does not exist" 's/dnsChallenge:/httpChallenge:/' traefik.yml
broken "it would redirect the HTTP check" '/priority: 1/d' traefik.yml
broken "the HTTP check's path is for web only" 's/entryPoints: \[web\]/entryPoints: [websecure]/' dynamic/dynamic.yml
broken "is not on port 80" 's/entryPoint: web$/entryPoint: websecure/' traefik.yml
broken "is not the directory /var/lib/traefik/dynamic" 's|directory: /var/lib/traefik/dynamic|filename: /etc/traefik/dynamic.yml|' traefik.yml
broken "unknown key 'emial'" 's/email:/emial:/' traefik.yml
broken "redirects to unknown entrypoint" 's/to: websecure/to: websecur/' traefik.yml
broken "expected exactly one" 's/console.example.com/console.example.org/' dynamic/dynamic.yml
broken "not anchored" 's/\$`)/`)/' dynamic/dynamic.yml
t_end

t_begin "the daemon's file of custom domains beside the installer's: checked as one"
domains() { # domains WANTED-TEXT ("" = accepted) YAML
	rm -rf "$IT_TMP/broken"
	cp -r "$IT_TMP/tls-cloudflare" "$IT_TMP/broken"
	printf '%s\n' "$2" >"$IT_TMP/broken/dynamic/sandboxd-domains.yml"
	local rc=0
	out=$("$chk" "$IT_TMP/broken" --api 127.0.0.1:9090 --edge 8480 --expect-hosts shop.example.org 2>&1) || rc=$?
	if [[ -z $1 ]]; then
		((rc == 0)) || t_err "refused: $out"
	else
		((rc != 0)) && grep -qF -- "$1" <<<"$out" || t_err "expected '$1' in: $out"
	fi
}
router() { # router ENTRYPOINT RESOLVER SERVICE
	printf 'http:\n  routers:\n    sandboxd-domain-1:\n      rule: %s\n      entryPoints: [%s]\n      service: %s\n      tls:\n        certResolver: %s\n  services:\n    sandboxd-domains-edge:\n      loadBalancer:\n        servers:\n          - url: "http://127.0.0.1:8480"\n' \
		"'Host(\`shop.example.org\`)'" "$1" "$3" "$2"
}
domains "" "$(router websecure le-http sandboxd-domains-edge)"
domains "entrypoint 'webx' does not exist" "$(router webx le-http sandboxd-domains-edge)"
domains "certResolver 'le-dns' does not exist" "$(router websecure le-dns sandboxd-domains-edge)"
domains "service 'gone' does not exist" "$(router websecure le-http gone)"
domains "defined in" "$(router websecure le-http sandboxd-edge | sed 's/sandboxd-domains-edge:/sandboxd-edge:/')"
domains "no rule" "$(router websecure le-http sandboxd-domains-edge | sed '/rule:/d')"
t_end

t_begin "docker-compose accepts the compose file with and without the traefik profile"
if command -v docker-compose >/dev/null; then
	proj=$IT_TMP/compose
	mkdir -p "$proj/traefik"
	cp "$IT_ROOT/docker-compose.yml" "$proj/"
	: >"$proj/traefik/acme.env"
	for profiles in traefik ""; do
		printf 'SANDBOXD_DATA_DIR=%s\nCOMPOSE_PROFILES=%s\n' "$IT_TMP/data" "$profiles" >"$proj/.env"
		out=$(cd "$proj" && env -i "PATH=$PATH" docker-compose config 2>&1) || t_err "docker-compose config ($profiles): $out"
	done
	grep -q 'condition: service_healthy' <<<"$out" || t_err "no depends_on on health"
	printf 'COMPOSE_PROFILES=\n' >"$proj/.env"
	out=$(cd "$proj" && env -i "PATH=$PATH" docker-compose config 2>&1) &&
		t_err "docker-compose config accepted a .env without SANDBOXD_DATA_DIR"
	grep -q 'SANDBOXD_DATA_DIR must be set' <<<"$out" || t_err "message: $out"
else
	t_err "docker-compose is not installed"
fi
t_end

t_begin "the systemd unit for native installs passes systemd-analyze verify"
if command -v systemd-analyze >/dev/null; then
	# The binary is not installed here; every other complaint fails.
	out=$(systemd-analyze verify "$IT_ROOT/packaging/sandboxd.service" 2>&1 |
		grep -v 'Command /usr/local/bin/sandboxd is not executable')
	[[ -z $out ]] || t_err "systemd-analyze verify: $out"
	grep -q '^Environment=SANDBOXD_ENV_FILE=/etc/sandboxd/sandboxd.env$' "$IT_ROOT/packaging/sandboxd.service" ||
		t_err "the unit does not name its env file"
else
	t_err "systemd-analyze is not installed"
fi
t_end

finish
