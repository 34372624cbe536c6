# `make test` and `make demo` create .venv and install what they need.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo docs reference lint screenshots screenshot-browser bench bench-quick samples clean browser phoenix emitters

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

test: $(STAMP) browser phoenix emitters
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 3 --dist loadfile

# tests/test_export.py opens an exported page, tests/test_serve_browser.py the served app (through
# Playwright), in a real headless browser: Debian's chromium, installed here once when missing
# (about 30 s; needs root, as on every machine of this project); never a downloaded browser.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		{ echo "installing chromium for the browser tests (once)"; \
		  apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# tests/test_telemetry_phoenix.py sends spans to a real Arize Phoenix (a consumer this project did
# not write), started by the tests; it pins its own versions of much that we use, so it lives in
# a venv of its own, made once (a few minutes), then reused: the second `make test` costs nothing.
PHOENIX_VENV := .venv-phoenix
PHOENIX_STAMP := $(PHOENIX_VENV)/.installed

phoenix: $(PHOENIX_STAMP)

$(PHOENIX_STAMP):
	test -x $(PHOENIX_VENV)/bin/python || $(PY) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install -q 'arize-phoenix>=20,<21'
	touch $(PHOENIX_STAMP)

# tests/test_collect*.py run other agent frameworks as their users run them (pydantic-ai with its
# own instrumentation, exporting OTLP to a real `agentor collect`); they pin their own versions
# of much that we use, so they live in a venv of their own, made once, then reused.
EMITTERS_VENV := .venv-emitters
EMITTERS_STAMP := $(EMITTERS_VENV)/.installed

emitters: $(EMITTERS_STAMP)

$(EMITTERS_STAMP): tests/emitters/requirements.txt
	test -x $(EMITTERS_VENV)/bin/python || $(PY) -m venv $(EMITTERS_VENV)
	$(EMITTERS_VENV)/bin/python -m pip install -q -r tests/emitters/requirements.txt
	touch $(EMITTERS_STAMP)

# The manual (docs/, mkdocs.yml) as a site in site/; tests/test_docs.py builds it with --strict.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The references written into docs/cli.md, api.md, api-ops.md, api-testing.md, errors.md and
# log-format.md, from the argument parsers, the docstrings and the event types' declaration;
# tests/test_docs.py fails when one is not current.
reference: $(STAMP)
	$(BIN)/python scripts/gen_docs.py

# SVGs of the app for the README, from the sample runs in runs/.
screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py

# screenshots/browser.png: the sample runs served (`agentor-tui serve`), as headless chromium shows them.
screenshot-browser: $(STAMP) browser
	$(BIN)/python scripts/browser_screenshot.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Each bench prints a table and, last, `NAME ratio=X goal=Y ours=... baseline=...`
# (bench/README.md). `bench-quick` runs them on tiny inputs: it checks they run, not figures.
BENCHES := append loop_overhead log_size index tail_latency big_run startup pg_append search fleet pg_list pg_tail compare_view pg_search long_run collect experiment

bench: $(STAMP)
	@for b in $(BENCHES); do echo "== $$b"; $(BIN)/python bench/$$b.py || exit 1; echo; done

bench-quick: $(STAMP)
	@for b in $(BENCHES); do \
		out=$$($(BIN)/python bench/$$b.py --quick) || { echo "$$out"; exit 1; }; \
		echo "$$out" | tail -n 1; \
	done

# Rewrite the sample run logs in runs/ with the real engine (crashes are real SIGKILLs).
samples: $(STAMP)
	env -u OPENAI_API_KEY $(BIN)/python scripts/make_samples.py --out runs

# Open a fresh scratch copy of the samples with the weather agent on the offline demo model,
# so `r` resumes a crashed run without network, and approving the run that waits for a person
# (enter, then a, e or n) lets it go on at once; what they do is written to demo-runs/ too.
# The samples are recorded as gpt-4o-mini (so their cost is priced); what the demo writes is
# recorded as offline-demo, the offline model's own name, which asks it again by name: in a
# fork at a generation (F, the model field) and in a replay from a shell as well:
#   agentor replay RUN --model offline-demo --store demo-runs --agent examples/weather.py:agent
# (gpt-4o-mini there asks OpenAI, which needs OPENAI_API_KEY.)
demo: $(STAMP)
	rm -rf demo-runs
	cp -R runs demo-runs
	env -u OPENAI_API_KEY AGENTOR_RUNS=demo-runs \
		$(BIN)/agentor-tui demo-runs --agent examples/weather.py:agent

clean:
	rm -rf $(VENV) $(PHOENIX_VENV) $(EMITTERS_VENV) demo-runs site .pytest_cache .ruff_cache .mypy_cache
