"""process.Memo computes each distinct case once; the output must be what computing every TrainJob
afresh gives. Its shortcuts reuse a case without violations for TrainJobs of the same shape whose
managers and paths differ: these tests render with and without the memo and compare the bytes."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import given
from trainjob_resources import process
from trainjob_resources.derive.materialize import derived_name
from trainjob_resources.derive.plan import Plan, make_plan
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.resolve.bundle import RuntimeEntry
from trainjob_resources.resolve.context import TrainJobContext
from trainjob_resources.rules.framework import Read, Stage
from trainjob_resources.trainer.effective import ContainerKey, Effective

from tests.hostile import RUNTIME, bundle, load, trainjob_value, trainjob_yaml
from tests.kit import build
from tests.test_properties import bundles

R = TypeVar("R")


class _Forgetful(dict[Any, Any]):
    """A store that keeps nothing."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class NoMemo(process.Memo):
    """Every call computed afresh."""

    def __init__(self) -> None:
        super().__init__()
        self.pod_parts = _Forgetful()

    def remember(
        self,
        stage: Stage,
        reads: Sequence[Read],
        context: TrainJobContext,
        compute: Callable[[], R],
        subject: Any = None,
    ) -> R:
        return compute()

    def plan(self, context: TrainJobContext, all_effective: dict[ContainerKey, Effective]) -> Plan:
        return make_plan(all_effective, context.sites, context.topo)

    def derived_name(self, entry: RuntimeEntry, kind: str, namespace: str, overrides: dict[str, Any]) -> str:
        return derived_name(entry.item, kind, namespace, overrides)


def render(data: bytes) -> bytes:
    return krm.write(process.process(krm.read(data)))


def render_afresh(data: bytes) -> bytes:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(process, "Memo", NoMemo)
        return render(data)


def results_by_name(data: bytes) -> dict[str, list[tuple[str, str, str]]]:
    out: dict[str, list[tuple[str, str, str]]] = {}
    for result in load(render(data))["results"]:
        name = result.get("resourceRef", {}).get("name", "")
        path = result.get("field", {}).get("path", "")
        out.setdefault(name, []).append((result["severity"], path, result["message"]))
    return out


def with_manager(value: dict[str, Any], manager: str) -> dict[str, Any]:
    out = copy.deepcopy(value)
    out["spec"]["runtimePatches"][0]["manager"] = manager
    return out


def moved_down(value: dict[str, Any]) -> dict[str, Any]:
    """The same patch, second in the list after one that only sets a node selector."""
    out = copy.deepcopy(value)
    selector = build.replicated_job("node", {"nodeSelector": {"pool": "a"}})
    first = build.runtime_patch(selector, manager="platform.example.com/placer")
    out["spec"]["runtimePatches"].insert(0, first)
    return out


def test_a_clean_case_is_not_reused_for_an_invalid_manager() -> None:
    good = trainjob_value("good")
    bad = with_manager(trainjob_value("bad"), "Not A Manager")
    data = bundle(RUNTIME, trainjob_yaml(good), trainjob_yaml(bad))
    found = results_by_name(data)
    assert [r for r in found["good"] if r[0] == "error"] == []
    assert ("error", "spec.runtimePatches[0].manager") in [r[:2] for r in found["bad"]]
    assert render(data) == render_afresh(data)


def test_violations_point_at_each_trainjob_s_own_patch() -> None:
    first = trainjob_value("first", memory="64 GiB")
    second = moved_down(trainjob_value("second", memory="64 GiB"))
    data = bundle(RUNTIME, trainjob_yaml(first), trainjob_yaml(second))
    found = results_by_name(data)
    assert {p for s, p, _ in found["first"] if s == "error"} == {
        f"spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
        f".initContainers[0].resources.{section}.memory"
        for section in ("limits", "requests")
    }
    assert {p for s, p, _ in found["second"] if s == "error"} == {
        f"spec.runtimePatches[1].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
        f".initContainers[0].resources.{section}.memory"
        for section in ("limits", "requests")
    }
    assert render(data) == render_afresh(data)


