"""Every finding names the rule that made it, as the KRM result's ``tags: {rule: ...}`` (kyaml
``fn/framework/result.go``); the parse stage's rules among them (records of an earlier render that
cannot be undone, a TrainJob without a name)."""

from __future__ import annotations

import pickle

from trainjob_resources.checks.provenance import RESOURCES, RUNTIME_REF
from trainjob_resources.checks.rules.registry import RULES
from trainjob_resources.krm.resource_list import Result

from tests.goldens import TESTDATA, results_of, run_function
from tests.support import render, trainjob


def _records(runtime_ref: str) -> dict[str, object]:
    job = trainjob("rendered-before", "torch-distributed", [])
    job["metadata"]["annotations"] = {RUNTIME_REF: runtime_ref, RESOURCES: "[]"}
    return job


def test_records_that_cannot_be_undone_are_the_records_rules_error() -> None:
    rendered = render([_records("not json")])
    assert rendered.code == 1
    [result] = rendered.results
    assert result["severity"] == "error"
    assert result["field"]["path"] == "metadata.annotations"
    assert result["message"].startswith(f"annotation {RUNTIME_REF} is not what this function wrote")
    assert result["tags"] == {"rule": "records"}
    assert rendered.items[0]["metadata"]["annotations"][RUNTIME_REF] == "not json"  # returned as written


def test_a_trainjob_without_a_name_is_the_trainjob_api_rules_error() -> None:
    job = trainjob("", "torch-distributed", [])
    rendered = render([job])
    assert rendered.code == 1
    assert [(r["field"]["path"], r["tags"]) for r in rendered.results] == [("metadata.name", {"rule": "trainjob-api"})]


def test_every_tag_names_a_registered_rule_and_survives_pickling() -> None:
    rendered = render([_records("not json"), trainjob("", "torch-distributed", [])])
    names = {rule.name for rule in RULES}
    assert {r["tags"]["rule"] for r in rendered.results} <= names
    result = Result("m", "warning", rule="crd")
    assert pickle.loads(pickle.dumps(result)) == result  # cli/fan_out.py sends results between processes
    assert result.to_python()["tags"] == {"rule": "crd"}


def test_a_runtimes_refused_resources_are_the_index_stages_and_its_trainjobs_the_resolve_stages() -> None:
    text = (TESTDATA / "success" / "data-loader-64gi" / "input.yaml").read_text()
    trainer = "                  - name: node\n                    image: pytorch/pytorch\n"
    metrics = "                  - name: metrics\n                    image: metrics\n"
    metrics += "                    resources:\n                      requests:\n                        cpu: 2 cores\n"
    code, out, _ = run_function(text.replace(trainer, trainer + metrics, 1).encode())
    assert code == 1
    found = [(r["resourceRef"]["kind"], r["severity"], r["tags"]) for r in results_of(out)]
    assert found == [
        ("ClusterTrainingRuntime", "error", {"rule": "runtime-resources"}),
        ("TrainJob", "error", {"rule": "runtime-ref"}),
    ]
