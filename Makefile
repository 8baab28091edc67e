# sandboxd build.  `make` builds the daemon and the in-sandbox supervisor;
# `make check` runs every test CI runs; see README.md for the rest.

VERSION    := 0.1.0
SHELL      := /bin/bash
BUILD      ?= build
CC         ?= cc
PKGS       := libmicrohttpd jansson libcurl sqlite3 libsodium yaml-0.1 libgit2 \
              libnftables libssh2 libarchive zlib libbrotlienc gnutls
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
# http_parser and libresolv ship no pkg-config file.
LDLIBS     := $(shell pkg-config --libs $(PKGS)) -lhttp_parser -lresolv -lpthread

# Every component directory but the supervisor's, which is its own binary.
DAEMON_SRC := $(filter-out src/supervisor/%,$(wildcard src/*/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(BUILD)/%.o)
# The command line and its client are not linked into the unit tests
# (test_cli includes the client's sources itself).
LIB_OBJ    := $(filter-out $(BUILD)/src/cli/% $(BUILD)/src/client/%,$(DAEMON_OBJ))
SUP_SRC    := $(wildcard src/supervisor/*.c)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all check unit integration lint fmt asan fuzz fuzz-build fuzz-smoke image \
        bench clean console

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

# The fuzz targets (below), named here: a rule's prerequisites are
# expanded when make reads it.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

# Everything CI runs (lint, unit, the fuzz targets' smoke run, integration);
# the last line is "N passed, N failed".  The console's browser test needs
# the console built.
check: all console $(UNIT_BIN) $(FUZZ_BIN)
	@SANDBOXD_BIN=$(abspath $(BUILD)/sandboxd) FUZZ_BIN="$(FUZZ_BIN)" \
		tests/run-all $(UNIT_BIN)

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
		$(MAKE) BUILD=build-asan CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer' \
		FUZZ_BIN= check

# The fuzz targets (tests/fuzz/fuzz_*.c), built with clang's libFuzzer,
# ASan and UBSan into $(FUZZ_BUILD).  Every source of the daemon but the
# program's main goes into one archive, compiled for the fuzzer; each
# target links against it and the daemon's libraries, and the linker
# takes only the objects the target needs: no list of sources to keep.
# `make fuzz` runs each target for FUZZ_SECONDS (long runs, by hand);
# `make fuzz-smoke` builds every target and runs each for a few seconds
# on its corpus (tests/fuzz/corpus/<target>/), as `make check` does.
FUZZ_SECONDS ?= 20
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c17 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Isrc \
                -DSANDBOXD_VERSION='"$(VERSION)"' $(shell pkg-config --cflags $(PKGS))
FUZZ_OBJ     := $(filter-out $(FUZZ_BUILD)/src/cli/main.o,$(DAEMON_SRC:%.c=$(FUZZ_BUILD)/%.o))

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/libsandboxd.a: $(FUZZ_OBJ)
	@echo "  AR      $@"
	@rm -f $@ && ar rcs $@ $^

# A target's own file may include the supervisor's sources (its .d says so).
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libsandboxd.a
	@mkdir -p $(FUZZ_BUILD)/deps
	@echo "  FUZZLD  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -MMD -MP \
		-MF $(FUZZ_BUILD)/deps/$(@F).d -o $@ $< $(FUZZ_BUILD)/libsandboxd.a $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@tests/fuzz/run --seconds $(FUZZ_SECONDS) $(FUZZ_BIN)

fuzz-smoke: $(FUZZ_BIN)
	@tests/fuzz/run $(FUZZ_BIN)

image: $(BUILD)/sandboxd-init
	BUILD=$(BUILD) scripts/build-image

bench: all
	bench/run

clean:
	rm -rf build build-asan build-fuzz

# The recipe table is assembled into data.o (.incbin), which the
# compiler's dependency list does not name.
$(BUILD)/src/recipe/data.o $(FUZZ_BUILD)/src/recipe/data.o: src/recipe/recipes.json

-include $(DAEMON_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) \
         $(FUZZ_BIN:$(FUZZ_BUILD)/%=$(FUZZ_BUILD)/deps/%.d)
