"""Re-rendering: a fixed point, base-runtime edits propagate, later overrides apply on top, no orphans."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from trainjob_resources.derive.provenance import ProvenanceError, parse_records, restore
from trainjob_resources.yamltext import yamlnodes as yn

from tests.support import Rendered, container_of, container_patch, load_fixture, render, trainer_runtime, trainjob

RUNTIME = trainer_runtime(
    "loader-runtime",
    [
        {
            "name": "data-loader",
            "image": "loader:1",
            "restartPolicy": "Always",
            "resources": {"limits": {"memory": "8Gi"}, "requests": {"memory": "8Gi"}},
        }
    ],
    image="torch:1",
    labels={"trainer.kubeflow.org/framework": "torch"},
)


def loader(memory: str) -> dict[str, Any]:
    return {"name": "data-loader", "resources": {"limits": {"memory": memory}, "requests": {"memory": memory}}}


def job(name: str, memory: str, namespace: str = "team-a") -> dict[str, Any]:
    return trainjob(name, "loader-runtime", [container_patch("node", "initContainers", loader(memory))], namespace)


def rendered_then_patched(resources: dict[str, Any], manager: str) -> tuple[dict[str, Any], Rendered]:
    """Render job ``a``, add a later manager's data-loader ``resources`` to the output, render again;
    the edited TrainJob and the second render."""
    once = render([RUNTIME, job("a", "64Gi")])
    edited = copy.deepcopy(once.items)
    tj = next(i for i in edited if i["kind"] == "TrainJob")
    patch = container_patch("node", "initContainers", {"name": "data-loader", "resources": resources}, manager)
    # The render dropped job a's patch, left with nothing but its manager (no runtimePatches at all).
    assert "runtimePatches" not in tj["spec"], tj["spec"]
    tj["spec"]["runtimePatches"] = [patch]
    return tj, render(edited)


def test_render_twice_is_a_fixed_point() -> None:
    once = render([RUNTIME, job("a", "64Gi"), job("b", "32Gi")])
    twice = render(once.items)
    assert once.code == twice.code == 0
    assert twice.items == once.items


def test_identical_overrides_share_one_derived_runtime_and_different_ones_do_not() -> None:
    out = render([RUNTIME, job("a", "64Gi"), job("b", "64Gi"), job("c", "32Gi")])
    refs = {t["metadata"]["name"]: t["spec"]["runtimeRef"]["name"] for t in out.of_kind("TrainJob")}
    assert refs["a"] == refs["b"] != refs["c"]
    assert len(out.of_kind("TrainingRuntime")) == 2


def test_editing_the_base_runtime_reaches_derived_runtimes_and_leaves_no_orphan() -> None:
    once = render([RUNTIME, job("a", "64Gi")])
    edited = copy.deepcopy(once.items)
    base = next(i for i in edited if i["kind"] == "ClusterTrainingRuntime")
    container_of(base, "node", "initContainers", "data-loader")["image"] = "loader:2"
    again = render(edited)
    assert again.code == 0
    derived = again.of_kind("TrainingRuntime")
    assert len(derived) == 1, "the runtime derived from the old base must be gone"
    loader_container = container_of(derived[0], "node", "initContainers", "data-loader")
    assert loader_container["image"] == "loader:2"
    assert loader_container["resources"] == {"limits": {"memory": "64Gi"}, "requests": {"memory": "64Gi"}}
    assert again.named("TrainJob", "a")["spec"]["runtimeRef"]["name"] == derived[0]["metadata"]["name"]


def test_an_override_added_later_applies_on_top() -> None:
    _, again = rendered_then_patched({"limits": {"cpu": "2"}}, "ops.example.com/tuner")
    assert again.code == 0, again.results
    derived = again.of_kind("TrainingRuntime")
    assert len(derived) == 1
    resources = container_of(derived[0], "node", "initContainers", "data-loader")["resources"]
    assert resources == {"limits": {"memory": "64Gi", "cpu": "2"}, "requests": {"memory": "64Gi"}}


def with_env(patch: dict[str, Any]) -> dict[str, Any]:
    """The patch, its data-loader with an env entry too: the render keeps the patch for it."""
    [loader_patch] = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    loader_patch["template"]["spec"]["template"]["spec"]["initContainers"][0]["env"] = [{"name": "A", "value": "1"}]
    return patch


def test_removing_the_patch_restores_the_base_runtime_ref_and_drops_the_derived_runtime() -> None:
    written = job("a", "64Gi")
    with_env(written["spec"]["runtimePatches"][0])
    once = render([RUNTIME, written])
    edited = copy.deepcopy(once.items)
    tj = next(i for i in edited if i["kind"] == "TrainJob")
    assert [p["manager"] for p in tj["spec"]["runtimePatches"]] == ["user.example.com/me"]
    tj["spec"]["runtimePatches"] = []
    again = render(edited)
    assert again.code == 0
    assert again.of_kind("TrainingRuntime") == []
    assert again.named("TrainJob", "a")["spec"]["runtimeRef"] == {"name": "loader-runtime"}


def test_removing_the_records_of_a_dropped_patch_restores_the_base_runtime_ref() -> None:
    """A patch the render dropped is not in its output to remove: its records are what to remove."""
    once = render([RUNTIME, job("a", "64Gi")])
    edited = copy.deepcopy(once.items)
    tj = next(i for i in edited if i["kind"] == "TrainJob")
    del tj["metadata"]["annotations"]["fn.trainjob-resources.io/resources"]
    again = render(edited)
    assert again.code == 0
    assert again.of_kind("TrainingRuntime") == []
    assert again.named("TrainJob", "a")["spec"]["runtimeRef"] == {"name": "loader-runtime"}


def test_a_patch_left_with_only_its_manager_is_dropped_and_comes_back_in_its_place() -> None:
    """Three managers size the data-loader; the second's patch also sets an env entry. The first's
    and the third's go from the output (and the list keeps only the second), their records say
    where they were, and the re-render composes the three in the order written: the third wins."""
    patches = [
        container_patch("node", "initContainers", loader("16Gi"), "a.example.com/first"),
        with_env(container_patch("node", "initContainers", loader("32Gi"), "b.example.com/second")),
        container_patch("node", "initContainers", loader("64Gi"), "c.example.com/third"),
    ]
    once = render([RUNTIME, trainjob("a", "loader-runtime", patches, "team-a")])
    assert once.code == 0, once.results
    tj = once.named("TrainJob", "a")
    assert [p["manager"] for p in tj["spec"]["runtimePatches"]] == ["b.example.com/second"]
    derived = container_of(once.of_kind("TrainingRuntime")[0], "node", "initContainers", "data-loader")
    assert derived["resources"]["limits"] == {"memory": "64Gi"}
    twice = render(once.items)
    assert twice.items == once.items
    records = json.loads(tj["metadata"]["annotations"]["fn.trainjob-resources.io/resources"])
    assert [(r["manager"], r.get("entry")) for r in records] == [
        ("a.example.com/first", 0),
        ("b.example.com/second", None),
        ("c.example.com/third", 2),
    ]
    node = yn.from_python(tj)
    assert restore(node)
    restored = yn.to_python(node)["spec"]["runtimePatches"]
    assert [p["manager"] for p in restored] == [p["manager"] for p in patches]
    assert restored == patches


def test_a_failing_trainjob_keeps_its_derived_runtime() -> None:
    tj, again = rendered_then_patched({"limits": {"cpu": "lots"}}, "ops.example.com/x")
    assert again.code == 1
    assert again.named("TrainJob", "a") == tj, "a failing TrainJob comes back exactly as written"
    assert [d["metadata"]["name"] for d in again.of_kind("TrainingRuntime")] == [tj["spec"]["runtimeRef"]["name"]]


def test_unrelated_object_with_the_derived_name_is_an_error() -> None:
    once = render([RUNTIME, job("a", "64Gi")])
    name = once.of_kind("TrainingRuntime")[0]["metadata"]["name"]
    squatter = copy.deepcopy(once.of_kind("TrainingRuntime")[0])
    squatter["metadata"] = {"name": name, "namespace": "team-a"}
    out = render([RUNTIME, job("a", "64Gi"), squatter])
    assert out.code == 1
    assert any("unrelated object" in r["message"] for r in out.errors())
    assert squatter in out.items


def test_a_trainjob_without_resources_comes_back_unchanged() -> None:
    runtime = load_fixture("torch-plain")
    example = load_fixture("trainjob-runtime-patches")
    out = render([runtime, example])
    assert out.code == 0
    assert out.items == [runtime, example]


@pytest.mark.parametrize("entry", ["0", -1, True, 1.0, [0]])
def test_a_record_whose_place_is_not_a_list_index_is_refused(entry: Any) -> None:
    record = {"manager": "m.example.com/x", "replicatedJob": "node", "list": "containers", "container": "c"}
    with pytest.raises(ProvenanceError, match=r"entry .* is not a place in runtimePatches"):
        parse_records(json.dumps([{**record, "resources": {}, "entry": entry}]))
    assert parse_records(json.dumps([{**record, "resources": {}, "entry": 3}]))[0].entry == 3
