"""`trainjob-resources schema trainjob|config` (issue 32): JSON Schemas generated from the models the
function reads with, for yaml-language-server (a modeline) and kubeconform (``-schema-location``).

Both read draft-07 (kubeconform compiles with santhosh-tekuri/jsonschema, Draft 4 unless ``$schema``
says otherwise: pkg/validator/validator.go); the ``jsonschema`` package (test extra) checks the
schemas against the draft-07 metaschema and validates every bundled example with them."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from jsonschema.exceptions import best_match
from trainjob_resources.options.config import ConfigError, parse_config
from trainjob_resources.trainer.models import parse_trainjob

from tests.crd_schema import problems as upstream_problems
from tests.kit import build

ROOT = Path(__file__).resolve().parents[1]
TESTDATA = ROOT / "tests" / "testdata"


def schema(kind: str) -> dict[str, Any]:
    """The schema as the installed command prints it."""
    done = subprocess.run(
        [sys.executable, "-m", "trainjob_resources", "schema", kind], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, ""), done
    parsed = json.loads(done.stdout)
    assert isinstance(parsed, dict)
    return parsed


@pytest.fixture(scope="module")
def trainjob_schema() -> dict[str, Any]:
    return schema("trainjob")


@pytest.fixture(scope="module")
def config_schema() -> dict[str, Any]:
    return schema("config")


def errors(schema: dict[str, Any], document: Any) -> list[tuple[str, str]]:
    """(path, keyword) of each place the document does not fit, as a draft-07 validator reports it
    (within an anyOf, the alternative that fits best: what an editor underlines)."""
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    found = [best_match([e]) for e in validator.iter_errors(document)]
    return sorted((".".join(str(p) for p in e.absolute_path), str(e.validator)) for e in found)


def documents(kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of ``kind`` in the examples and in the goldens' inputs that render (success, render)."""
    files = [
        *(p for p in (ROOT / "kustomization-examples").rglob("*.yaml") if "templates" not in p.parts),
        *(TESTDATA / "success").glob("*/input.yaml"),
        *(TESTDATA / "render").glob("*/repo/**/*.yaml"),
    ]
    for path in sorted(files):
        for document in yaml.safe_load_all(path.read_text()):
            if not isinstance(document, dict):
                continue
            objects = document.get("items") if document.get("kind") == "ResourceList" else [document]
            for obj in objects or []:
                if isinstance(obj, dict) and obj.get("kind") == kind:
                    yield str(path.relative_to(ROOT)), obj
            config = document.get("functionConfig") if document.get("kind") == "ResourceList" else None
            if isinstance(config, dict) and config.get("kind") == kind:
                yield f"{path.relative_to(ROOT)} (functionConfig)", config


@pytest.mark.parametrize("kind", ["trainjob", "config"])
def test_the_schema_is_draft_07_with_every_reference_resolvable(kind: str) -> None:
    printed = schema(kind)
    assert printed["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(printed)
    text = json.dumps(printed)
    assert "$defs" not in text and "definitions" not in text

    def walk(value: Any) -> Iterator[dict[str, Any]]:
        if isinstance(value, dict):
            yield value
            for item in value.values():
                yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)

    for node in walk(printed):
        # Nothing to resolve: kubeconform and editors read the schema as one file.
        assert "$ref" not in node, node
        assert not ("title" in node and isinstance(node["title"], str)), "no generated titles"
    assert {"apiVersion", "kind"} <= set(printed["required"])


def test_every_bundled_trainjob_fits_the_trainjob_schema(trainjob_schema: dict[str, Any]) -> None:
    found = list(documents("TrainJob"))
    assert len(found) >= 20, found
    with_resources = 0
    for where, trainjob in found:
        assert errors(trainjob_schema, trainjob) == [], where
        text = json.dumps(trainjob.get("spec", {}).get("runtimePatches") or [])
        with_resources += '"resources"' in text
    assert with_resources >= 10, "the examples size containers in their patches"


def test_resources_in_a_container_patch_fit_where_upstreams_crd_has_none(trainjob_schema: dict[str, Any]) -> None:
    trainjob = next(t for _, t in documents("TrainJob") if "resources" in json.dumps(t.get("spec", {})))
    assert any("resources" in p for p in upstream_problems(trainjob)), "upstream's API drops it"
    assert errors(trainjob_schema, trainjob) == []


def _patched(resources: Any, **container: Any) -> dict[str, Any]:
    entry = {"name": "data-loader", "resources": resources, **container}
    return build.trainjob("tj", "rt", [build.container_patch("node", "initContainers", entry, manager="me")])


