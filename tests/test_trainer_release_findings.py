"""``trainer-version``'s decision without a cluster (live/trainer_release.py): the views of one bundle under
two releases, compared; an error where the pods' resources differ, a warning where they do not. The same on
the control planes, with the JobSets Trainer builds: tests/cluster/test_check_release.py."""

from __future__ import annotations

import copy
from typing import Any

from trainjob_resources.cli.explain import explain_item
from trainjob_resources.krm.resource_list import Item
from trainjob_resources.live.trainer_release import Followed, differences, sync_release, trainer_version
from trainjob_resources.options.config import parse_config
from trainjob_resources.report.explain import TrainJobPods
from trainjob_resources.resolve.bundle import index
from trainjob_resources.yamltext.yamlnodes import from_python

from tests.test_platform_options import CPU_ONLY_JOB, GPU_RUNTIME

READ = "ConfigMap kubeflow-system/kubeflow-trainer-public data.kubeflow_trainer_version"


def views(trainjob: dict[str, Any], version: str) -> dict[str, TrainJobPods]:
    bundle = index([Item(from_python(o)) for o in (GPU_RUNTIME, trainjob)])
    config = parse_config({"apiVersion": "v1", "kind": "ConfigMap", "data": {"trainerVersion": version}})
    out = {}
    for item in bundle.trainjobs:
        explained = explain_item(item, bundle, config)
        assert explained is not None
        out[f"{item.namespace}/{item.name}"] = explained[0]
    return out


def test_resources_per_node_over_64_gpus_differs_between_the_releases() -> None:
    found = differences(views(CPU_ONLY_JOB, "v2.2.0"), views(CPU_ONLY_JOB, "v2.3.0"))
    said = "nvidia.com/gpu of container 'node' of replicated job 'node': 64 on the cluster, none in the render"
    assert found == {"team-a/greedy": [f"requests.{said}", f"limits.{said}"]}
    plain = copy.deepcopy(CPU_ONLY_JOB)
    del plain["spec"]["trainer"]
    assert differences(views(plain, "v2.2.0"), views(plain, "v2.3.0")) == {}


def test_an_error_where_the_pods_differ_else_a_warning_naming_the_value_to_set() -> None:
    found = {"team-a/greedy": ["limits.nvidia.com/gpu of container 'node' of replicated job 'node': 64 ..."]}
    [error] = trainer_version("v2.3.0", READ, Followed("v2.2.0", True, found))
    assert (error.severity, error.object) == ("error", "TrainJob/team-a/greedy")
    assert "the render follows Trainer v2.2.0 (trainerVersion)" in error.message
    assert "set trainerVersion: v2.3.0 in the config" in error.message
    [warning] = trainer_version("v2.3.0", READ, Followed("v2.2.0", True))
    assert warning.severity == "warning" and "set trainerVersion: v2.3.0" in warning.message
    assert trainer_version("v2.3.0", READ, Followed("v2.3", True)) == [], "the same release"
    assert trainer_version("v2.2.1", READ, Followed("v2.2.1", True)) == []


def test_unset_check_follows_the_cluster_but_the_sync_renders_the_default() -> None:
    unset = Followed("v2.2.1", False)  # check wrote the cluster's release in; the config did not set it
    assert unset.rendered == "v2.3.0" and sync_release(unset, "v2.2.1") == ("v2.3.0", "v2.2.1")
    [warning] = trainer_version("v2.2.1", READ, unset)
    assert warning.severity == "warning"
    assert "the render follows Trainer v2.3.0 (the default: trainerVersion is unset)" in warning.message
    assert "check followed the cluster's (v2.2.1), but render, without a cluster, follows v2.3.0" in warning.message
    assert "leave it unset" not in warning.message
    assert sync_release(Followed("v2.3.0", False), "v2.3.0") is None
    assert sync_release(Followed("v2.3.0", False), None) is None, "a release that cannot be told: a warning only"
    [unknown] = trainer_version(None, "nothing read", Followed("v2.3.0", False))
    assert unknown.severity == "warning" and "could not tell" in unknown.message
    [unsupported] = trainer_version("v2.1.0", READ, Followed("v2.3.0", False))
    assert unsupported.severity == "warning" and "does not support" in unsupported.message
