"""Team repositories as they are: runtimes the platform installs in the cluster, runtimes renamed
by kustomize, misspelled runtime names."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from trainjob_resources.derive.provenance import RUNTIME_REF

from tests.support import container_patch, render, trainer_runtime, trainjob

SIDECAR = {"name": "data-loader", "image": "loader", "restartPolicy": "Always"}
SIDECAR["resources"] = {"limits": {"memory": "8Gi"}}
BIGGER = {"name": "data-loader", "resources": {"limits": {"memory": "64Gi"}, "requests": {"memory": "64Gi"}}}
LOCAL_CONFIG = {"config.kubernetes.io/local-config": "true"}


def sized(name: str = "sized", runtime: str = "torch") -> dict[str, Any]:
    return trainjob(name, runtime, [container_patch("node", "initContainers", BIGGER)])


def plain(name: str = "plain", runtime: str = "torch") -> dict[str, Any]:
    env = {"name": "data-loader", "env": [{"name": "SHARDS", "value": "8"}]}
    return trainjob(name, runtime, [container_patch("node", "initContainers", env)])


def renamed(runtime: dict[str, Any], new_name: str, key: str = "internal.config.kubernetes.io/previousNames") -> Any:
    """``runtime`` as kustomize's namePrefix (or nameSuffix) leaves it: a new name, the old ones recorded,
    and the prefix or suffix it added (as kustomize v5.8.2 gives an exec function: tests/test_kustomize_renames.py)."""
    out = copy.deepcopy(runtime)
    old = out["metadata"]["name"]
    out["metadata"]["name"] = new_name
    kinds = f"{out['kind']},{out['kind']}"
    out["metadata"]["annotations"] = {key: f"{old},{old}", key.replace("Names", "Kinds"): kinds}
    prefix, _, suffix = new_name.partition(old)
    for affix, name in ((prefix, "prefixes"), (suffix, "suffixes")):
        if affix:
            out["metadata"]["annotations"][key.replace("previousNames", name)] = affix
    return out


def same_build(trainjob: dict[str, Any], runtime: dict[str, Any]) -> dict[str, Any]:
    """``trainjob`` renamed by the kustomization that renamed ``runtime``: the same prefixes and suffixes recorded."""
    out = copy.deepcopy(trainjob)
    affixes = {k: v for k, v in runtime["metadata"]["annotations"].items() if k.endswith(("/prefixes", "/suffixes"))}
    out["metadata"].setdefault("annotations", {}).update(affixes)
    return out


def test_a_trainjob_without_resources_passes_through_when_its_runtime_is_in_the_cluster() -> None:
    job = plain()
    rendered = render([job])
    assert rendered.code == 0
    assert rendered.items == [job]
    (result,) = rendered.results
    assert result["severity"] == "info"
    assert "is not in the bundle" in result["message"] and "passed through unchanged" in result["message"]
    assert result["field"] == {"path": "spec.runtimeRef.name", "currentValue": "torch"}


def test_a_trainjob_with_resources_still_needs_its_runtime_and_is_told_how_to_supply_it() -> None:
    job = sized()
    rendered = render([job, plain()])
    assert rendered.code == 1
    assert job in rendered.items
    (error,) = rendered.errors()
    for way in ("kustomization or package", 'config.kubernetes.io/local-config: "true"', "--runtimes PATH"):
        assert way in error["message"]


ENV = [{"name": "NCCL_DEBUG", "value": "INFO"}]


@pytest.mark.parametrize("container", ["node", "dataset-initializer", "model-initializer"])
def test_env_for_a_reserved_container_is_refused_without_the_runtime(container: str) -> None:
    """Upstream's webhook refuses it by the container's name alone (jobset.go Validate): no runtime needed."""
    job = trainjob("envs", "torch", [container_patch(container, "containers", {"name": container, "env": ENV})])
    rendered = render([job, plain()])
    assert rendered.code == 1
    assert job in rendered.items
    (error,) = rendered.errors()
    assert error["resourceRef"]["name"] == "envs"
    assert error["field"]["path"].endswith(".template.spec.template.spec.containers[0].env")
    assert "must not set env for the node" in error["message"] and "jobset.go" in error["message"]
    said = [r for r in rendered.results if r["resourceRef"]["name"] == "envs"]
    assert said == [error], "no 'passed through unchanged' beside the error"


def test_without_the_runtime_an_init_container_or_an_ordinary_container_may_set_env() -> None:
    patches = [
        container_patch("node", "initContainers", {"name": "node", "env": ENV}),
        container_patch("node", "containers", {"name": "metrics", "env": ENV}, manager="user.example.com/other"),
    ]
    rendered = render([trainjob("envs", "torch", patches)])
    assert rendered.code == 0
    assert [r["severity"] for r in rendered.results] == ["info"]


def test_a_bad_or_repeated_manager_is_refused_without_the_runtime() -> None:
    env = {"name": "data-loader", "env": ENV}
    patches = [container_patch("node", "initContainers", env, manager=m) for m in ("Not_A_Domain", "a.io/x", "a.io/x")]
    rendered = render([trainjob("managers", "torch", patches)])
    assert rendered.code == 1
    # The CRD's list keyed by manager (trainjob-schema) first, then upstream's webhook's check (managers).
    assert [(e["field"]["path"], e["field"].get("currentValue")) for e in rendered.errors()] == [
        ("spec.runtimePatches[2].manager", "a.io/x"),
        ("spec.runtimePatches[0].manager", "Not_A_Domain"),
    ]


def test_the_trainjob_crds_rules_apply_without_the_runtime() -> None:
    job = plain(name="Not_A_Name")
    rendered = render([job])
    assert rendered.code == 1
    (error,) = rendered.errors()
    assert error["field"]["path"] == "metadata.name" and "RFC 1035" in error["message"]


def other_group(job: dict[str, Any]) -> dict[str, Any]:
    job["spec"]["runtimeRef"]["apiGroup"] = "example.com"
    return job


def test_a_runtime_of_another_api_group_is_left_alone_with_a_warning() -> None:
    job = other_group(plain())
    rendered = render([job])
    assert rendered.code == 0
    assert rendered.items == [job]
    (warning,) = rendered.results
    assert warning["severity"] == "warning" and warning["field"]["path"] == "spec.runtimeRef.apiGroup"
    assert "unsupported runtime" in warning["message"]


@pytest.mark.parametrize("resources", [BIGGER["resources"], None], ids=["sized", "null"])
def test_resources_for_a_runtime_of_another_api_group_are_refused_at_their_field(resources: Any) -> None:
    """No runtime can be derived, and v2.3.0's API server refuses resources in a ContainerPatch."""
    patch = container_patch("node", "initContainers", {"name": "data-loader", "resources": resources})
    job = other_group(trainjob("elsewhere", "torch", [patch]))
    rendered = render([trainer_runtime("torch", [SIDECAR]), job])
    assert rendered.code == 1
    assert job in rendered.items
    assert rendered.of_kind("ClusterTrainingRuntime") == [trainer_runtime("torch", [SIDECAR])], "nothing derived"
    (error,) = rendered.errors()
    path = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
    assert error["field"]["path"] == f"{path}.template.spec.template.spec.initContainers[0].resources"
    assert "not a Trainer runtime" in error["message"] and "ContainerPatch" in error["message"]


