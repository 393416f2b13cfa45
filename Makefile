# A newcomer types `make run` or `make test`; both install first when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PROTOS := $(wildcard protos/cultists/v1/*.proto)
export PYTHONDONTWRITEBYTECODE := 1
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: install proto compile node run test golden bench bench-quick lint format clean

install: $(STAMP) compile node

$(STAMP): pyproject.toml $(PROTOS) deploy/system-packages.sh
	bash deploy/system-packages.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -U pip
	$(BIN)/pip install -q --disable-pip-version-check "grpcio-tools>=1.70,<2" "mypy-protobuf>=3.6"
	$(MAKE) --no-print-directory proto
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev,rl]'
	touch $@

# The engines' hot modules, compiled in place by Cython from the same .py files (never
# fails: without a compiler it says so in one line and the interpreted source runs). A
# .pxd (Cython declarations: the layout of compiled state classes) is a source too.
ENGINE_SOURCES := $(wildcard services/engines/core/*.py services/engines/*/rules.py services/engines/*/cards.py services/engines/*/bots.py services/engines/*/features.py services/engines/observation.py services/engines/*/*.pxd)
COMPILED := $(VENV)/.compiled

compile: $(COMPILED)

$(COMPILED): $(STAMP) $(ENGINE_SOURCES) deploy/compile_engines.py
	$(BIN)/python deploy/compile_engines.py
	touch $@

# The npm tools the tests use (openapi-typescript, tsc: tests/gateway/test_generated_clients.py),
# into a local node_modules/ from package-lock.json. Without npm one line says so and the
# TypeScript check is skipped, saying why.
NODE_STAMP := node_modules/.installed

node: $(NODE_STAMP)

$(NODE_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "note: no npm; the TypeScript client check will be skipped (install nodejs and npm)"; fi

# Generated code lands in gen/ (git-ignored) and is never edited by hand.
proto:
	rm -rf gen && mkdir -p gen
	$(BIN)/python -m grpc_tools.protoc -Iprotos \
		--python_out=gen --grpc_python_out=gen --mypy_out=gen --mypy_grpc_out=gen $(PROTOS)
	touch gen/cultists/__init__.py gen/cultists/v1/__init__.py

run: install
	$(BIN)/cultists run

# One worker per core, whole files to a worker (a file's servers start once); a Redis from
# REDIS_URL gives each worker its own database (tests/conftest.py). The 40 slowest steps are
# listed at the end: the suite has a 15-minute budget on 2 cores, and this says where it goes.
test: install
	$(BIN)/pytest -q -p no:cacheprovider -n auto --dist loadfile --durations=40

# Rewrites tests/golden/*.json from the current rules, after a change to the random stream
# or to a rule's outcome that is meant; the records' diff shows the change in review.
golden: install
	$(BIN)/python -m tests.golden.record

# Every section (`python -m bench.run --help` lists each one's last duration); both
# targets rewrite bench/results.json and the docs' figure tables, and say so first.
bench: install
	$(BIN)/python -m bench.run

# The sections that take about a minute each: a few minutes in all.
bench-quick: install
	$(BIN)/python -m bench.run --quick

# ruff (lint and format) on the whole tree, then mypy on services/ and workers/ (settings in
# pyproject.toml's [tool.mypy]): zero errors, no baseline file. .ci/run runs it before the suite.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	test ! -x $(BIN)/python || $(BIN)/python deploy/compile_engines.py --clean
	find services -name '*.so' -delete -o -name '*.c' -path 'services/engines/*' -delete
	rm -rf $(VENV) gen .pytest_cache .ruff_cache build node_modules
