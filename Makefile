# Cyclone: everything sets itself up (Debian 12; as root, missing packages are installed).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test

VENV   := .venv
PY     := $(VENV)/bin/python
CYC    := $(VENV)/bin/cyclone

.PHONY: bootstrap db db-stop deploy test test-fast roundtrip engine-guard rework pgtap lint check-python typescript-client pytest demo demo-shards \
	bench bench-quick \
	bench-console bench-history bench-maps bench-coordination bench-xmin \
	screenshots clean

bootstrap:
	@scripts/bootstrap.sh

db: bootstrap
	@$(CYC) dev-db start

deploy: db
	@$(CYC) migrate

roundtrip: db
	@scripts/sqitch-roundtrip.sh

pgtap: db
	@scripts/pgtap.sh

lint: db
	@scripts/lint-plpgsql.sh

check-python: bootstrap
	@$(VENV)/bin/ruff check --quiet cyclone_py tests bench examples
	@$(VENV)/bin/mypy

# The TypeScript worker (clients/typescript): npm ci when its lock changed, tsc, its unit tests.
typescript-client: bootstrap
	@scripts/typescript-client.sh

# Two processes (pytest-xdist, a file per process at a time): the tests mostly wait on the database and on
# workers. Those that restart the embedded cluster the others use (marker alone) run after, by themselves.
PYTEST_PARALLEL := -n 2 --dist loadfile

pytest: db
	@$(VENV)/bin/pytest -q $(PYTEST_PARALLEL) -m "not alone"
	@$(VENV)/bin/pytest -q -m alone

# The engine guard (SPEC 1): the deploy scripts copy their engine files, sqitch deploy and sql/engine/ build
# the same schema, and reverts since the last release are exact; the router's project likewise.
engine-guard: db
	@scripts/engine-guard.sh
	@scripts/engine-guard.sh router

# Ship an edited engine file as its sqitch change (docs/architecture.md, "Changing the engine"):
#   make rework CHANGE=claim NOTE="why it changes" [REQUIRES="limits wakeups"] [ROUTER=1 for the router]
rework: bootstrap
	@[[ -n "$${CHANGE:-}" && -n "$${NOTE:-}" ]] || { echo 'usage: make rework CHANGE=<change> NOTE="<why>" [ROUTER=1]' >&2; exit 2; }
	@$(PY) scripts/rework.py "$(CHANGE)" "$(NOTE)" --project $(if $(ROUTER),router,.) \
		$(foreach r,$(REQUIRES),--requires $(r))

test: db
	@scripts/typescript-client.sh
	@scripts/sqitch-roundtrip.sh
	@scripts/engine-guard.sh
	@scripts/engine-guard.sh router
	@scripts/pgtap.sh
	@scripts/lint-plpgsql.sh
	@$(MAKE) --no-print-directory check-python
	@$(MAKE) --no-print-directory pytest

# The inner loop: ruff, mypy and the tests that need no cluster restart, no browser, no wheel build and
# no long wait (pytest's markers slow, cluster, browser, install: pyproject.toml); make test runs them all.
# TESTS narrows it to some files or tests: make test-fast TESTS=tests/test_cli.py
FAST_TESTS := not slow and not cluster and not browser and not install

test-fast: db
	@$(MAKE) --no-print-directory check-python
	@$(VENV)/bin/pytest -q $(PYTEST_PARALLEL) -m "$(FAST_TESTS)" $(TESTS)

demo: deploy
	@$(PY) examples/demo.py

# The order example through a PL/Proxy router and two shards (docs/scaling.md).
demo-shards: db
	@$(PY) examples/demo_shards.py

bench: db
	@$(PY) -m bench

bench-quick: db
	@$(PY) -m bench --quick

bench-console: db
	@$(PY) -m bench.console

# SPEC 16 (issue 33): reaching, draining and ending maps of 10,000 and 100,000 items, a 1,000-node chain,
# and a drain beside steps reporting progress; minutes.
bench-maps: db
	@$(PY) -m bench.maps
	@$(PY) -m bench.progress

# Issue #34's coordination targets (SPEC 17): emit_event over 10,000 waiting nodes, a run awaited by 1,000, debounce.
bench-coordination: db
	@$(PY) -m bench.coordination

# A held xmin horizon (issue #37): a steady 100 runs/s clean, with a REPEATABLE READ transaction held and
# with a session idle in transaction, then drains of 50,000 runs with and without one, then five minutes at a
# held queue depth of 2,000 (docs/performance.md); about fifteen minutes.
bench-xmin: db
	@$(PY) -m bench.xmin

# Issue #19's history targets on today's engine (docs/performance.md); minutes.
bench-history: db
	@$(PY) -m bench.history

# The browser test saves its screenshots into .cyclone/screenshots/ (ignored);
# this copies them to docs/console/, which docs/console.md shows.
screenshots: db
	@$(VENV)/bin/pytest -q tests/test_console_browser.py
	@mkdir -p docs/console
	@cp .cyclone/screenshots/overview.png .cyclone/screenshots/run.png .cyclone/screenshots/dead-letters.png docs/console/
	@echo "screenshots: docs/console/ refreshed"

db-stop:
	@if [[ -x $(CYC) ]]; then $(CYC) dev-db stop; fi

clean:
	@if [[ -x $(CYC) ]]; then $(CYC) dev-db destroy --yes; fi
	@rm -rf $(VENV) .cyclone *.egg-info .pytest_cache .hypothesis
	@find . -name __pycache__ -type d -prune -exec rm -rf {} +
