# appdata: audit and migrate iOS app data containers.
# `make demo` and `make test` do all the set-up a fresh machine needs.

SWIFT      ?= swift
BUILD_DIR  ?= .build
BIN        := $(BUILD_DIR)/debug/appdata
RELEASE    := $(BUILD_DIR)/release/appdata
DEMO_DIR   ?= $(BUILD_DIR)/demo-container
BENCH_DIR  ?= $(BUILD_DIR)/bench-data
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build release test test-deps demo docs check-docs bench deps clean

all: build

# Installs a Debian package when the file that proves it is missing.
# $(1): file to test, $(2): package.
define apt_require
	@if [ ! -e $(1) ]; then \
	  echo "Installing $(2) (for $(1))"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $(SUDO) apt-get install -y -qq $(2) >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(2); }; \
	fi
endef

deps:
	$(call apt_require,/usr/include/attr/libattr.h,libattr1-dev)
	$(call apt_require,/usr/include/archive.h,libarchive-dev)
	$(call apt_require,/usr/bin/zstd,zstd)
	$(call apt_require,/usr/include/sqlite3.h,libsqlite3-dev)

# What the tests use besides the build: zip (Scripts/make-test-inputs.py zips a package) and jq.
test-deps: deps
	$(call apt_require,/usr/bin/zip,zip)
	$(call apt_require,/usr/bin/jq,jq)

build: deps
	$(SWIFT) build

# A static Swift runtime: the binary runs on machines without a Swift toolchain, and starts in
# half the time (3 ms instead of 6.5), which matters for an audit that takes 150 ms.
release: deps
	$(SWIFT) build -c release --static-swift-stdlib

test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: build
	@./Scripts/make-demo-container.sh "$(BIN)" "$(DEMO_DIR)"
	@echo
	@echo "$$ appdata audit --max-file-size 1M --max-backup-size 4M $(DEMO_DIR)"
	@$(BIN) audit --max-file-size 1M --max-backup-size 4M "$(DEMO_DIR)"; \
	  status=$$?; echo; echo "(exit status $$status: 1 means findings at or above --fail-on error)"; \
	  [ $$status -le 1 ]

# Regenerates the man page and the rules reference from the option and rule tables.
docs: build
	$(BIN) _docs man > Docs/appdata.1
	$(BIN) _docs rules > Docs/rules.md

bench: deps
	@BENCH_DIR="$(BENCH_DIR)" ./Scripts/bench.sh $(BENCH_ARGS)

clean:
	rm -rf $(BUILD_DIR)