POLICY = b"""\
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: platform-policy}
  data:
    maxPerContainer: memory=32Gi
"""


def test_policy_findings_point_at_each_trainjob_s_own_patch() -> None:
    """Same resources, patched from different places: the findings are not reused across paths."""
    first, second = trainjob_value("first"), moved_down(trainjob_value("second"))
    data = bundle(RUNTIME, trainjob_yaml(first), trainjob_yaml(second)) + POLICY
    found = results_by_name(data)
    assert {p.split(".trainingRuntimeSpec")[0] for s, p, m in found["first"] if "maxPerContainer" in m} == {
        "spec.runtimePatches[0]"
    }
    assert {p.split(".trainingRuntimeSpec")[0] for s, p, m in found["second"] if "maxPerContainer" in m} == {
        "spec.runtimePatches[1]"
    }
    assert render(data) == render_afresh(data)


ROLE_POLICY = POLICY.replace(b"maxPerContainer: memory=32Gi", b"maxPerRole: sidecar.memory=32Gi")


def test_role_caps_point_at_each_trainjob_s_own_patch() -> None:
    first, second = trainjob_value("first"), moved_down(trainjob_value("second"))
    data = bundle(RUNTIME, trainjob_yaml(first), trainjob_yaml(second)) + ROLE_POLICY
    found = results_by_name(data)
    for name, patch in (("first", "spec.runtimePatches[0]"), ("second", "spec.runtimePatches[1]")):
        assert {p.split(".trainingRuntimeSpec")[0] for s, p, m in found[name] if "maxPerRole" in m} == {patch}
    assert render(data) == render_afresh(data)


def test_plausibility_warnings_point_at_each_trainjob_s_own_patch() -> None:
    """The same implausible value (memory: 256, bytes) patched from different places."""
    first, second = trainjob_value("first", "256"), moved_down(trainjob_value("second", "256"))
    data = bundle(RUNTIME, trainjob_yaml(first), trainjob_yaml(second))
    found = results_by_name(data)
    for name, patch in (("first", "spec.runtimePatches[0]"), ("second", "spec.runtimePatches[1]")):
        warned = {p.split(".trainingRuntimeSpec")[0] for s, p, m in found[name] if m.startswith("memory: 256 is")}
        assert warned == {patch}, found[name]
    assert render(data) == render_afresh(data)


def namespace_object(kind: str, name: str, spec: str) -> str:
    """An object of namespace team-a, as an item (``spec``: the lines of its spec)."""
    return f"- apiVersion: v1\n  kind: {kind}\n  metadata: {{name: {name}, namespace: team-a}}\n  spec:\n{spec}"


LIMIT_RANGE = namespace_object("LimitRange", "caps", "    limits:\n    - type: Container\n      max: {memory: 48Gi}\n")


def test_policy_findings_name_each_trainjob_s_own_manager() -> None:
    """The same patch from two managers: each finding names the TrainJob's own (a memo key without
    the managers once named the first TrainJob's for both)."""
    first, second = trainjob_value("first"), with_manager(trainjob_value("second"), "other.example.com/x")
    data = bundle(RUNTIME, trainjob_yaml(first), trainjob_yaml(second), LIMIT_RANGE)
    found = results_by_name(data)
    named = {name: {m.rsplit("from patch ", 1)[-1] for s, _, m in found[name] if s == "error"} for name in found}
    assert named == {"first": {"user.example.com/tuner)"}, "second": {"other.example.com/x)"}}
    assert render(data) == render_afresh(data)


QUOTA = namespace_object("ResourceQuota", "compute", '    hard: {pods: "3"}\n')


