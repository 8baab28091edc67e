/*
 * applog/logscan: a dev server's output to the app's problem, on samples
 * of what Vite, esbuild, Next.js, tsc, Node and uvicorn really print
 * (colour codes included where they print them).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "applog/logscan.h"
#include "unit.h"

static struct logscan ls;

static void
scan(const char *text)
{
	logscan_text(text, strlen(text), &ls);
}

static bool
lines_have(const char *what)
{
	for (size_t i = 0; i < ls.nlines; i++)
		if (strstr(ls.lines[i], what))
			return true;
	return false;
}

/* Vite 5 with @vitejs/plugin-react: a JSX syntax error, as the dev server
 * prints it when the browser asks for the module. */
static const char vite_start[] =
    "\n> app@0.0.0 dev\n> vite --host 0.0.0.0 --port 3000\n\n"
    "\x1b[2m4:05:01 PM\x1b[22m \x1b[36m\x1b[1m[vite]\x1b[22m\x1b[39m "
    "\x1b[32mready in \x1b[1m412\x1b[22m ms\x1b[39m\n"
    "  \x1b[32m\xe2\x9e\x9c\x1b[39m  \x1b[1mLocal\x1b[22m:   "
    "\x1b[36mhttp://localhost:\x1b[1m3000\x1b[22m/\x1b[39m\n";
static const char vite_error[] =
    "\x1b[2m4:05:12 PM\x1b[22m \x1b[36m\x1b[1m[vite]\x1b[22m\x1b[39m "
    "\x1b[32mhmr update \x1b[2m/src/App.jsx\x1b[22m\x1b[39m\n"
    "\x1b[2m4:05:12 PM\x1b[22m \x1b[31m\x1b[1m[vite]\x1b[22m\x1b[39m "
    "\x1b[31mInternal server error: /home/sandbox/app/src/App.jsx: "
    "Unexpected token (5:10)\n\n"
    "\x1b[0m \x1b[90m 3 |\x1b[39m \x1b[36mexport\x1b[39m \x1b[36mdefault"
    "\x1b[39m \x1b[36mfunction\x1b[39m \x1b[33mApp\x1b[39m() {\x1b[0m\n"
    "\x1b[0m\x1b[31m\x1b[1m>\x1b[22m\x1b[39m\x1b[90m 5 |\x1b[39m     "
    "\x1b[33m<\x1b[39m\x1b[33mdiv\x1b[39m\x1b[33m>\x1b[39m{\x1b[0m\n"
    "  Plugin: vite:react-babel\n"
    "  File: /home/sandbox/app/src/App.jsx:5:10\n"
    "      at constructor (/home/sandbox/app/node_modules/@babel/parser/"
    "lib/index.js:356:19)\n";
static const char vite_fixed[] =
    "\x1b[2m4:06:30 PM\x1b[22m \x1b[36m\x1b[1m[vite]\x1b[22m\x1b[39m "
    "\x1b[32mhmr update \x1b[2m/src/App.jsx\x1b[22m\x1b[39m\n";

static void
vite_internal_error_and_its_fix(void)
{
	char all[4096];

	scan(vite_start);
	CHECK(ls.kind == LOGSCAN_NONE);
	snprintf(all, sizeof(all), "%s%s", vite_start, vite_error);
	scan(all);
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK_STR(ls.summary, "Internal server error: "
	                      "/home/sandbox/app/src/App.jsx: Unexpected "
	                      "token (5:10)");
	CHECK(lines_have("File: /home/sandbox/app/src/App.jsx:5:10"));
	CHECK(lines_have("> 5 |     <div>{"));
	CHECK(!lines_have("\x1b"));
	CHECK(!lines_have("ready in"));
	snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s",
	         vite_fixed);
	scan(all);
	CHECK(ls.kind == LOGSCAN_NONE);
	CHECK(ls.nlines == 0);
}

/* Vite's esbuild transform (a .tsx file), pre-transform first. */
static void
vite_esbuild_transform_failed(void)
{
	scan("4:10:02 PM [vite] Pre-transform error: Transform failed with 1 "
	     "error:\n"
	     "/home/sandbox/app/src/main.tsx:7:2: ERROR: Expected \")\" but "
	     "found \"}\"\n"
	     "4:10:02 PM [vite] Internal server error: Transform failed with "
	     "1 error:\n"
	     "/home/sandbox/app/src/main.tsx:7:2: ERROR: Expected \")\" but "
	     "found \"}\"\n"
	     "  Plugin: vite:esbuild\n"
	     "  File: /home/sandbox/app/src/main.tsx:7:2\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK_STR(ls.summary,
	          "Pre-transform error: Transform failed with 1 error:");
	CHECK(lines_have("main.tsx:7:2: ERROR: Expected"));
	CHECK(ls.nlines == 6);
}

