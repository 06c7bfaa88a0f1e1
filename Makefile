# Two entry points (README): `make example` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make example` installs what running the function needs; `make test` adds the test tools.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test

.PHONY: example test lint goldens bench clean cluster

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(RUN_STAMP) $(STAMP)

## Run the function on the bundled data-loader example (upstream issue 3999) and print the ResourceList.
example: $(RUN_STAMP)
	$(BIN)/trainjob-resources < tests/testdata/success/data-loader-64gi/input.yaml

## Build (or reuse) the local control plane with upstream Kubeflow Trainer, and standalone kustomize
## and Helm, from Go modules into a cache folder (tests/cluster/README.md), and the YAML oracle
## (tests/yamloracle/build.sh). Without Go: a skip, outside CI.
cluster:
	bash tests/cluster/build.sh
	bash tests/yamloracle/build.sh

## Lint, type-check and run the whole test suite.
test: $(STAMP) cluster
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
