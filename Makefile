# Two entry points (README): `make example` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: example test lint goldens bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

## Run the function on the bundled data-loader example (upstream issue 3999) and print the ResourceList.
example: $(STAMP)
	$(BIN)/trainjob-resources < tests/testdata/success/data-loader-64gi/input.yaml

## Lint, type-check and run the whole test suite.
test: $(STAMP)
	$(BIN)/ruff check function tests bench
	$(BIN)/ruff format --check function tests bench
	$(BIN)/mypy --strict function
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check function tests bench
	$(BIN)/mypy --strict function

## Regenerate every golden file from the current code (function, explain, examples); review the diff.
goldens: $(STAMP)
	$(BIN)/python -m tests.goldens
	$(BIN)/python -m tests.test_explain
	$(BIN)/python -m tests.test_render_goldens
	$(BIN)/python -m tests.examples

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info function/*.egg-info
