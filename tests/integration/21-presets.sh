#!/usr/bin/env bash
# Runtime presets: for each template in the image, a container started the
# way sandboxd starts sandboxes (uid 1000, read-only root, tmpfs /tmp,
# cap-drop ALL, no-new-privileges) and with --network none, to prove that no
# network is needed: seed the template into an empty workspace (cp -a, as
# the supervisor does), start the web command of its sandbox.yaml, and get
# 200 with the template's page text on 127.0.0.1:3000 from inside within
# 20 s (60 s for nextjs: next dev compiles the page on the first request);
# the health path answers 200 and the build check passes.  The worker
# preset (no web process) is only checked to be in the image here
# (95-presets-next-worker.sh runs it).  Then the agents' --version, when
# the image has them.
#
# Standalone: bash tests/integration/21-presets.sh (needs Docker and the
# image, `make image`).  Prints the seed time and the time to the first
# answer of each preset as "#" lines.
. "$(dirname "$0")/lib.sh"
need_docker

IMAGE=$IT_IMAGE
LIMIT_MS=20000

# preset → text its page has
declare -A PAGE_TEXT=(
	[react-vite]="Your React app is running"
	[fastapi]="Your FastAPI app is running"
	[node-express]="Your Express app is running"
	[static]="Your static site is running"
	[nextjs]="Your Next.js app is running"
)
# The presets with a web process; worker (workers only) is checked apart.
PRESETS=(react-vite fastapi node-express static nextjs)
# next dev compiles the page on its first request: seconds, not one.
declare -A PRESET_LIMIT_MS=([nextjs]=60000)

# Polls http://127.0.0.1:3000PATH until it answers 200 with a body holding
# TEXT, or LIMIT ms after T0 (epoch ms) have passed.  Prints "ok <ms since
# T0>" or "fail <last answer>".  Runs inside the container.
# shellcheck disable=SC2016
POLL='
const http = require("http");
const [t0, path, want, limit] = [Number(process.argv[1]), process.argv[2], process.argv[3], Number(process.argv[4])];
function get() {
	return new Promise((done) => {
		const req = http.get({ host: "127.0.0.1", port: 3000, path, timeout: 2000 }, (res) => {
			let body = "";
			res.setEncoding("utf8");
			res.on("data", (d) => { body += d; });
			res.on("end", () => done({ status: res.statusCode, body }));
		});
		req.on("timeout", () => req.destroy(new Error("timeout")));
		req.on("error", (e) => done({ status: 0, error: e.code || e.message }));
	});
}
(async () => {
	let last = { status: 0, error: "no attempt" };
	while (Date.now() - t0 < limit) {
		last = await get();
		if (last.status === 200 && last.body.includes(want)) {
			console.log("ok " + (Date.now() - t0));
			return;
		}
		await new Promise((r) => setTimeout(r, 100));
	}
	console.log("fail " + JSON.stringify(last).slice(0, 400));
	process.exit(1);
})();
'

# yaml_web_field FILE FIELD: FIELD of the web: block of a sandbox.yaml
# (the templates' simple layout: two-space indent, one line per field).
yaml_field() {
	awk -v block="$2:" -v field="$3:" '
		$0 ~ "^[^ #]" { inblock = ($1 == block) ; next }
		inblock && $1 == field { sub(/^[^:]*:[ \t]*/, ""); print; exit }
	' "$1"
}

# run_sandbox NAME WORKSPACE: a detached container as sandboxd runs one,
# without network.  Prints its id.
run_sandbox() {
	docker run -d --name "sbd-it-presets-$1-$$" --label sandboxd.test=presets \
		--read-only \
		--tmpfs /tmp:rw,nosuid,nodev,size=512m,mode=1777 --tmpfs /var/tmp \
		--cap-drop ALL --security-opt no-new-privileges \
		--user 1000:1000 --network none \
		--memory 1g --pids-limit 512 \
		-v "$2:/home/sandbox" "$IMAGE"
}

# The agents, checked first: quick, and independent of the templates.
t_begin "image lists every preset"
got=$(docker run --rm --network none --entrypoint /bin/ls "$IMAGE" /opt/sandboxd/templates 2>&1 | tr '\n' ' ')
for p in "${PRESETS[@]}" worker; do
	[[ " $got" == *" $p "* ]] || t_err "/opt/sandboxd/templates has no $p (has: $got)"
done
t_end

has_agents=$(docker image inspect -f '{{index .Config.Labels "sandboxd.agents"}}' "$IMAGE" 2>/dev/null)
if [[ $has_agents == 1 ]]; then
	t_begin "agents: opencode --version and claude --version (uid 1000, read-only root, no network)"
	ws=$IT_TMP/ws-agents
	mkdir -p "$ws" && chown 1000:1000 "$ws"
	c=$(run_sandbox agents "$ws" 2>&1) || t_err "docker run: $c"
	for a in opencode:opencode claude:claude-code; do
		bin=${a%%:*}
		want=$(docker image inspect -f "{{index .Config.Labels \"sandboxd.agents.${a#*:}\"}}" "$IMAGE")
		out=$(timeout 60 docker exec "$c" "$bin" --version 2>&1) ||
			t_err "$bin --version failed: $out"
		[[ -n $want && $out == *"$want"* ]] ||
			t_err "$bin --version: expected version $want, got: $out"
		note "$bin --version: $out"
	done
	docker rm -f "$c" >/dev/null 2>&1
	t_end
