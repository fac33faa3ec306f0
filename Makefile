# instant-upload: `make run` and `make test` do everything on a fresh Debian 12 machine.

SWIFT      ?= swift
VENV       := .venv
PYTHON     := $(VENV)/bin/python
BIN        := .build/debug
PREFIX     ?= $(HOME)/.local
APT_STAMP  := .build/.apt-packages
VENV_STAMP := $(VENV)/.requirements

# Debian packages: C libraries the Swift targets link, and the tools the tests drive.
APT_PACKAGES := libsqlite3-dev libcurl4-openssl-dev libssl-dev libexif-dev libdbus-1-dev python3-dbus python3-gi pkg-config \
	curl ca-certificates python3 python3-venv iproute2 nftables dbus libsecret-tools \
	xdg-user-dirs xvfb zenity apache2 apache2-utils rclone

.PHONY: all build run test test-swift test-server test-fuzz fuzz server bench install uninstall clean deps venv

all: build

# apt: only when a package is missing, `apt-get update` first.
deps: $(APT_STAMP)
$(APT_STAMP): Makefile
	@missing=""; for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@mkdir -p $(dir $@) && touch $@

# Python tools (the reference server, tuspy, pytest) in a pinned virtualenv.
venv: $(VENV_STAMP)
$(VENV_STAMP): reference-server/requirements.txt | $(APT_STAMP)
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check -r reference-server/requirements.txt
	@touch $@

build: $(APT_STAMP)
	$(SWIFT) build

# The agent, with the bundled reference server and a demo account when none is configured.
run: build venv
	@scripts/run-local.sh $(BIN)

# The reference server in the foreground, for a person to try (user demo, password demo).
# FACE=nextcloud looks like a Nextcloud server (add e.g. SERVER_ARGS="--path-prefix /nextcloud"),
# FACE=webdav like a plain WebDAV server; see reference-server/README.md.
FACE ?= tus
server: venv
	$(PYTHON) reference-server/server.py --data $${TMPDIR:-/tmp}/instant-upload-server --port 8080 --face $(FACE) $(SERVER_ARGS)

test: build venv
	$(MAKE) --no-print-directory test-server test-swift test-fuzz

test-swift:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

test-server:
	$(PYTHON) -m pytest -q reference-server

# libFuzzer targets in Fuzz/ (one folder each): a few seconds each in `make test`, about a
# minute each in `make fuzz`. A crash fails the run and leaves its input in .build/fuzz/.
FUZZ_SECONDS ?= 60
test-fuzz: $(APT_STAMP)
	Fuzz/fuzz.sh 3

fuzz: $(APT_STAMP)
	Fuzz/fuzz.sh $(FUZZ_SECONDS)

bench: venv
	$(SWIFT) build -c release
	$(PYTHON) scripts/bench.py --bin .build/release
	@echo "running SHA-256 of 1 GiB in memory (MB/s):"
	.build/release/Benchmarks 1024
	$(PYTHON) scripts/bench_queue.py --bin .build/release
	$(PYTHON) scripts/bench_watch.py --bin .build/release

install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN)/instant-upload $(BIN)/share-to $(PREFIX)/bin/

uninstall:
	rm -f $(PREFIX)/bin/instant-upload $(PREFIX)/bin/share-to

clean:
	rm -rf .build $(VENV)