def test_trainjobs_that_differ_in_num_nodes_alone_are_totalled_each_on_its_own() -> None:
    """The pods' parts are shared across numNodes; the counts, totals and quota findings are not."""
    values: list[dict[str, Any]] = []
    for nodes in (1, 2, 4, 2, 1):
        value = trainjob_value(f"n{nodes}-{len(values)}", memory="40Gi")
        value["spec"]["trainer"] = {"numNodes": nodes}
        values.append(value)
    data = bundle(RUNTIME, *(trainjob_yaml(v) for v in values), QUOTA)
    found = results_by_name(data)
    summaries = {
        name: [m for s, _, m in rows if s == "info" and m.startswith("requests per")] for name, rows in found.items()
    }
    assert len({tuple(summaries[f"n{n}-{i}"]) for i, n in enumerate((1, 2, 4, 2, 1))}) == 3
    assert summaries["n2-1"] == summaries["n2-3"]
    assert [r for r in found["n1-0"] if r[0] == "error"] == []
    assert any(s == "error" and "ResourceQuota team-a/compute" in m for s, _, m in found["n4-2"])
    assert render(data) == render_afresh(data)


def test_a_reused_clean_case_renders_as_computing_it_afresh() -> None:
    values = [
        trainjob_value("a"),
        with_manager(trainjob_value("b"), "other.example.com/x"),
        moved_down(trainjob_value("c")),
    ]
    data = bundle(RUNTIME, *(trainjob_yaml(v) for v in values))
    assert render(data) == render_afresh(data)


@pytest.mark.slow
@given(data=bundles(failing=2))
def test_the_memo_changes_nothing_in_the_output(data: bytes) -> None:
    assert render(data) == render_afresh(data)


def _sidecar(name: str) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "resources": {"limits": {"memory": "1Gi"}}}


TWO_JOBS = build.items_text(
    build.training_runtime(
        "two-jobs",
        [
            build.replicated_job("prep", {"containers": [_sidecar("xa"), _sidecar("yb")]}),
            build.trainer_job({"containers": [{"name": "node", "image": "pytorch/pytorch"}, _sidecar("yb")]}),
        ],
        build.torch_policy(),
    )
)


def _sized(name: str, jobs: dict[str, list[str]]) -> dict[str, Any]:
    """A TrainJob that sizes, in each replicated job of ``jobs``, the named containers to 4Gi."""
    replicated = [
        build.replicated_job(
            job, {"containers": [{"name": c, "resources": {"limits": {"memory": "4Gi"}}} for c in names]}
        )
        for job, names in jobs.items()
    ]
    patch = build.runtime_patch(*replicated, manager="user.example.com/tuner")
    return build.trainjob(name, "two-jobs", [patch], namespace="team-a")


def test_a_clean_case_is_not_reused_for_containers_of_other_jobs() -> None:
    """The same containers in the same order, the same jobs, but ``y`` in the other job: a clean case
    of the first TrainJob must not size the second one's containers."""
    first = _sized("first", {"prep": ["xa", "yb"], "node": []})
    second = _sized("second", {"prep": ["xa"], "node": ["yb"]})
    data = bundle(TWO_JOBS, trainjob_yaml(first), trainjob_yaml(second))
    out = load(render(data))
    assert [r for r in out.get("results", []) if r.get("severity") == "error"] == []
    derived = {item["metadata"]["name"]: item for item in out["items"] if item["kind"] == "TrainingRuntime"}
    assert len(derived) == 2
    sized = {
        frozenset(
            (job["name"], c["name"])
            for job in item["spec"]["template"]["spec"]["replicatedJobs"]
            for c in job["template"]["spec"]["template"]["spec"]["containers"]
            if (c.get("resources") or {}).get("limits", {}).get("memory") == "4Gi"
        )
        for item in derived.values()
    }
    assert sized == {frozenset({("prep", "xa"), ("prep", "yb")}), frozenset({("prep", "xa"), ("node", "yb")})}
    assert render(data) == render_afresh(data)
