# mcpgen — `make` sets up, fetches the pinned schemas and generates every version;
# `make test` runs the whole test suite. Offline, point at a mirror:
#   make MCPGEN_SCHEMA_SOURCE=../shared/mcp-schema
# A relative path there is relative to the directory make runs in (with -C DIR: DIR).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MCPGEN_SCHEMA_SOURCE ?=
# Exported absolute, so that the commands recipes and tests run in other directories
# (temporary projects, venvs, sub-makes) read the same mirror. A URL (anything with ://),
# a ~ path and an absolute path are passed on as given; a path with spaces is joined to
# $(CURDIR) (make's path functions split words).
ifneq ($(MCPGEN_SCHEMA_SOURCE),)
ifeq ($(findstring ://,$(MCPGEN_SCHEMA_SOURCE))$(filter /% ~%,$(firstword $(MCPGEN_SCHEMA_SOURCE))),)
override MCPGEN_SCHEMA_SOURCE := $(if $(word 2,$(MCPGEN_SCHEMA_SOURCE)),$(CURDIR)/$(MCPGEN_SCHEMA_SOURCE),$(or $(realpath $(MCPGEN_SCHEMA_SOURCE)),$(abspath $(MCPGEN_SCHEMA_SOURCE))))
endif
endif
# Sub-makes get it from the environment: the relative form given on make's command line is
# taken out of the assignments make hands down to them (MAKEOVERRIDES, where a space in a
# value is written "\ ", kept whole here), since there it would win over the environment
# and be taken from the sub-make's directory.
MAKEOVERRIDES := $(subst \\,\ ,$(filter-out MCPGEN_SCHEMA_SOURCE=%,$(subst \ ,\\,$(MAKEOVERRIDES))))
export MCPGEN_SCHEMA_SOURCE

.PHONY: all setup fetch generate check test tests unit conformance lint typecheck format bench dist clean

all: generate

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# editable_mode=compat: a plain path in a .pth, not setuptools' import-hook finder, which
	# imports pathlib, re and fnmatch into every Python started here (12 ms, 2 MiB each)
	$(BIN)/python -m pip install -q -e '.[dev]' --config-settings editable_mode=compat \
		|| $(BIN)/python -m pip install -q -e '.[dev]'  # (a setuptools without that mode)
	touch $@

setup: $(BIN)/.installed

fetch: setup
	$(BIN)/mcpgen schema fetch --version all

generate: fetch
	$(BIN)/mcpgen generate --version all

check: fetch
	$(BIN)/mcpgen generate --version all --check

lint: setup
	$(BIN)/black --check --quiet generator runtime tests examples bench templates/package mcpgen/__init__.py mcpgen/__main__.py
	$(BIN)/python -m pyflakes generator runtime tests examples bench templates/package generated

typecheck: setup
	$(BIN)/pyright

test: generate lint typecheck tests conformance

# Every test: the fast ones and those with real processes, sockets and peers.
tests: generate
	$(BIN)/pytest -q

# The fast tests alone (sans-IO core, in-memory transports, the ASGI app in process,
# the generator): what to run while working, spread over the machine's cores (at most
# four; pytest-xdist). Left out as slow: tests/interop/ and the modules and tests marked
# `slow` (real processes, sockets and peers, long runs), which `make tests` runs one at a
# time, since they measure time, memory and descriptors.
unit: generate
	$(BIN)/pytest -q -m "not slow" -n auto --maxprocesses 4

# The official MCP conformance suite (Node 22 and the suite come from the npm registry,
# cached in .cache/conformance): the everything server over HTTP, and our client.
conformance: generate
	$(BIN)/python tests/interop/conformance_suite.py

format: setup
	$(BIN)/black generator runtime tests examples bench templates/package mcpgen/__init__.py mcpgen/__main__.py

bench: generate
	$(BIN)/python -m bench

# An sdist and a wheel in $(DIST) (default dist/), made from the tracked files as they
# are in the working tree plus bindings of every pinned version generated afresh from the
# pinned, sha256-verified schemas: nothing else of this checkout (no stale generated/,
# no fetched schemas) goes in. Every file is dated at the last commit (SOURCE_DATE_EPOCH),
# so two builds of one commit give byte-identical wheels. Next to them, the wheels of
# every dependency (all extras) and of what a scaffolded project needs to build and test
# (setuptools, pytest), for this platform: offline, `pip install --no-index --find-links
# dist 'mcpgen[http]'`.
DIST ?= dist
DIST_SRC := build/dist-src
dist: fetch
	rm -rf $(DIST_SRC) $(DIST)/mcpgen-* && mkdir -p $(DIST_SRC) $(DIST)
	git ls-files -z | tar --null --no-recursion -T - -cf - | tar -xf - -C $(DIST_SRC)
	$(BIN)/mcpgen generate --version all --out $(DIST_SRC) >/dev/null
	epoch=$$(git log -1 --format=%ct) && \
	find $(DIST_SRC) -exec touch -h -d @$$epoch {} + && \
	cd $(DIST_SRC) && SOURCE_DATE_EPOCH=$$epoch $(abspath $(BIN))/pyproject-build \
		--outdir $(abspath $(DIST)) . >$(abspath $(DIST_SRC)).log 2>&1 \
		|| { tail -30 $(abspath $(DIST_SRC)).log; exit 1; }
	$(BIN)/python -m pip download -q --disable-pip-version-check --dest $(DIST) \
		"$$(ls $(DIST)/mcpgen-*.whl)[http,generator,redis,auth,websocket,proxy]" "setuptools>=77" "pytest>=8"
	@ls -1 $(DIST)/mcpgen-*

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
	find generated -mindepth 1 -not -name README.md -not -name .gitignore -delete
