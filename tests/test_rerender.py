"""Re-rendering: a fixed point, base-runtime edits propagate, later overrides apply on top, no orphans."""

from __future__ import annotations

import copy
from typing import Any

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
    tj["spec"]["runtimePatches"].append(patch)
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


def test_removing_the_patch_restores_the_base_runtime_ref_and_drops_the_derived_runtime() -> None:
    once = render([RUNTIME, job("a", "64Gi")])
    edited = copy.deepcopy(once.items)
    tj = next(i for i in edited if i["kind"] == "TrainJob")
    tj["spec"]["runtimePatches"] = []
    again = render(edited)
    assert again.code == 0
    assert again.of_kind("TrainingRuntime") == []
    assert again.named("TrainJob", "a")["spec"]["runtimeRef"] == {"name": "loader-runtime"}


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