PATCH = "spec.runtimePatches.0.trainingRuntimeSpec.template.spec.replicatedJobs.0.template.spec.template.spec"


@pytest.mark.parametrize(
    ("trainjob", "expected", "model_refuses"),
    [
        (_patched({"limits": {"memory": "64Gi", "cpu": 2, "nvidia.com/gpu": "1"}}), [], False),
        (_patched({"limits": {"memory": None}}), [], False),  # null deletes the runtime's value
        # Not a quantity: the model reads any value here, the container-site rule refuses it.
        (
            _patched({"limits": {"memory": "2 cores"}}),
            [(f"{PATCH}.initContainers.0.resources.limits.memory", "pattern")],
            None,
        ),
        (
            _patched({"limit": {"memory": "1Gi"}}),
            [(f"{PATCH}.initContainers.0.resources", "additionalProperties")],
            True,
        ),
        (_patched({"limits": {}}, image="x"), [(f"{PATCH}.initContainers.0", "additionalProperties")], True),
        ({**_patched({}), "kind": "TrainingRuntime"}, [("kind", "enum")], None),
    ],
    ids=["quantities", "null", "not-a-quantity", "misspelt-limits", "image-in-a-patch", "another-kind"],
)
def test_the_trainjob_schema_refuses_what_the_function_refuses(
    trainjob_schema: dict[str, Any],
    trainjob: dict[str, Any],
    expected: list[tuple[str, str]],
    model_refuses: bool | None,
) -> None:
    assert errors(trainjob_schema, trainjob) == expected
    if model_refuses is not None:
        assert bool(parse_trainjob(copy.deepcopy(trainjob))[1]) == model_refuses


def test_no_runtime_ref_is_refused(trainjob_schema: dict[str, Any]) -> None:
    trainjob = _patched({})
    del trainjob["spec"]["runtimeRef"]
    assert errors(trainjob_schema, trainjob) == [("spec", "required")]
    assert parse_trainjob(trainjob)[1], "the model refuses it too"


def test_every_bundled_config_fits_the_config_schema(config_schema: dict[str, Any]) -> None:
    found = list(documents("TrainJobResources"))
    assert len(found) >= 5, found
    for where, config in found:
        assert errors(config_schema, config) == [], where


def typed(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "fn.trainjob-resources.io/v1alpha1", "kind": "TrainJobResources", "spec": spec}


# Structured forms: the schema and parse_config agree. (A string form is any string to the schema;
# parse_config reads it and names what is wrong.)
AGREEMENT = [
    (typed(), True),
    (typed(mode="native", derivedRuntimeKind="ClusterTrainingRuntime", results="problems"), True),
    (typed(mode="validate"), False),
    (typed(maxPerContainer={"memory": "48Gi", "nvidia.com/gpu": 8}), True),
    (typed(maxPerContainer={"memory": "-1Gi"}), False),
    (typed(maxPerContainer={"memory": "lots"}), False),
    (typed(maxPerContainer="memory=48Gi"), True),
    (typed(maxPerRole={"sidecar": {"memory": "64Gi"}, "trainer": {"nvidia.com/gpu": 8}}), True),
    (typed(maxPerRole={"launcher": {"memory": "64Gi"}}), False),
    (typed(maxPerRole={"sidecar": "64Gi"}), False),
    (typed(maxPerRole="sidecar.memory=64Gi"), True),
    (typed(maxPerRole=None), False),
    (typed(maxPerContainer=None), False),
    (typed(allowedResources=["cpu", "memory"], gpuResources=["example.com/*"]), True),
    (typed(allowedResources="cpu,memory"), True),
    (typed(allowedResources=None), True),
    (typed(allowGpuInSidecars=False), True),
    (typed(allowGpuInSidecars="false"), True),
    (typed(allowGpuInSidecars="no"), False),
    (typed(allowGpuInSidecars=1), False),
    (typed(namespacePolicy="ignore"), False),
    (typed(maxPerCPU={}), False),
    (typed(max_per_container={}), False),
    ({"apiVersion": "fn.trainjob-resources.io/v1alpha1", "kind": "Other", "spec": {}}, False),
]


@pytest.mark.parametrize(("config", "accepted"), AGREEMENT)
def test_the_config_schema_and_the_function_agree(
    config_schema: dict[str, Any], config: dict[str, Any], accepted: bool
) -> None:
    try:
        parse_config(copy.deepcopy(config))
        parsed = True
    except ConfigError:
        parsed = False
    assert parsed == accepted, "the case says what the function does"
    assert (errors(config_schema, config) == []) == accepted


