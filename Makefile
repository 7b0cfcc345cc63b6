# Two commands matter: `make run` serves the app, `make test` runs every check.
# Both create or refresh .venv and the browser's Socket.IO client as needed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
VENDOR := static/vendor/socket.io.esm.min.js

.PHONY: run test lint typecheck pytest simulate bench clean

run: $(STAMP) $(VENDOR)
	$(BIN)/python -m app

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) $(VENDOR)
	$(BIN)/python -m pytest

simulate: $(STAMP)
	$(BIN)/python -m engine.simulate --players 4 --games 1000 --seed 1

# The fan-out benchmark (bench/load.py): tables of four against the app and a bare relay.
# More steps: make bench BENCH_ARGS='--steps 100,200,400,1000 --seconds 20'
bench: $(STAMP)
	$(BIN)/python -m bench.load $(BENCH_ARGS)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# The official Socket.IO browser client, pinned by package-lock.json and
# served by the app from a git-ignored folder (no CDN: LAN play works offline).
$(VENDOR): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	mkdir -p static/vendor
	cp node_modules/socket.io-client/dist/socket.io.esm.min.js $@
	cp node_modules/socket.io-client/dist/socket.io.esm.min.js.map static/vendor/ 2>/dev/null || true

clean:
	rm -rf $(VENV) node_modules static/vendor .pytest_cache .mypy_cache .ruff_cache