static void
esbuild_error_block(void)
{
	scan("\xe2\x9c\x98 [ERROR] Unexpected end of file\n\n"
	     "    src/index.js:12:0:\n"
	     "      12 \xe2\x94\x82 \n"
	     "         \xe2\x95\xb5 ^\n\n1 error\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK(lines_have("src/index.js:12:0:"));
}

/* Next.js 13 (pages) and 14 (app router), and their recoveries. */
static void
nextjs_failed_to_compile(void)
{
	scan("- ready started server on 0.0.0.0:3000, url: "
	     "http://localhost:3000\n"
	     "- event compiled client and server successfully in 1140 ms "
	     "(20 modules)\n"
	     "- error ./pages/index.js\n"
	     "Module not found: Can't resolve 'left-pad'\n"
	     "> 1 | import pad from 'left-pad'\n"
	     "https://nextjs.org/docs/messages/module-not-found\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK_STR(ls.summary, "Module not found: Can't resolve 'left-pad'");
	scan("  \xe2\x96\xb2 Next.js 14.2.3\n"
	     "  - Local:        http://localhost:3000\n\n"
	     " \xe2\x9c\x93 Ready in 1906ms\n"
	     " \xe2\x97\x8b Compiling / ...\n"
	     " \xe2\xa8\xaf ./app/page.js\n"
	     "Error: \n"
	     "  \xc3\x97 Unexpected token `div`. Expected jsx identifier\n"
	     "   \xe2\x95\xad\xe2\x94\x80[/home/sandbox/app/app/page.js:3:1]\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK(lines_have("Unexpected token `div`"));
	scan(" \xe2\xa8\xaf ./app/page.js\nError: x\n"
	     " \xe2\x9c\x93 Compiled / in 312ms (431 modules)\n");
	CHECK(ls.kind == LOGSCAN_NONE);
	scan("Failed to compile.\n\n./src/App.js\nLine 5:3:  Parsing "
	     "error\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK_STR(ls.summary, "Failed to compile.");
}

static void
typescript_watch(void)
{
	scan("[4:12:01 PM] File change detected. Starting incremental "
	     "compilation...\n\n"
	     "src/server.ts(3,7): error TS2322: Type 'string' is not "
	     "assignable to type 'number'.\n\n"
	     "[4:12:02 PM] Found 1 error. Watching for file changes.\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK(strstr(ls.summary, "error TS2322") != NULL);
	scan("src/server.ts(3,7): error TS2322: Type 'string'\n"
	     "[4:12:30 PM] Found 0 errors. Watching for file changes.\n");
	CHECK(ls.kind == LOGSCAN_NONE);
}

/* Node's own: an uncaught TypeError with its stack, a missing module. */
static void
node_thrown_with_a_stack(void)
{
	scan("listening on 3000\n"
	     "/home/sandbox/app/server.js:5\n"
	     "  res.end(foo.bar);\n              ^\n\n"
	     "TypeError: Cannot read properties of undefined (reading "
	     "'bar')\n"
	     "    at Server.<anonymous> (/home/sandbox/app/server.js:5:15)\n"
	     "    at Server.emit (node:events:517:28)\n\n"
	     "Node.js v18.19.0\n");
	CHECK(ls.kind == LOGSCAN_RUNTIME);
	CHECK_STR(ls.summary, "TypeError: Cannot read properties of "
	                      "undefined (reading 'bar')");
	CHECK(lines_have("server.js:5:15"));
	/* A message the app logged itself, no stack: not a problem. */
	scan("TypeError: expected a number, using the default\n"
	     "listening on 3000\n");
	CHECK(ls.kind == LOGSCAN_NONE);
	scan("node:internal/modules/cjs/loader:1080\n  throw err;\n  ^\n\n"
	     "Error: Cannot find module 'express'\nRequire stack:\n"
	     "- /home/sandbox/app/server.js\n");
	CHECK(ls.kind == LOGSCAN_RUNTIME);
	CHECK_STR(ls.summary, "Error: Cannot find module 'express'");
	scan("/home/sandbox/app/server.js:9\n});\n ^\n\n"
	     "SyntaxError: Unexpected token '}'\n"
	     "    at internalCompileFunction (node:internal/vm:76:18)\n");
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK_STR(ls.summary, "SyntaxError: Unexpected token '}'");
}

/* uvicorn --reload: an import that fails, a traceback, the recovery. */
static void
uvicorn_and_python(void)
{
	static const char start[] =
	    "INFO:     Will watch for changes in these directories: "
	    "['/home/sandbox/app']\n"
	    "INFO:     Uvicorn running on http://0.0.0.0:3000 (Press CTRL+C "
	    "to quit)\n"
	    "INFO:     Started reloader process [12] using WatchFiles\n";
	char all[4096];

	snprintf(all, sizeof(all),
	         "%sERROR:    Error loading ASGI app. Could not import module "
	         "\"main\".\n",
	         start);
	scan(all);
	CHECK(ls.kind == LOGSCAN_RUNTIME);
	CHECK_STR(ls.summary, "ERROR:    Error loading ASGI app. Could not "
	                      "import module \"main\".");
	snprintf(all, sizeof(all),
	         "%sProcess SpawnProcess-1:\n"
	         "Traceback (most recent call last):\n"
	         "  File \"/usr/lib/python3.11/multiprocessing/process.py\", "
	         "line 314, in _bootstrap\n"
	         "    self.run()\n"
	         "  File \"/home/sandbox/app/main.py\", line 7\n"
	         "    def items(:\n"
	         "              ^\n"
	         "SyntaxError: invalid syntax\n",
	         start);
	scan(all);
	CHECK(ls.kind == LOGSCAN_RUNTIME);
	CHECK_STR(ls.summary, "SyntaxError: invalid syntax");
	CHECK(lines_have("main.py\", line 7"));
	snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s",
	         "WARNING:  WatchFiles detected changes in 'main.py'. "
	         "Reloading...\n"
	         "INFO:     Started server process [40]\n"
	         "INFO:     Waiting for application startup.\n"
	         "INFO:     Application startup complete.\n");
	scan(all);
	CHECK(ls.kind == LOGSCAN_NONE);
}

/* The supervisor's lines: a restart that came up clears an error. */
static void
a_restart_clears(void)
{
	scan("SyntaxError: Unexpected token\n"
	     "sandboxd-init: pid 30 exited with code 1\n"
	     "sandboxd-init: started (pid 41)\n"
	     "listening\n");
	CHECK(ls.kind == LOGSCAN_NONE);
}

static void
kept_lines_are_bounded(void)
{
	char big[64 * 1024], *p = big;

	p += snprintf(p, 100, "[vite] Internal server error: x\n");
	for (int i = 0; i < 200; i++) {
		memset(p, 'a', 300);
		p += 300;
		*p++ = '\n';
	}
	*p = '\0';
	scan(big);
	CHECK(ls.kind == LOGSCAN_COMPILE);
	CHECK(ls.nlines == LOGSCAN_LINES);
	CHECK(strlen(ls.lines[1]) == LOGSCAN_LINE_MAX - 1);
	logscan_tail(big, strlen(big), 3, &ls);
	CHECK(ls.nlines == 3);
}

static void
cleaning(void)
{
	char out[32];

	CHECK(logscan_clean("\x1b[31mred\x1b[0m\r", 13, out, sizeof(out)) ==
	      3);
	CHECK_STR(out, "red");
	logscan_clean("a\tb\x01\x7f\xff", 7, out, sizeof(out));
	CHECK_STR(out, "a b");
	logscan_clean("\x1b]8;;http://x\x07link\x1b]8;;\x07", 24, out,
	              sizeof(out));
	CHECK_STR(out, "link");
	/* a cut never splits a character */
	logscan_clean("ab\xe2\x9c\x93", 5, out, 4);
	CHECK_STR(out, "ab");
}

static const struct unit_test tests[] = {
    {"Vite: an internal server error, cleared by its hmr update",
     vite_internal_error_and_its_fix},
    {"Vite: esbuild's transform failed", vite_esbuild_transform_failed},
    {"esbuild: an [ERROR] block", esbuild_error_block},
    {"Next.js: failed to compile, module not found, recovered",
     nextjs_failed_to_compile},
    {"tsc --watch: error TS, then found 0 errors", typescript_watch},
    {"Node: thrown with a stack, missing module, syntax error",
     node_thrown_with_a_stack},
    {"uvicorn: ASGI app, traceback, startup complete", uvicorn_and_python},
    {"a restart clears an error", a_restart_clears},
    {"what is kept is bounded", kept_lines_are_bounded},
    {"cleaning colour codes and control characters", cleaning},
};

int
main(void)
{
	return UNIT_RUN("logscan", tests);
}
