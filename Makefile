# instant-upload: `make run` and `make test` do everything on a fresh Debian 12 machine.

# Recipes that pipe the build through tee still fail when the build fails.
SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -c

SWIFT      ?= swift
VENV       := .venv
PYTHON     := $(VENV)/bin/python
BIN        := .build/debug
PREFIX     ?= $(HOME)/.local
VERSION    ?= 0.1.0-1
# Release builds for installing, with the Swift runtime linked in (no toolchain needed to run
# them), in a build folder of their own.
DIST       := .build/dist
DIST_BIN   := $(DIST)/release
PROGRAMS   := .build/programs
APT_STAMP  := .build/.apt-packages
VENV_STAMP := $(VENV)/.requirements
BUILD_LOG  := .build/build.log
TEST_BUILD_LOG := .build/build-tests.log
DIST_BUILD_LOG := .build/build-dist.log

# Debian packages: C libraries the Swift targets link, the tools the tests drive, and perf for
# the profiles `make bench` reports beside a missed goal (GNU time for a command's peak RSS).
APT_PACKAGES := libsqlite3-dev libcurl4-openssl-dev libssl-dev libexif-dev libdbus-1-dev libstdc++-12-dev python3-dbus python3-gi pkg-config \
	curl ca-certificates python3 python3-venv iproute2 nftables dbus libsecret-tools \
	xdg-user-dirs xvfb zenity kdialog apache2 apache2-utils rclone xdotool imagemagick tmux desktop-file-utils dpkg-dev binutils lintian \
	dosfstools fusefat bash-completion xfce4-panel x11-utils librsvg2-common linux-perf time

.PHONY: all build run test test-build test-swift test-server test-fuzz programs fuzz server bench soak sanitize dist install uninstall deb clean deps venv

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

# The build's output is kept, so `make test` can refuse warnings from Sources/.
build: $(APT_STAMP)
	@mkdir -p .build
	$(SWIFT) build 2>&1 | tee $(BUILD_LOG)

# The agent, with the bundled reference server and a demo account when none is configured.
run: build venv
	@scripts/run-local.sh $(BIN)

# The reference server in the foreground, for a person to try (user demo, password demo).
# FACE=nextcloud looks like a Nextcloud server (add e.g. SERVER_ARGS="--path-prefix /nextcloud"),
# FACE=webdav like a plain WebDAV server; see reference-server/README.md.
FACE ?= tus
server: venv
	$(PYTHON) reference-server/server.py --data $${TMPDIR:-/tmp}/instant-upload-server --port 8080 --face $(FACE) $(SERVER_ARGS)

# The release build and the package first: the install and package tests use them, and
# building them while other tests run would only slow those down. Two pairs run side by
# side, one mostly waiting while the other computes: the Python tools' installation and
# the reference server's own tests beside that build, and the fuzz targets beside the
# Swift tests (which wait on servers, processes and settle windows). What ran beside is
# shown after. The tests that need the whole machine run last, alone; the tests never
# write into the caller's own folders (checked around the run).
test: $(APT_STAMP)
	scripts/beside.sh .build/pytest.log "$(MAKE) --no-print-directory venv test-server" -- $(MAKE) --no-print-directory deb
	$(MAKE) --no-print-directory test-swift FUZZ_BESIDE=1 TEST_PROGRAMS=release

# The Swift tests; with FUZZ_BESIDE=1 the fuzz targets run beside those that do not need
# the whole machine. With TEST_PROGRAMS=release the programs the tests start are the
# release build that `make deb` packages (the program that ships, and it starts in half
# the time), else the debug build beside the tests. The tests that need the whole machine
# (suites named *WholeMachineTests: they lower inotify limits every process shares) run
# after the rest, one at a time.
TEST_ENV := env $(if $(filter release,$(TEST_PROGRAMS)),INSTANT_UPLOAD_TEST_PROGRAMS=$(CURDIR)/$(PROGRAMS))
test-swift: test-build $(if $(filter release,$(TEST_PROGRAMS)),programs)
	scripts/untouched.sh mark
	$(if $(FUZZ_BESIDE),scripts/beside.sh .build/fuzz.log "$(MAKE) --no-print-directory test-fuzz" --) $(TEST_ENV) scripts/inotify-room.sh $(SWIFT) test --skip-build --skip WholeMachineTests
	$(TEST_ENV) $(SWIFT) test --skip-build --filter WholeMachineTests --no-parallel
	scripts/untouched.sh check

# The release programs under the names they are installed as (the tests and `make bench`
# start them from here): `share-to` is the same program.
programs: dist
	@mkdir -p $(PROGRAMS)
	ln -sfn ../dist/release/instant-upload $(PROGRAMS)/instant-upload
	ln -sfn instant-upload $(PROGRAMS)/share-to

test-build: $(APT_STAMP)
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(TEST_BUILD_LOG)
	scripts/check-warnings.sh $(BUILD_LOG) $(TEST_BUILD_LOG) $(DIST_BUILD_LOG)

test-server:
	$(PYTHON) -m pytest -q reference-server