else
	note "image built without agents (SANDBOXD_IMAGE_AGENTS=0): agent checks skipped"
fi

for p in "${PRESETS[@]}"; do
	tpl_yaml=$IT_TMP/$p.sandbox.yaml
	ws=$IT_TMP/ws-$p
	mkdir -p "$ws" && chown 1000:1000 "$ws"

	t_begin "$p: template has sandbox.yaml (version 1, web on 3000) and .gitignore"
	docker run --rm --network none --entrypoint /bin/cat "$IMAGE" \
		"/opt/sandboxd/templates/$p/sandbox.yaml" >"$tpl_yaml" 2>&1 ||
		t_err "no /opt/sandboxd/templates/$p/sandbox.yaml: $(cat "$tpl_yaml")"
	grep -qx 'version: 1' "$tpl_yaml" || t_err "sandbox.yaml: no 'version: 1'"
	cmd=$(yaml_field "$tpl_yaml" web command)
	port=$(yaml_field "$tpl_yaml" web port)
	health=$(yaml_field "$tpl_yaml" web health_path)
	build=$(yaml_field "$tpl_yaml" build command)
	[[ -n $cmd ]] || t_err "sandbox.yaml: no web.command"
	[[ $port == 3000 ]] || t_err "sandbox.yaml: web.port is '$port', not 3000"
	[[ $health == /* ]] || t_err "sandbox.yaml: web.health_path '$health' does not start with /"
	gi=$(docker run --rm --network none --entrypoint /bin/cat "$IMAGE" \
		"/opt/sandboxd/templates/$p/.gitignore" 2>&1)
	for pat in node_modules/ dist/ .vite/ __pycache__/ .venv/ '*.log' .env; do
		grep -qxF -- "$pat" <<<"$gi" || t_err ".gitignore lacks $pat"
	done
	t_end

	limit=${PRESET_LIMIT_MS[$p]:-$LIMIT_MS}
	t_begin "$p: seed and serve the page with no network within $((limit / 1000)) s"
	c=
	if ! c=$(run_sandbox "$p" "$ws" 2>&1); then
		t_err "docker run: $c"
		t_end
		continue
	fi
	# The copy the supervisor makes when it seeds a new app, timed inside.
	# shellcheck disable=SC2016
	seed=$(docker exec "$c" sh -ec '
		mkdir -p "$HOME/workspace/app"
		s=$(date +%s%N)
		cp -a "/opt/sandboxd/templates/$1/." "$HOME/workspace/app/"
		e=$(date +%s%N)
		echo "$(( (e - s) / 1000000 )) ms, $(du -sh "$HOME/workspace/app" | cut -f1), $(find "$HOME/workspace/app" | wc -l) files"
	' sh "$p" 2>&1) || t_err "seeding failed: $seed"
	owner=$(stat -c %u "$ws/workspace/app/sandbox.yaml" 2>/dev/null)
	[[ $owner == 1000 ]] || t_err "seeded sandbox.yaml owned by uid '${owner:-missing}', not 1000"
	t0=$(date +%s%3N)
	# As the supervisor starts it: in the app dir, PORT and HOST set.
	docker exec -d -e PORT=3000 -e HOST=0.0.0.0 "$c" \
		sh -c "cd ~/workspace/app && exec $cmd >\$HOME/web.log 2>&1" ||
		t_err "docker exec -d $cmd failed"
	res=$(docker exec "$c" node -e "$POLL" "$t0" / "${PAGE_TEXT[$p]}" "$limit" 2>&1)
	if [[ $res == ok\ * ]]; then
		note "$p: seed copy ${seed}; first answer after ${res#ok } ms"
	else
		t_err "GET / did not answer 200 with '${PAGE_TEXT[$p]}': $res" \
			"web command: $cmd" "web.log: $(tail -n 20 "$ws/web.log" 2>/dev/null)"
	fi
	if [[ $health != / ]]; then
		res=$(docker exec "$c" node -e "$POLL" "$(date +%s%3N)" "$health" "" 5000 2>&1)
		[[ $res == ok\ * ]] || t_err "GET $health (health_path): $res"
	fi
	t_end

	if [[ $p == react-vite ]]; then
		t_begin "$p: the dev server compiles src/App.jsx"
		res=$(docker exec "$c" node -e "$POLL" "$(date +%s%3N)" /src/App.jsx "${PAGE_TEXT[$p]}" 15000 2>&1)
		[[ $res == ok\ * ]] || t_err "GET /src/App.jsx: $res" \
			"web.log: $(tail -n 20 "$ws/web.log" 2>/dev/null)"
		t_end
	fi

	if [[ -n $build ]]; then
		t_begin "$p: build check '$build' passes with no network"
		out=$(timeout 180 docker exec "$c" sh -c "cd ~/workspace/app && $build" 2>&1) ||
			t_err "exit status $?: $(tail -n 20 <<<"$out")"
		t_end
	fi

	docker rm -f "$c" >/dev/null 2>&1
done

finish
