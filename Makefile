# Two commands matter: `make run` serves the app, `make test` runs every check.
# Both create or refresh .venv and node_modules (the browser's Socket.IO client, and
# ESLint and Stylelint for the page) as needed. `make check` is the fast lane: lint, types,
# and the tests that need no server, Redis, nginx or browser (marked `unit`: tests/conftest.py).

PYTHON ?= python3
# Compiled bytecode is kept (__pycache__, git-ignored) whatever the shell says: without it
# every test worker and every server a test starts compiles each module again, and pytest
# rewrites every test module's asserts again (seconds of CPU each, on every run).
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
VENDOR := static/vendor/socket.io.esm.min.js
NODE_STAMP := node_modules/.installed
NPX := node_modules/.bin
# Defined before the rules that name it: a prerequisite is read where its rule is.
BUNDLE := build/assets/manifest.json

# The message catalogs (app/locale/<lang>/LC_MESSAGES/messages.po, edited by people):
# extracted from the templates and static/js/messages.js (babel.cfg) and compiled to .mo
# (git-ignored) on every set-up. `make messages` brings the .po files up to date after a
# string changes.
PYBABEL := $(BIN)/pybabel
LOCALES := en ms
POT := app/locale/messages.pot
CATALOGS := $(foreach lang,$(LOCALES),app/locale/$(lang)/LC_MESSAGES/messages.mo)

.PHONY: lock run test check lint typecheck pytest jslint jstest unit golden simulate bench cluster clean catalogs messages bundle

run: $(STAMP) $(VENDOR) catalogs $(BUNDLE)
	$(BIN)/python -m app

# The static checks side by side (mypy takes the longest), then every test.
test:
	$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck jslint jstest
	$(MAKE) --no-print-directory pytest

# The inner loop: lint, types and unit tests (Python and JS): no server, no browser. Two at
# a time: the unit tests keep one core busy while the linters and mypy take the other.
check:
	$(MAKE) --no-print-directory -j2 --output-sync=target lint typecheck jslint jstest unit

# pytest-xdist workers for `make test`'s two lanes. The browser lane keeps both cores busy
# (Chromium burns most of it): more than three Chromiums at once on a 2-core machine starve
# their own pages. The tests after it (servers, Redis, nginx, timers) mostly wait, so their
# lane runs five workers (six finish about 13 s sooner but leave real-time tests less CPU). 0
# runs a lane in one process.
BROWSER_WORKERS ?= 3
PYTEST_WORKERS ?= 5
PYTEST_ARGS ?=