# libFuzzer targets in Fuzz/ (one folder each): a few seconds each in `make test`, about a
# minute each in `make fuzz`. A crash fails the run and leaves its input in .build/fuzz/
# (.build/fuzz-quick/ in `make test`, whose modules are compiled unoptimised).
FUZZ_SECONDS ?= 60
test-fuzz: $(APT_STAMP)
	FUZZ_QUICK=1 Fuzz/fuzz.sh 3

fuzz: $(APT_STAMP)
	Fuzz/fuzz.sh $(FUZZ_SECONDS)

# The programs measured are the ones `make install` and the package install.
bench: venv deb programs
	$(SWIFT) build -c release --product Benchmarks
	$(PYTHON) scripts/bench_machine.py --json bench/out/machine-start.json
	$(PYTHON) scripts/bench.py --bin $(PROGRAMS)
	@echo "running SHA-256 of 1 GiB in memory (MB/s):"
	.build/release/Benchmarks 1024
	$(PYTHON) scripts/bench_queue.py --bin $(PROGRAMS) --json bench/out/queue.json
	$(PYTHON) scripts/bench_backlog.py --bin $(PROGRAMS) --json bench/out/backlog.json
	$(PYTHON) scripts/bench_batch.py --bin $(PROGRAMS) --json bench/out/batch.json
	$(PYTHON) scripts/bench_batch.py --bin $(PROGRAMS) --json bench/out/batch-among.json --batch 30x300000 --server apache \
		--tools agent --rounds 1 --no-profile --among 100000
	$(PYTHON) scripts/bench_share_to.py --bin $(PROGRAMS)
	$(PYTHON) scripts/bench_watch.py --bin $(PROGRAMS)
	$(PYTHON) scripts/bench_tray.py --bin $(PROGRAMS) --json bench/out/tray.json
	$(PYTHON) scripts/bench_machine.py --json bench/out/machine-end.json
	$(PYTHON) scripts/bench_report.py

# The shipped programs at length (SOAK_MINUTES, default 10): a camera folder fed while the
# link drops, the agent is killed and the server restarts; every file checked on the server
# and RSS, descriptors and threads compared, first minute against last. Figures and a plot
# in .build/soak/. Needs root, like `make test`.
SOAK_STAMP := $(VENV)/.soak-requirements
$(SOAK_STAMP): scripts/soak-requirements.txt $(VENV_STAMP)
	$(PYTHON) -m pip install -q --disable-pip-version-check -r scripts/soak-requirements.txt
	@touch $@
soak: dist $(SOAK_STAMP)
	$(PYTHON) scripts/soak.py --bin $(DIST_BIN)

# The unit and engine tests under the address sanitizer, then the thread sanitizer, each
# built into a folder of its own; any report fails it (scripts/sanitize.sh).
sanitize: venv
	scripts/sanitize.sh address thread

# The program, static Swift runtime (stripped when installed; `share-to` is installed as a
# link to it, which it answers to). Built again when a source is newer, so `make install`
# after `make dist` does not start the compiler at all. The output is kept for the warnings
# guard, like the debug build's.
DIST_PROGRAM := $(DIST_BIN)/instant-upload
dist: $(DIST_PROGRAM)
$(DIST_PROGRAM): Package.swift packaging/hot-functions.txt packaging/link/libstdc++.so $(shell find Sources -type f) | $(APT_STAMP)
	@mkdir -p .build
	@# After a change to Package.swift's compiler flags SwiftPM relinked modules compiled with
	@# the old ones: a program older than Package.swift is built afresh (asked first, as the
	@# next step removes the program it compares with). SwiftPM does not see the linker's
	@# order file or libstdc++ script: a program older than either is linked again.
	@if [ -e $(DIST_PROGRAM) ] && [ Package.swift -nt $(DIST_PROGRAM) ]; then rm -rf $(DIST); fi
	@for input in packaging/hot-functions.txt packaging/link/libstdc++.so; do \
		if [ -e $(DIST_PROGRAM) ] && [ $$input -nt $(DIST_PROGRAM) ]; then rm -f $(DIST_PROGRAM); fi; done
	$(SWIFT) build -c release --static-swift-stdlib --scratch-path $(DIST) --product instant-upload 2>&1 | tee $(DIST_BUILD_LOG)
	@touch $(DIST_PROGRAM)

# Into PREFIX (default ~/.local, no root needed): programs, file-manager entries, the systemd
# user unit, the status icon's pictures and login entry (~/.config/autostart; NO_TRAY=1 leaves
# the login entry out), man pages, completions; a manifest lists them for `make uninstall`.
install: dist
	PREFIX="$(PREFIX)" sh packaging/install.sh install $(DIST_BIN) $(if $(filter-out 0,$(NO_TRAY)),--no-tray)

uninstall:
	PREFIX="$(PREFIX)" sh packaging/install.sh uninstall

# A Debian package that installs system-wide: .build/deb/instant-upload_VERSION_ARCH.deb,
# built again only when the programs or anything in packaging/ changed since.
DEB := .build/deb/instant-upload_$(VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
deb: dist
	@if [ -f "$(DEB)" ] && [ -z "$$(find packaging $(DIST_PROGRAM) -newer "$(DEB)" -print -quit)" ]; then \
		echo "$(DEB) is up to date"; echo "$(DEB)"; \
	else sh packaging/deb/build-deb.sh $(DIST_BIN) $(VERSION) .build/deb; fi

clean:
	rm -rf .build $(VENV)
