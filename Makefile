# Two entry points (README): `make example` and `make test`; `make help` lists every target, `make unit`
# is the fast loop (CONTRIBUTING.md). Each sets up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make example` installs what running the function needs; `make test` adds the test tools.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test

# The tests that drive a real program or take long carry a marker (pyproject.toml's markers,
# tests/conftest.py): `make unit` leaves out every one of them.
# The tests that compare a golden file (tests/kit/golden.py's assert_golden): `make goldens` runs them.
GOLDEN_TESTS := tests/test_goldens.py tests/test_explain.py tests/test_render_goldens.py tests/test_examples.py \
  tests/test_render_options.py tests/test_usage.py
UNIT_MARKERS := not cluster and not kubectl and not kpt and not image and not slow and not yamloracle

# `make test` runs the test files on WORKERS processes (pytest-xdist; tests/kit/workers.py): the cluster
# tests mostly wait, so the waiting overlaps. One process kept 0.55 of a core busy (CONTRIBUTING.md), so
# four keep two cores busy; `make test WORKERS=1` runs the suite on one worker.
WORKERS ?= 4
XDIST := -n $(WORKERS) --dist loadfile

.DEFAULT_GOAL := help
.PHONY: help example test unit lint goldens bench clean cluster kubeconform crds

## List the targets, each with what it does (this text: the `## ` lines above a target).
help:
	@awk '/^## / { doc = doc (doc == "" ? "" : " ") substr($$0, 4); next } \
	  /^[a-z][a-z-]*:/ && doc != "" { target = $$0; sub(/:.*/, "", target); printf "  make %-8s %s\n", target, doc } \
	  { doc = "" }' $(firstword $(MAKEFILE_LIST))

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The version is the package's __version__ (pyproject.toml reads it): a new one reinstalls.
VERSION_FILE := function/trainjob_resources/__init__.py

$(RUN_STAMP): pyproject.toml $(VERSION_FILE) | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml $(VERSION_FILE) | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(RUN_STAMP) $(STAMP)

## Run the function on the bundled data-loader example (upstream issue 3999) and print the ResourceList.
example: $(RUN_STAMP)
	$(BIN)/trainjob-resources < tests/testdata/success/data-loader-64gi/input.yaml

## Build (or reuse) the local control plane with upstream Kubeflow Trainer, and standalone kustomize,
## from Go modules into a cache folder (tests/cluster/README.md), the Kueue v0.19 harness
## (tests/cluster/kueue-v0.19/build.sh), the YAML oracle
## (tests/yamloracle/build.sh), Helm v4 and v3 for the post-renderer tests (tests/tools/helm.sh) and the
## Argo CD harness (tests/cluster/argocd/build.sh). Without Go: a skip, outside CI.
cluster:
	bash tests/cluster/build.sh
	bash tests/cluster/kueue-v0.19/build.sh
	bash tests/yamloracle/build.sh
	bash tests/tools/helm.sh
	bash tests/cluster/argocd/build.sh

## Build (or reuse) kubeconform from its Go module, for tests/test_schema.py (the same cache folder).
kubeconform:
	bash tests/tools/kubeconform.sh

## Rewrite the CRD schemas the function ships (trainer/crds/<release>.json) from each Trainer release's
## Go module (tests/trainer_crds.py).
crds: $(STAMP)
	$(BIN)/python -m tests.trainer_crds

## Lint, type-check and run the whole test suite (what CI runs), its files on WORKERS processes (default 4).
test: $(STAMP) kubeconform cluster lint
	$(BIN)/python -m pytest $(XDIST)

# PYTHONDONTWRITEBYTECODE emptied: compiled modules (and pytest's rewritten tests) are kept between runs.
## The fast loop: the tests that need no control plane, kubectl, kpt or container engine and are not
## marked slow (under a minute of CPU on two quiet cores; CONTRIBUTING.md). No lint: `make lint` is that.
## Passes ARGS on to pytest (`make unit ARGS="--lf -x"`, `make unit ARGS=tests/test_quantity.py`).
unit: $(STAMP)
	PYTHONDONTWRITEBYTECODE= TESTS_RENDER_IN_FORK=1 $(BIN)/python -m pytest -m "$(UNIT_MARKERS)" $(ARGS)

## The checks of `make test` without the tests: ruff check, ruff format --check, mypy --strict.
lint: $(STAMP)
	$(BIN)/ruff check function tests bench
	$(BIN)/ruff format --check function tests bench
	$(BIN)/mypy --strict function

## Rewrite every golden file from the current code (function, explain, render, examples): the tests that
## own one, with the golden checker's update switch (tests/kit/golden.py); review the diff.
goldens: $(STAMP)
	$(BIN)/python -m pytest --update-goldens -p no:cacheprovider -m "not cluster and not image" $(GOLDEN_TESTS)
	$(BIN)/python -m tests.rules_doc
	$(BIN)/python -m tests.options_doc

## Run the benchmark (bench/run.py, a minute or two) and compare with its targets.
bench: $(STAMP)
	$(BIN)/python bench/run.py

## Remove the virtualenv and the build output.
clean:
	rm -rf $(VENV) build dist *.egg-info function/*.egg-info