def test_a_local_config_runtime_is_read_and_the_derived_runtime_is_not_local_config() -> None:
    runtime = trainer_runtime("torch", [SIDECAR])
    runtime["metadata"]["annotations"] = dict(LOCAL_CONFIG)
    rendered = render([runtime, sized()])
    assert rendered.code == 0, rendered.errors()
    derived = [o for o in rendered.items if o["kind"] == "TrainingRuntime"]
    assert len(derived) == 1
    assert "config.kubernetes.io/local-config" not in derived[0]["metadata"].get("annotations", {})
    assert runtime in rendered.items, "the reference runtime passes through, still local-config"


def test_a_misspelled_runtime_name_gets_a_did_you_mean() -> None:
    runtime = trainer_runtime("torch-distributed", [SIDECAR])
    with_resources = render([runtime, sized(runtime="torch-distrbuted")])
    assert "Did you mean 'torch-distributed'?" in with_resources.errors()[0]["message"]
    without = render([runtime, plain(runtime="torch-distrbuted")])
    assert without.code == 0
    (warning,) = [r for r in without.results if r["severity"] == "warning"]
    assert "Did you mean 'torch-distributed'?" in warning["message"]
    unrelated = render([runtime, sized(runtime="jax")])
    assert "Did you mean" not in unrelated.errors()[0]["message"]


def test_a_runtime_renamed_by_kustomize_is_found_by_its_previous_name_and_the_ref_follows() -> None:
    runtime = renamed(trainer_runtime("torch", [SIDECAR]), "team-a-torch")
    rendered = render([runtime, same_build(sized(), runtime), same_build(plain(), runtime)])
    assert rendered.code == 0, rendered.errors()
    jobs = {o["metadata"]["name"]: o for o in rendered.items if o["kind"] == "TrainJob"}
    assert jobs["plain"]["spec"]["runtimeRef"]["name"] == "team-a-torch"
    assert jobs["sized"]["spec"]["runtimeRef"]["name"].startswith("team-a-torch-")
    derived = [o for o in rendered.items if o["kind"] == "TrainingRuntime"]
    assert [d["metadata"]["name"] for d in derived] == [jobs["sized"]["spec"]["runtimeRef"]["name"]]
    recorded = jobs["sized"]["metadata"]["annotations"][RUNTIME_REF]
    assert '"name":"team-a-torch"' in recorded, "a re-render resolves the new name directly"


