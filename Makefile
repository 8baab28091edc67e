# sandboxd build.  `make` builds the daemon and the in-sandbox supervisor;
# `make check` runs every test CI runs; see README.md for the rest.

VERSION    := 0.1.0
SHELL      := /bin/bash
BUILD      ?= build
CC         ?= cc
PKGS       := libmicrohttpd jansson libcurl sqlite3 libsodium yaml-0.1 libgit2 \
              libnftables libssh2
# snprintf truncation is how we bound strings, so gcc's guesses about it
# are not warnings here.
WARN       := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
              -Wformat=2 -Wno-format-truncation -Wpointer-arith -Wvla \
              -Wnull-dereference -Wduplicated-cond -Wduplicated-branches \
              -Wmissing-declarations -Wundef -Wold-style-definition \
              -Wredundant-decls -Wcast-align -Winit-self \
              -Wfloat-equal -Werror
# Not taken: -Wcast-qual (21 casts, mostly libraries' const-less APIs),
# -Wwrite-strings (string literals given to const-less library calls),
# -Wlogical-op (EAGAIN || EWOULDBLOCK), -Wswitch-enum (the supervisor's
# switches with a default on purpose).
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Isrc \
              -DSANDBOXD_VERSION='"$(VERSION)"' $(shell pkg-config --cflags $(PKGS))
# http_parser ships no pkg-config file.
LDLIBS     := $(shell pkg-config --libs $(PKGS)) -lhttp_parser -lpthread

# Every component directory but the supervisor's, which is its own binary.
DAEMON_SRC := $(filter-out src/supervisor/%,$(wildcard src/*/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/%.o)
# The command line and its client are not linked into the unit tests
# (test_cli includes the client's sources itself).
LIB_OBJ    := $(filter-out $(BUILD)/src/cli/% $(BUILD)/src/client/%,$(DAEMON_OBJ))
SUP_SRC    := $(wildcard src/supervisor/*.c)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all check unit integration lint fmt asan fuzz image bench clean console

all: $(BUILD)/sandboxd $(BUILD)/sandboxd-init

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/sandboxd: $(DAEMON_OBJ)
	@echo "  LINK    $@"
	@$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# The supervisor is PID 1 inside every sandbox: libc only, static, so it
# runs on any base image.
# Sanitizers cannot link statically, so it keeps its own flags.
SUP_CFLAGS ?= -O2 -g
SUP_HDR    := $(wildcard src/supervisor/*.h)
$(BUILD)/sandboxd-init: $(SUP_SRC) $(SUP_HDR)
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@$(CC) -std=c17 -D_GNU_SOURCE $(WARN) $(SUP_CFLAGS) \
		-DSANDBOXD_VERSION='"$(VERSION)"' -static -o $@ $(SUP_SRC)

# The supervisor's unit tests include its sources directly.
$(BUILD)/tests/test_supervisor%: $(SUP_SRC) $(SUP_HDR)

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB_OBJ) $(LDLIBS)

unit: $(UNIT_BIN)
	@tests/run-unit $(UNIT_BIN)

integration: all
	@SANDBOXD_BIN=$(abspath $(BUILD)/sandboxd) tests/run-integration

# Everything CI runs (lint, unit, integration); the last line is
# "N passed, N failed".  The console's browser test needs the console built.
check: all console $(UNIT_BIN)
	@SANDBOXD_BIN=$(abspath $(BUILD)/sandboxd) tests/run-all $(UNIT_BIN)

lint:
	@scripts/lint

# The web console (console/, Preact + Vite) into $(BUILD)/console, which
# the daemon serves (SANDBOXD_CONSOLE_DIR).  Needs node and npm; the daemon
# itself does not.  `npm ci` runs again only when the lockfile changed.
# The lockfile names no registry: it keeps integrity hashes only (npm's
# omit-lockfile-registry-resolved), and npm ci fetches from whatever
# registry npm is set up with.
CONSOLE_SRC := $(shell find console/src console/public -type f 2>/dev/null) \
               console/index.html console/vite.config.js
console: $(BUILD)/console/index.html

console/node_modules/.ci-stamp: console/package-lock.json console/package.json
	@if grep -q '"resolved"' console/package-lock.json; then \
		echo "console/package-lock.json names a registry: run" \
		     "'npm install --omit-lockfile-registry-resolved' in console/"; \
		exit 1; fi
	cd console && npm ci --no-audit --no-fund
	@touch $@

$(BUILD)/console/index.html: console/node_modules/.ci-stamp $(CONSOLE_SRC)
	@echo "  VITE    $(BUILD)/console"
	@cd console && CONSOLE_OUT=$(abspath $(BUILD))/console npm run --silent build >/dev/null

fmt:
	clang-format -i $$(git ls-files '*.c' '*.h')

asan:
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
		$(MAKE) BUILD=build-asan CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer' check

# Fuzz every parser with libFuzzer for FUZZ_SECONDS each.
FUZZ_SECONDS ?= 20
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_LIB     := src/lib/jv.c src/lib/buf.c src/lib/ulid.c src/lib/utf8.c \
                src/lib/clock.c src/lib/err.c $(wildcard src/agent/*.c) \
                src/ws/wsfs.c src/task/derive.c src/task/result.c \
                src/store/states.c src/sandbox/supanswer.c src/sandbox/manifest.c \
                src/proxy/providers.c src/proxy/meter.c src/edge/head.c \
                src/edge/pool.c \
                src/edge/host.c src/cred/oauthparse.c src/api/session.c \
                src/config/hosts.c src/vault/vault.c \
                src/ops/backup_manifest.c
fuzz:
	@mkdir -p build-fuzz
	@set -o pipefail; for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); \
		clang -std=c17 -D_GNU_SOURCE -g -O1 -Isrc \
			-fsanitize=fuzzer,address,undefined $$f $(FUZZ_LIB) \
			$(shell pkg-config --libs jansson yaml-0.1 libsodium) \
			-lhttp_parser -lpthread \
			-o build-fuzz/$$n || exit 1; \
		echo "fuzzing $$n for $(FUZZ_SECONDS)s"; \
		build-fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
			-print_final_stats=0 2>&1 | tail -n 2 || exit 1; \
	done

image: $(BUILD)/sandboxd-init
	BUILD=$(BUILD) scripts/build-image

bench: all
	bench/run

clean:
	rm -rf build build-asan build-fuzz

-include $(DAEMON_OBJ:.o=.d)
