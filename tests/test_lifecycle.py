"""What a live Trainer cluster keeps accepting across renders (issue 11): runtimeRefs that survive
base edits and re-renders, apply order and its hints, no-op overrides, metadata hygiene, the old
annotation prefix, orphans."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support import Rendered, container_of, container_patch, render, trainer_runtime, trainjob

PREFIX = "fn.trainjob-resources.io/"
OLD_PREFIX = "trainjob-resources.kubeflow.org/"
DEPENDS_ON = "config.kubernetes.io/depends-on"
WAVE = "argocd.argoproj.io/sync-wave"


def runtime(**edits: Any) -> dict[str, Any]:
    loader = {
        "name": "data-loader",
        "image": edits.get("image", "loader:1"),
        "restartPolicy": "Always",
        "resources": edits.get("resources", {"limits": {"memory": "8Gi", "cpu": 1}, "requests": {"memory": "8Gi"}}),
    }
    metrics = {
        "name": "metrics",
        "image": "metrics:1",
        "restartPolicy": "Always",
        "resources": {"requests": {"cpu": "100m"}},
    }
    labels = {"trainer.kubeflow.org/framework": "torch", **edits.get("labels", {})}
    out = trainer_runtime("loader-runtime", [loader, metrics], labels=labels)
    out["metadata"].update(edits.get("metadata", {}))
    return out


def loader(resources: Any) -> dict[str, Any]:
    return {"name": "data-loader", "resources": resources}


def memory(value: str) -> dict[str, Any]:
    return {"limits": {"memory": value}, "requests": {"memory": value}}


def job(name: str, resources: Any = None, namespace: str = "team-a", annotations: Any = None) -> dict[str, Any]:
    containers = [loader(memory("64Gi") if resources is None else resources)]
    out = trainjob(name, "loader-runtime", [container_patch("node", "initContainers", containers[0])], namespace)
    if annotations:
        out["metadata"]["annotations"] = annotations
    return out


def refs(out: Rendered) -> dict[str, Any]:
    return {t["metadata"]["name"]: t["spec"]["runtimeRef"] for t in out.of_kind("TrainJob")}


def base_of(items: list[dict[str, Any]]) -> dict[str, Any]:
    return next(i for i in items if i["kind"] == "ClusterTrainingRuntime")


# Base edits flow in place


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param({"image": "loader:2"}, id="image bump"),
        pytest.param({"labels": {"team": "platform"}}, id="label edit"),
        pytest.param(
            {"resources": {"limits": {"memory": "8Gi", "cpu": "1000m"}, "requests": {"memory": "8192Mi"}}},
            id="quantities rewritten",
        ),
        pytest.param({"resources": {"limits": {"memory": "16Gi", "cpu": 2}}}, id="base resources changed"),
    ],
)
def test_a_base_edit_keeps_every_runtime_ref_and_updates_the_derived_content(edit: dict[str, Any]) -> None:
    jobs = [job("a"), job("b"), job("c", memory("32Gi")), job("d", namespace="team-b")]
    before = render([runtime(), *jobs])
    after = render([runtime(**edit), *jobs])
    assert before.code == after.code == 0
    assert refs(after) == refs(before)
    assert [d["metadata"]["name"] for d in after.of_kind("TrainingRuntime")] == [
        d["metadata"]["name"] for d in before.of_kind("TrainingRuntime")
    ]
    for derived in after.of_kind("TrainingRuntime"):
        container = container_of(derived, "node", "initContainers", "data-loader")
        assert container["image"] == edit.get("image", "loader:1")
        assert derived["metadata"]["labels"].get("team") == edit.get("labels", {}).get("team")
        if "resources" in edit:
            assert container["resources"]["limits"]["cpu"] == edit["resources"]["limits"]["cpu"]
            assert container["resources"]["limits"]["memory"] in ("64Gi", "32Gi"), "the override still wins"


def test_a_trainjob_rendered_with_a_derived_runtime_keeps_it_when_the_base_catches_up() -> None:
    once = render([runtime(), job("a")])
    written_back = copy.deepcopy(once.items)
    container_of(base_of(written_back), "node", "initContainers", "data-loader")["resources"] = memory("64Gi")
    again = render(written_back)
    assert refs(again) == refs(once), "the override now equals the base, but the runtimeRef is immutable"
    fresh = render([runtime(resources=memory("64Gi")), job("a")])
    assert refs(fresh) == refs(once), "rendered from the source (kustomize, Argo CD, Helm), the same ref"


def test_a_derived_trainjob_whose_overrides_are_gone_is_warned_that_its_ref_goes_back() -> None:
    """The recorded overrides are gone (the render dropped their patch, which set only resources, so
    its records are what the user removes): the runtimeRef goes back to the base, which a live
    cluster refuses (runtimeRef is immutable, CEL self == oldSelf,
    pkg/apis/trainer/v1alpha1/trainjob_types.go): a warning says so and how to recreate it."""
    once = render([runtime(), job("a")])
    written_back = copy.deepcopy(once.items)
    tj = next(i for i in written_back if i["kind"] == "TrainJob")
    assert "runtimePatches" not in tj["spec"]
    del tj["metadata"]["annotations"][PREFIX + "resources"]
    again = render(written_back)
    assert again.code == 0, again.results
    assert refs(again) == {"a": {"name": "loader-runtime"}}
    (warning,) = [r for r in again.results if r["severity"] == "warning"]
    assert warning["field"]["path"] == "spec.runtimeRef" and warning["resourceRef"]["name"] == "a"
    assert "immutable" in warning["message"] and "Force=true,Replace=true" in warning["message"]
    assert render(again.items).items == again.items


def test_rendering_the_written_back_output_after_a_base_edit_keeps_runtime_refs() -> None:
    once = render([runtime(), job("a"), job("b", memory("32Gi"))])
    written_back = copy.deepcopy(once.items)
    base = base_of(written_back)
    container_of(base, "node", "initContainers", "data-loader")["image"] = "loader:2"
    container_of(base, "node", "initContainers", "data-loader")["resources"]["limits"]["cpu"] = "1000m"
    again = render(written_back)
    assert again.code == 0, again.results
    assert refs(again) == refs(once)
    assert len(again.of_kind("TrainingRuntime")) == 2
    for derived in again.of_kind("TrainingRuntime"):
        assert container_of(derived, "node", "initContainers", "data-loader")["image"] == "loader:2"
    assert render(again.items).items == again.items, "and that is a fixed point"


# Apply order and its hints


def positions(out: Rendered) -> dict[tuple[str, str], int]:
    return {(i["kind"], i["metadata"]["name"]): n for n, i in enumerate(out.items)}


def assert_runtimes_first(out: Rendered) -> None:
    at = positions(out)
    for tj in out.of_kind("TrainJob"):
        ref = tj["spec"]["runtimeRef"]
        assert at[(ref.get("kind", "ClusterTrainingRuntime"), ref["name"])] < at[("TrainJob", tj["metadata"]["name"])]


def test_each_derived_runtime_comes_before_the_first_trainjob_using_it() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    out = render([job("a"), config_map, runtime(), job("b", memory("32Gi")), job("c")])
    assert out.code == 0
    assert_runtimes_first(out)
    kinds = [(i["kind"], i["metadata"]["name"]) for i in out.items]
    assert kinds[0][0] == "TrainingRuntime" and kinds[1] == ("TrainJob", "a"), "right before, the rest in place"
    assert kinds[2:4] == [("ConfigMap", "x"), ("ClusterTrainingRuntime", "loader-runtime")]


def test_a_derived_runtime_written_after_its_trainjob_moves_before_it_on_re_render() -> None:
    once = render([runtime(), job("a")])
    derived = once.of_kind("TrainingRuntime")[0]
    shuffled = [i for i in once.items if i is not derived] + [derived]
    again = render(shuffled)
    assert_runtimes_first(again)
    assert again.items == once.items


def test_argo_cd_waves_put_derived_runtimes_before_their_trainjobs() -> None:
    out = render(
        [
            runtime(),
            job("a", annotations={WAVE: "5"}),
            job("b", annotations={WAVE: "3"}),
            job("c", memory("32Gi")),
            job("d", memory("16Gi"), annotations={WAVE: "soon"}),
        ]
    )
    assert out.code == 0
    waves = {
        d["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["initContainers"][0][
            "resources"
        ]["limits"]["memory"]: d["metadata"]["annotations"][WAVE]
        for d in out.of_kind("TrainingRuntime")
    }
    assert waves == {"64Gi": "2", "32Gi": "-1", "16Gi": "-1"}, (
        "min of the TrainJobs' waves - 1; unset or not an integer is 0"
    )
    assert out.named("TrainJob", "a")["metadata"]["annotations"][WAVE] == "5", "the user's wave is kept"
    assert WAVE not in out.named("TrainJob", "c")["metadata"].get("annotations", {}), "and none is added"


def test_trainjobs_depend_on_their_derived_runtime_for_kpt_live_apply() -> None:
    mine = "apps/namespaces/team-a/Deployment/feeder"
    out = render([runtime(), job("a", annotations={DEPENDS_ON: mine}), job("b"), job("n", namespace="")])
    name = refs(out)["a"]["name"]
    needed = f"trainer.kubeflow.org/namespaces/team-a/TrainingRuntime/{name}"
    assert out.named("TrainJob", "a")["metadata"]["annotations"][DEPENDS_ON] == f"{mine},{needed}"
    assert out.named("TrainJob", "b")["metadata"]["annotations"][DEPENDS_ON] == needed
    assert DEPENDS_ON not in out.named("TrainJob", "n")["metadata"]["annotations"], "no namespace: not known"
    again = render(out.items)
    assert again.items == out.items, "re-rendering adds no second entry"
    edited = copy.deepcopy(out.items)
    for tj in edited:
        if tj["kind"] == "TrainJob":
            tj["spec"]["runtimePatches"] = []
            tj["metadata"]["annotations"].pop(PREFIX + "resources")
    dropped = render(edited)
    assert dropped.named("TrainJob", "a")["metadata"]["annotations"][DEPENDS_ON] == mine, "only ours is removed"
    assert DEPENDS_ON not in dropped.named("TrainJob", "b")["metadata"].get("annotations", {})


def test_cluster_scoped_derived_runtimes_are_named_without_a_namespace() -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "fn"},
        "data": {"derivedRuntimeKind": "ClusterTrainingRuntime"},
    }
    out = render([runtime(), job("a")], config)
    name = refs(out)["a"]["name"]
    assert (
        out.named("TrainJob", "a")["metadata"]["annotations"][DEPENDS_ON]
        == f"trainer.kubeflow.org/ClusterTrainingRuntime/{name}"
    )
    assert_runtimes_first(out)


# No-op overrides


@pytest.mark.parametrize(
    "resources",
    [
        pytest.param({}, id="empty"),
        pytest.param(None, id="null"),
        pytest.param({"limits": {}}, id="empty limits"),
        pytest.param({"limits": {}, "requests": {}}, id="empty maps"),
    ],
)
def test_no_op_overrides_are_stripped_and_derive_nothing(resources: Any) -> None:
    patch = container_patch("node", "initContainers", loader(resources))
    tj = trainjob("a", "loader-runtime", [patch], "team-a")
    out = render([runtime(), tj])
    assert out.code == 0, out.results
    assert out.of_kind("TrainingRuntime") == []
    rendered = out.named("TrainJob", "a")
    assert rendered["spec"]["runtimeRef"] == {"name": "loader-runtime"}
    assert "resources" not in str(rendered["spec"]), "the key must not reach the cluster"
    assert DEPENDS_ON not in rendered["metadata"].get("annotations", {})
    assert render(out.items).items == out.items


@pytest.mark.parametrize(
    "resources",
    [
        pytest.param({"limits": {"memory": "8192Mi", "cpu": "1000m"}}, id="equal to the runtime's"),
        pytest.param({"requests": {"memory": 8589934592}}, id="equal, as a number"),
    ],
)
def test_an_override_equal_to_the_runtime_derives_all_the_same(resources: Any) -> None:
    """kustomize, Argo CD and Helm render from the source every time: whether an override derives
    must not depend on the base's content, or a base edit would change the runtimeRef of a live
    TrainJob (immutable, CEL self == oldSelf, pkg/apis/trainer/v1alpha1/trainjob_types.go)."""
    patch = container_patch("node", "initContainers", loader(resources))
    tj = trainjob("a", "loader-runtime", [patch], "team-a")
    out = render([runtime(), tj])
    assert out.code == 0, out.results
    (derived,) = out.of_kind("TrainingRuntime")
    assert refs(out)["a"]["name"] == derived["metadata"]["name"] != "loader-runtime"
    assert render(out.items).items == out.items


@pytest.mark.parametrize("base", ["4Gi", "16Gi"], ids=["base shrinks", "base grows"])
def test_an_override_equal_to_the_runtime_keeps_its_ref_when_the_base_moves(base: str) -> None:
    """The same TrainJob text gives the same runtimeRef at every base version, whether the base is
    rendered from the source or the output written back (kpt); nothing warns: nothing changed."""
    tj = job("a", memory("8192Mi"))  # the runtime's 8Gi
    out = render([runtime(), tj])
    assert len(out.of_kind("TrainingRuntime")) == 1
    edited = copy.deepcopy(out.items)
    container_of(base_of(edited), "node", "initContainers", "data-loader")["resources"] = memory(base)
    again = render(edited)
    assert again.code == 0, again.results
    fresh = render([runtime(resources=memory(base)), tj])
    assert refs(again) == refs(out) == refs(fresh)
    assert [r for r in again.results + fresh.results if r.get("severity") == "warning"] == []
    (derived,) = again.of_kind("TrainingRuntime")
    assert container_of(derived, "node", "initContainers", "data-loader")["resources"] == memory("8192Mi")
    assert render(again.items).items == again.items, "and that is a fixed point"


def test_a_container_whose_patch_says_nothing_is_not_touched_nor_named() -> None:
    metrics = {"name": "metrics", "resources": {}}
    patch = container_patch("node", "initContainers", loader(memory("64Gi")))
    patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "initContainers"
    ].append(metrics)
    with_empty = render([runtime(), trainjob("a", "loader-runtime", [patch], "team-a")])
    without = render([runtime(), job("a")])
    assert refs(with_empty) == refs(without)
    assert with_empty.of_kind("TrainingRuntime") == without.of_kind("TrainingRuntime")


# Metadata hygiene


def test_a_derived_runtime_drops_ownership_and_deploy_metadata_and_says_it_is_derived() -> None:
    labels = {
        "trainer.kubeflow.org/webhook-validation": "disabled",
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/part-of": "platform",
        "argocd.argoproj.io/instance": "platform",
        # charts/kubeflow-trainer/templates/runtimes/installer-job.yaml and cleanup-job.yaml delete
        # every ClusterTrainingRuntime so labelled that is not in their manifest
        "trainer.kubeflow.org/managed-by": "runtimes-installer",
        "app.kubernetes.io/instance": "platform",  # Argo CD's default tracking label
    }
    annotations = {
        "meta.helm.sh/release-name": "trainer",
        "meta.helm.sh/release-namespace": "kubeflow",
        "helm.sh/hook": "post-install",
        "argocd.argoproj.io/tracking-id": "platform:trainer.kubeflow.org/ClusterTrainingRuntime:/loader-runtime",
        "argocd.argoproj.io/sync-options": "Prune=false",
        "argocd.argoproj.io/sync-wave": "-10",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "config.kubernetes.io/depends-on": "apps/namespaces/kubeflow/Deployment/trainer",
        "team.example.com/owner": "platform",
    }
    out = render([runtime(labels=labels, metadata={"annotations": annotations}), job("a")])
    (derived,) = out.of_kind("TrainingRuntime")
    assert derived["metadata"]["labels"] == {
        "trainer.kubeflow.org/framework": "torch",
        "app.kubernetes.io/part-of": "platform",
        PREFIX + "derived": "true",
    }
    kept = {k: v for k, v in derived["metadata"]["annotations"].items() if not k.startswith(PREFIX)}
    assert kept == {"team.example.com/owner": "platform", WAVE: "-1"}
    assert base_of(out.items)["metadata"]["labels"] == runtime(labels=labels)["metadata"]["labels"], (
        "the base is untouched"
    )


def test_another_manager_of_the_label_is_kept() -> None:
    out = render([runtime(labels={"app.kubernetes.io/managed-by": "kustomize"}), job("a")])
    assert out.of_kind("TrainingRuntime")[0]["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kustomize"


# The old prefix


def old_output() -> list[dict[str, Any]]:
    """What earlier versions wrote: the old prefix, and a name that hashed the base's spec."""
    out = render([runtime(), job("a"), job("b", memory("32Gi"))])
    items = copy.deepcopy(out.items)
    renamed = {}
    for item in items:
        annotations = item["metadata"].get("annotations", {})
        for key in [k for k in annotations if k.startswith(PREFIX)]:
            if key.endswith("name-scheme"):
                annotations.pop(key)
            else:
                annotations[OLD_PREFIX + key.removeprefix(PREFIX)] = annotations.pop(key)
        annotations.pop(DEPENDS_ON, None)
        annotations.pop(WAVE, None)
        item["metadata"].get("labels", {}).pop(PREFIX + "derived", None)
        if item["kind"] == "TrainingRuntime":
            name = item["metadata"]["name"]
            renamed[name] = name[:-10] + name[-10:][::-1]  # another hash
    for item in items:
        ref = item.get("spec", {}).get("runtimeRef")
        if ref is not None and ref["name"] in renamed:
            ref["name"] = renamed[ref["name"]]
        if item["kind"] == "TrainingRuntime":
            item["metadata"]["name"] = renamed[item["metadata"]["name"]]
    return items


def test_output_with_the_old_prefix_re_renders_to_what_a_fresh_render_gives() -> None:
    fresh = render([runtime(), job("a"), job("b", memory("32Gi"))])
    again = render(old_output())
    assert again.code == 0, again.results
    assert again.items == fresh.items
    assert OLD_PREFIX not in again.raw.decode().split("results:")[0]


# Orphans


def test_a_derived_runtime_stays_while_any_trainjob_of_the_bundle_uses_it() -> None:
    once = render([runtime(), job("a"), job("b")])
    without_b = [i for i in once.items if i["metadata"]["name"] != "b"]
    again = render(without_b)
    assert len(again.of_kind("TrainingRuntime")) == 1
    assert refs(again)["a"] == refs(once)["a"]
    none_left = render([i for i in without_b if i["metadata"]["name"] != "a"])
    assert none_left.of_kind("TrainingRuntime") == [], "no TrainJob of the bundle uses it: dropped"
