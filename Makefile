# Set-up and checks. `make run` and `make test` install what is missing first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TYPECHECK_TREE := .typecheck/coding_harness

.PHONY: install bytecode run test test-servers check lint typecheck bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# Compiled once here, since the environment may forbid writing bytecode
# (PYTHONDONTWRITEBYTECODE, set on many machines and in the tests' daemons): without
# it every daemon, client and parse worker compiles its modules from source at start
# (~0.13 s of the daemon's ~0.45 s). Only files newer than their bytecode are compiled.
bytecode: install
	$(BIN)/python -m compileall -q -j 0 protocol daemon client tests

# The REPL in PROJECT (default: this checkout, where every approved edit runs this
# project's own `make check`, lint and types and the whole suite). Your own project:
# `make run PROJECT=~/code/app`, or put $(BIN) on PATH and run `harness` there (README).
PROJECT ?= $(CURDIR)

run: install bytecode
	@bin=$$(cd "$(BIN)" && pwd) && dir=$$(cd "$(PROJECT)" && pwd -P) || exit 1; \
	echo "harness: working in $$dir"; \
	if [ "$$dir" = "$(CURDIR)" ]; then \
	  echo "  this is the harness's own checkout: an approved edit runs its make check (minutes)."; \
	  echo "  for your project: make run PROJECT=path/to/it, or cd there and run $$bin/harness"; \
	fi; \
	cd "$$dir" && exec "$$bin/harness"

# Three pytest-xdist workers on two cores: the tests wait on daemons, clients and
# servers about as much as they compute, so a third worker fills the waits; each
# worker takes the next test when it is free (worksteal), so the slow ones do not
# queue behind each other (docs/testing.md). TEST_WORKERS=0: one process.
TEST_WORKERS ?= 3

test: install bytecode
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# Real model servers with a real tiny model (docs/testing.md). The first run builds
# llama-cpp-python into ${XDG_CACHE_HOME:-~/.cache}/coding-harness/test-servers/
# (about 15 minutes on 2 cores; LLAMA_SERVER=1 adds llama.cpp's llama-server); later runs reuse it.
test-servers: install
	$(BIN)/python -m tests.servers.setup_servers
	$(BIN)/python -m pytest tests/servers

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy cannot follow setuptools' editable import hook, so it reads the package
# through a tree of symlinks that mirrors the installed layout.
typecheck: install
	mkdir -p $(TYPECHECK_TREE)
	ln -sfn ../../protocol $(TYPECHECK_TREE)/protocol
	ln -sfn ../../daemon $(TYPECHECK_TREE)/daemon
	ln -sfn ../../client $(TYPECHECK_TREE)/client
	cd .typecheck && ../$(BIN)/mypy --config-file ../pyproject.toml -p coding_harness

check: lint typecheck test

bench: install
	$(BIN)/python bench/oneshot_startup.py

clean:
	rm -rf $(VENV) .typecheck .pytest_cache .mypy_cache .ruff_cache *.egg-info build dist
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