def test_every_option_is_in_the_config_schema_with_a_description(config_schema: dict[str, Any]) -> None:
    from trainjob_resources.options.config import FunctionConfig

    options = config_schema["properties"]["spec"]["properties"]
    assert list(options) == [f.alias for f in FunctionConfig.model_fields.values()]
    undescribed = [name for name, option in options.items() if not option.get("description")]
    assert undescribed == [], "describe each option for editors: options/config.py _DESCRIPTIONS"


def test_schema_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trainjob_resources", "schema"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "the following arguments are required: kind" in done.stderr, done
    done = subprocess.run(
        [sys.executable, "-m", "trainjob_resources", "schema", "runtime"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "invalid choice: 'runtime' (choose from 'config', 'trainjob')" in done.stderr


# kubeconform itself (`make kubeconform` builds it from its Go module; a failure in CI, a skip elsewhere)

KUBECONFORM_VERSION = "v0.7.0"  # tests/tools/kubeconform.sh builds this one


@pytest.fixture(scope="module")
def kubeconform() -> Path:
    cache = Path(os.environ.get("TRAINJOB_RESOURCES_CACHE") or Path.home() / ".cache" / "trainjob-resources")
    binary = cache / "kubeconform" / KUBECONFORM_VERSION / "kubeconform"
    if not binary.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{binary} is missing: CI runs `make kubeconform` (make test does)")
        pytest.skip(f"kubeconform {KUBECONFORM_VERSION} is not built: run `make kubeconform`")
    return binary


@pytest.fixture(scope="module")
def schema_location(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder of the two schemas, named as kubeconform's -schema-location template finds them."""
    folder = tmp_path_factory.mktemp("schemas")
    (folder / "trainjob_v1alpha1.json").write_text(json.dumps(schema("trainjob")))
    (folder / "trainjobresources_v1alpha1.json").write_text(json.dumps(schema("config")))
    return str(folder / "{{.ResourceKind}}_{{.ResourceAPIVersion}}.json")


IGNORED = ("-ignore-filename-pattern", "/chart/")


def run_kubeconform(binary: Path, location: str, *paths: str) -> tuple[int, list[dict[str, Any]]]:
    done = subprocess.run(
        # A Helm chart is no manifest until rendered: its folder is left out.
        [str(binary), "-output", "json", "-verbose", "-skip", SKIPPED, "-schema-location", location, *IGNORED, *paths],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=ROOT,
    )
    assert done.stderr == "", done
    resources = json.loads(done.stdout)["resources"]
    assert isinstance(resources, list)
    return done.returncode, resources


# The other kinds of the examples: no schema of ours, and no network to fetch Kubernetes' own.
SKIPPED = ",".join(
    [
        *("ClusterTrainingRuntime", "TrainingRuntime", "ConfigMap", "LimitRange", "ResourceQuota", "Kustomization"),
        *("Application", "ApplicationSet", "Deployment", "ConfigManagementPlugin", "Kptfile", "Namespace"),
    ]
)


def test_kubeconform_validates_the_examples_with_the_schemas(kubeconform: Path, schema_location: str) -> None:
    folders = [str(p.relative_to(ROOT)) for p in (ROOT / "kustomization-examples").iterdir() if p.is_dir()]
    code, resources = run_kubeconform(kubeconform, schema_location, *sorted(folders), "tests/testdata/render")
    checked = [r for r in resources if r["status"] != "statusSkipped"]
    assert [r for r in checked if r["status"] != "statusValid"] == [] and code == 0, resources
    kinds = {r["kind"] for r in checked}
    assert kinds == {"TrainJob", "TrainJobResources"}, kinds
    assert len(checked) >= 20, checked


def test_kubeconform_names_the_field_of_a_bad_trainjob(kubeconform: Path, schema_location: str, tmp_path: Path) -> None:
    bad = _patched({"limits": {"memory": "2 cores"}, "limit": {}})
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    code, resources = run_kubeconform(kubeconform, schema_location, str(tmp_path / "bad.yaml"))
    assert code == 1
    (resource,) = resources
    assert resource["status"] == "statusInvalid"
    where = "/" + PATCH.replace(".", "/") + "/initContainers/0/resources"
    assert sorted(e["path"] for e in resource["validationErrors"]) == [where, f"{where}/limits/memory"], resource
