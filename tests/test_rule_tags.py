"""Every finding names the rule that made it, as the KRM result's ``tags: {rule: ...}`` (kyaml
``fn/framework/result.go``); the parse stage's rules among them (records of an earlier render that
cannot be undone, a TrainJob without a name)."""

from __future__ import annotations

import pickle

from trainjob_resources.derive.provenance import RESOURCES, RUNTIME_REF
from trainjob_resources.krm.resource_list import Result
from trainjob_resources.rules.registry import RULES
from trainjob_resources.rules.stages import POLICY

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


def test_each_policy_finding_names_its_policy() -> None:
    from tests.test_policy import job, limit_range, runtime, typed

    unreadable = limit_range({"type": "Container", "max": {"memory": "lots"}}, name="broken")
    capped = limit_range({"type": "Container", "max": {"memory": "48Gi"}})
    rendered = render([runtime(), job(), unreadable, capped], typed(maxPerRole={"sidecar": {"memory": "32Gi"}}))
    found = [(r["severity"], r["tags"]["rule"], r["message"].split(" ")[0]) for r in rendered.results]
    assert found == [
        ("warning", "policy-pods", "LimitRange"),  # team-a/broken cannot be read
        ("error", "limit-range", "LimitRange"),
        ("error", "max-per-role", "requests.memory"),
        ("error", "max-per-role", "limits.memory"),
        ("info", "resource-summary", "requests"),
    ]


def test_platform_caps_are_reported_container_by_container() -> None:
    """maxPerContainer and allowedResources are two rules of the ``pod-container`` scope: their
    findings go container by container, as one loop over the containers made them."""
    from tests.test_policy import config_map, job, runtime

    config = config_map(maxPerContainer="memory=16Gi", allowedResources='["cpu", "memory"]')
    sidecar = {"limits": {"memory": "64Gi", "example.com/fpga": 1}}
    per_node = {"limits": {"memory": "32Gi", "nvidia.com/gpu": 4}}
    rendered = render([runtime(), job(sidecar, per_node=per_node)], config)
    found = [(r["tags"]["rule"], r["message"].split(" of replicated job")[0]) for r in rendered.results]
    assert [rule for rule, _ in found if rule != "resource-summary"] == [
        "max-per-container",
        "allowed-resources",
        "max-per-container",
        "allowed-resources",
    ], found


POLICY_RULES = {rule.name for rule in RULES if POLICY in rule.stages}


def test_pods_that_cannot_be_totalled_are_the_policy_pods_rules_one_finding() -> None:
    from tests.test_policy import config_map, job, runtime

    sidecar = {"limits": {"memory": "64Gi", "ephemeral-storage": "1e100010"}}
    per_node = {"limits": {"ephemeral-storage": "1m", "nvidia.com/gpu": 64}}
    for config, severity in ((None, "warning"), (config_map(maxPerContainer="nvidia.com/gpu=8"), "error")):
        rendered = render([runtime(), job(sidecar, per_node=per_node)], config)
        policy = [r for r in rendered.results if r.get("tags", {}).get("rule") in POLICY_RULES]
        assert [(r["severity"], r["tags"]["rule"]) for r in policy] == [(severity, "policy-pods")], rendered.results
        assert "cannot be totalled exactly" in policy[0]["message"]