lint: $(STAMP)
	$(UV) lock --check --quiet
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Every test, in two lanes one after the other: the browser tests, then all the others (a
# lane's 15 slowest named at its end). Both lanes run even if the first fails; the exit
# code is the first failing lane's. PYTEST_ARGS go to both (`PYTEST_ARGS=tests/app/test_wire.py`
# or `-k lobby`; a `-m` of your own replaces the lanes' split): a lane they leave empty
# (pytest's exit code 5) is no failure, unless both are. Within a lane, tests are
# handed to workers one at a time in the order tests/conftest.py sorts them (the slowest
# kinds first, and within a kind the tests that declare the longest time limit).
#
# The browser tests that wait out a network drop (marked `network_drop`: 40 s of a page
# offline in each engine, all three at once) sit idle: they run in a process of their own
# beside the browser lane, and their report follows it.
LANE := $(BIN)/python -m pytest --dist load --maxschedchunk 1 --durations=15
DROP_LOG := .pytest-network-drop.log
pytest: $(STAMP) $(VENDOR) catalogs $(BUNDLE)
	@status=5; \
	note() { if [ $$1 -ne 5 ] && [ $$status -eq 0 -o $$status -eq 5 ]; then status=$$1; fi; }; \
	lane() { echo "== $$1"; shift; $(LANE) "$$@" $(PYTEST_ARGS); note $$?; }; \
	$(BIN)/python -m pytest -m network_drop $(PYTEST_ARGS) > $(DROP_LOG) 2>&1 & drop=$$!; \
	lane "the browser tests" -n $(BROWSER_WORKERS) -m "browser and not network_drop"; \
	wait $$drop; code=$$?; echo "== the network drop (beside the browser tests)"; \
	cat $(DROP_LOG); rm -f $(DROP_LOG); note $$code; \
	lane "every other test" -n $(PYTEST_WORKERS) -m "not browser"; \
	exit $$status

# The tests marked `unit` (tests/conftest.py): the engine, tables, snapshots and views, docs,
# the lock (every folder but tests/browser: collecting the browser tests too costs seconds).
unit: $(STAMP) catalogs
	$(BIN)/python -m pytest -m unit -q tests/engine tests/app tests/deploy tests/bench tests/test_*.py $(PYTEST_ARGS)

# The page's scripts and styles (eslint.config.js, stylelint.config.js).
jslint: $(NODE_STAMP)
	$(NPX)/eslint .
	$(NPX)/stylelint "static/css/**/*.css"

# Unit tests of the page's pure parts (tests/js): node's own test runner, no browser.
jstest: $(NODE_STAMP)
	node --test tests/js/

# Redis, two app processes and nginx in front (Debian's redis-server and nginx): one address.
cluster: $(STAMP) $(VENDOR) catalogs $(BUNDLE)
	$(BIN)/python -m deploy.cluster --processes 2

catalogs: $(CATALOGS)

$(POT): babel.cfg $(wildcard templates/*.html) static/js/messages.js app/web/i18n.py $(STAMP)
	$(PYBABEL) --quiet extract -F babel.cfg -o $@ --no-wrap --no-location \
		-c "Translators:" .

app/locale/%/LC_MESSAGES/messages.mo: app/locale/%/LC_MESSAGES/messages.po $(POT)
	$(PYBABEL) compile --statistics -l $* -i $< -o $@

# After adding or changing a sentence (templates, static/js/messages.js): new ids appear
# untranslated in every .po (English fills itself in); then translate them in ms's .po.
messages: $(POT)
	$(BIN)/python -m tools.catalogs update $(POT)

# The golden copies of snapshots and views (tests/fixtures/, tests/app/golden.py), written
# again after a deliberate change to either or a new case of house rules (tests/app/played.py
# RULE_SETS): review `git diff tests/fixtures` before committing (docs/development.md).
golden: $(STAMP)
	PYTHONPATH=.:tests/app $(BIN)/python -m golden

simulate: $(STAMP)
	$(BIN)/python -m engine.simulate --players 4 --games 1000 --seed 1

# The fan-out benchmark (bench/load.py): tables of four against the app and a bare relay.
# More steps: make bench BENCH_ARGS='--steps 100,200,400,1000 --seconds 20'
bench: $(STAMP)
	$(BIN)/python -m bench.load $(BENCH_ARGS)

# Every Python package, runtime and dev, at the versions and hashes uv.lock pins. uv itself
# is pinned here and installed into the venv by pip; `uv sync --inexact` leaves it there.
UV_VERSION := 0.13.9
UV := $(BIN)/uv

$(STAMP): pyproject.toml uv.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --quiet --frozen --inexact --extra dev
	touch $@

# After changing pyproject.toml, or to take upstream releases: refresh the lock, run
# `make test`, commit uv.lock.
lock: $(STAMP)
	$(UV) lock --upgrade

# Everything package-lock.json pins: the browser's Socket.IO client, and the dev tools.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The official Socket.IO browser client, served by the app from a git-ignored folder
# (no CDN: LAN play works offline).
$(VENDOR): $(NODE_STAMP)
	mkdir -p static/vendor
	cp node_modules/socket.io-client/dist/socket.io.esm.min.js $@
	cp node_modules/socket.io-client/dist/socket.io.esm.min.js.map static/vendor/ 2>/dev/null || true

# The page's scripts and styles bundled by esbuild (bundle.js) into build/assets/ (git-
# ignored), each file named by its content's hash; the app serves them for a year.
bundle: $(BUNDLE)

$(BUNDLE): $(NODE_STAMP) $(VENDOR) bundle.js $(wildcard static/js/*.js) $(wildcard static/css/*.css)
	node bundle.js

clean:
	rm -rf $(VENV) node_modules static/vendor build $(POT) $(CATALOGS) .pytest_cache .mypy_cache .ruff_cache .cluster $(DROP_LOG)