@pytest.mark.parametrize("mode", ["materialize", "native"])
def test_a_renamed_local_config_runtime_is_resolved_but_the_ref_keeps_the_clusters_name(mode: str) -> None:
    """A local-config runtime is never emitted: the cluster has it under its previous name, the one
    the ref says (kustomize's previousNames); pointing the ref at the prefixed name is refused live."""
    runtime = renamed(trainer_runtime("torch", [SIDECAR]), "team-a-torch")
    runtime["metadata"]["annotations"].update(LOCAL_CONFIG)
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"mode": mode}}
    rendered = render([runtime, same_build(sized(), runtime), same_build(plain(), runtime)], config)
    assert rendered.code == 0, rendered.errors()
    jobs = {o["metadata"]["name"]: o for o in rendered.items if o["kind"] == "TrainJob"}
    assert jobs["plain"]["spec"]["runtimeRef"] == {"name": "torch"}
    if mode == "native":
        assert jobs["sized"]["spec"]["runtimeRef"] == {"name": "torch"}
    else:
        assert '"name":"torch"' in jobs["sized"]["metadata"]["annotations"][RUNTIME_REF]
    assert render(rendered.items, config).items == rendered.items


def test_the_legacy_previous_names_annotation_works_too() -> None:
    runtime = renamed(trainer_runtime("torch", [SIDECAR]), "torch-v2", "config.kubernetes.io/previousNames")
    rendered = render([runtime, same_build(plain(), runtime)])
    assert rendered.code == 0
    (job,) = [o for o in rendered.items if o["kind"] == "TrainJob"]
    assert job["spec"]["runtimeRef"]["name"] == "torch-v2"


def test_a_name_kustomize_gave_two_runtimes_is_ambiguous() -> None:
    base = trainer_runtime("torch", [SIDECAR])
    rendered = render([renamed(base, "a-torch"), renamed(base, "b-torch"), sized()])
    assert rendered.code == 1
    assert "renamed by kustomize to several runtimes ('a-torch', 'b-torch')" in rendered.errors()[0]["message"]


def test_a_previous_name_of_another_kind_does_not_count() -> None:
    runtime = renamed(trainer_runtime("torch", [SIDECAR]), "team-a-torch")
    runtime["metadata"]["annotations"]["internal.config.kubernetes.io/previousKinds"] = "ConfigMap,ConfigMap"
    rendered = render([runtime, sized()])
    assert rendered.code == 1
    assert "is not in the bundle" in rendered.errors()[0]["message"]


def test_native_mode_follows_a_renamed_runtime_too() -> None:
    runtime = renamed(trainer_runtime("torch", [SIDECAR]), "team-a-torch")
    native = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"mode": "native"}}
    rendered = render([runtime, same_build(sized(), runtime)], native)
    assert rendered.code == 0, rendered.errors()
    (job,) = [o for o in rendered.items if o["kind"] == "TrainJob"]
    assert job["spec"]["runtimeRef"]["name"] == "team-a-torch"
    assert job["spec"]["runtimePatches"] == sized()["spec"]["runtimePatches"], "native keeps the patches"


def test_kustomize_reads_a_local_config_runtime_and_emits_only_the_derived_one(kubectl: str, tmp_path: Path) -> None:
    """The container example with its runtime marked as the platform's (local-config), built by the
    real kustomize: the runtime is read, not emitted; the derived runtime and the TrainJob are."""
    import os
    import shutil
    import subprocess

    from tests.examples import EXAMPLES, documents, write_docker_shim

    copy = tmp_path / "example"
    shutil.copytree(EXAMPLES / "container", copy)
    runtime = copy / "runtime.yaml"
    text = runtime.read_text()
    runtime.write_text(
        text.replace("metadata:\n", 'metadata:\n  annotations:\n    config.kubernetes.io/local-config: "true"\n', 1)
    )
    write_docker_shim(tmp_path / "bin", tmp_path / "docker.log")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(copy)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    objects = documents(done.stdout)
    assert sorted(o["kind"] for o in objects) == ["TrainJob", "TrainingRuntime"]
    (job,) = [o for o in objects if o["kind"] == "TrainJob"]
    (derived,) = [o for o in objects if o["kind"] == "TrainingRuntime"]
    assert job["spec"]["runtimeRef"]["name"] == derived["metadata"]["name"]
    assert "config.kubernetes.io/local-config" not in derived["metadata"].get("annotations", {})
