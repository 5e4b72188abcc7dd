# mcpgen — `make` sets up, fetches the pinned schemas and generates every version;
# `make test` runs the whole test suite. Offline, point at a mirror:
#   make MCPGEN_SCHEMA_SOURCE=../shared/mcp-schema
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MCPGEN_SCHEMA_SOURCE ?=
export MCPGEN_SCHEMA_SOURCE

.PHONY: all setup fetch generate check test tests unit conformance lint typecheck format bench clean

all: generate

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
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

typecheck: setup
	$(BIN)/pyright

test: generate lint typecheck tests conformance

# Every test: the fast ones and those with real processes, sockets and peers.
tests: generate
	$(BIN)/pytest -q

# The fast tests alone (sans-IO core, in-memory transports, the ASGI app in process,
# the generator): what to run while working.
unit: generate
	$(BIN)/pytest -q -m "not slow"

# The official MCP conformance suite (Node 22 and the suite come from the npm registry,
# cached in .cache/conformance): the everything server over HTTP, and our client.
conformance: generate
	$(BIN)/python tests/conformance_suite.py

format: setup
	$(BIN)/black generator runtime tests examples bench templates/package mcpgen/__init__.py mcpgen/__main__.py

bench: generate
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find generated -mindepth 1 -not -name README.md -not -name .gitignore -delete
