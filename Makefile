# MintDim: `make demo` and `make test` each set up everything on a fresh machine.
# Both create .venv when it is absent and (re)install MintDim into it when pyproject.toml changed,
# with the `dev` extra: the test tools and every optional extra (pyproject.toml lists them).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.mintdim-installed

.PHONY: demo test lint docs examples tokenizers install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m mintdim.run

# The lint runs first, in this recipe: a ruff finding or a broken import contract (lint-imports:
# the layers declared in pyproject.toml) fails the suite before any test runs.
# pytest runs one pytest-xdist worker per core (-n auto). --dist loadfile gives each test file to
# one worker, so module fixtures (the Ray clusters, module-built test data) start once, not once
# per worker; that measured faster than --dist load. A plain `pytest` stays serial, to debug with.
# pytest's exit 5 means it collected no test at all (a broken checkout or collection), which must
# not pass as green.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n auto --dist loadfile || { status=$$?; \
		if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests (exit 5)" >&2; fi; \
		exit $$status; }

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# The error catalogue is generated from the error classes, and the catalogue of click's messages in
# Vietnamese from mintdim/cli/bilingual.py; a test fails while either is stale.
docs: $(STAMP)
	$(BIN)/python -m mintdim.errors.catalogue > docs/error-catalogue.md
	$(BIN)/python -c 'from mintdim.cli.bilingual import write_catalogue; write_catalogue()'

examples: $(STAMP)
	$(BIN)/python scripts/build_outputs_examples.py

tokenizers: $(STAMP)
	$(BIN)/python scripts/train_demo_tokenizers.py

clean:
	rm -rf outputs multirun .pytest_cache .ruff_cache
