"""The Kueue release ``check`` follows (live/kueue_release.py) and the pod sets ``queue-exceeded`` sizes by
it, without a cluster; tests/cluster/test_kueue_release.py holds both to Kueue v0.17.0 and v0.19.2 run."""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.kube.quantity import parse_quantity
from trainjob_resources.live.kueue_release import CRD, VERSION_LABEL, KueueRelease, kueue_release, pinned
from trainjob_resources.live.queues import exceeded, kueue_pod_requests, release_followed

from tests.kit import build
from tests.test_queues import kueue, runtime, trainjob, views


def crd(labels: dict[str, str] | None) -> dict[str, Any]:
    return {"metadata": {"name": CRD, **({"labels": labels} if labels is not None else {})}}


@pytest.mark.parametrize(
    ("label", "served", "version", "replaces"),
    [
        ("v0.17.0", ("v1beta2", "v1beta1"), "v0.17.0", True),
        ("v0.19.2", ("v1beta2", "v1beta1"), "v0.19.2", True),
        ("0.20.0", ("v1beta2",), "v0.20.0", False),
        # The label names the release even where the served versions would say otherwise (a v0.20 that
        # still serves v1beta1 is Kueue's main between PR 14504 and PR 14558, no release).
        ("v0.20.1", ("v1beta2", "v1beta1"), "v0.20.1", False),
        ("v0.21.0", ("v1beta2",), "v0.21.0", False),
        (None, ("v1beta2", "v1beta1"), "v0.19 or older", True),
        (None, ("v1beta2",), "v0.20 or later", False),
        ("latest", ("v1beta2",), "v0.20 or later", False),
        ("v1.2.3", ("v1beta2", "v1beta1"), "v0.19 or older", True),
    ],
)
def test_the_release_from_the_crds_label_else_from_the_served_api_versions(
    label: str | None, served: tuple[str, ...], version: str, replaces: bool
) -> None:
    release = kueue_release(crd(None if label is None else {VERSION_LABEL: label}), served)
    assert (release.version, release.per_node_replaces) == (version, replaces)
    said = release.describe()
    assert said.startswith(f"Kueue {version} (") and ("replaces" if replaces else "is merged onto") in said
    if label is None:
        assert f"kueue.x-k8s.io serves {', '.join(sorted(served))}" in release.read
    assert kueue_release(None, served).per_node_replaces == ("v1beta1" in served)


def test_each_release_names_the_trainer_its_go_mod_builds_in() -> None:
    trainers = {v: kueue_release(crd({VERSION_LABEL: v}), ()).trainer for v in ("v0.17.0", "v0.19.2", "v0.20.0")}
    assert trainers == {"v0.17.0": "v2.2.0", "v0.19.2": "v2.2.1", "v0.20.0": "v2.3.0"}
    assert kueue_release(None, ("v1beta2", "v1beta1")).trainer == "v2.2 or older"
    assert kueue_release(None, ("v1beta2",)).trainer == "v2.3.0 or later"


def per_node(name: str) -> dict[str, Any]:
    job = trainjob(name)
    job["spec"]["trainer"] = {"resourcesPerNode": {"requests": {"cpu": "3"}}}
    return job


def test_resources_per_node_replaces_through_v0_19_and_is_merged_from_v0_20() -> None:
    # The runtime's node: 2 cpu, 4Gi. Trainer v2.3.0 (explain's default) merges: 3 cpu, 4Gi.
    [job] = views(runtime(), per_node("a"))["team/a"].jobs
    merged = {"cpu": parse_quantity("3"), "memory": parse_quantity("4Gi")}
    assert kueue_pod_requests(job, per_node_replaces=False) == merged
    assert kueue_pod_requests(job, per_node_replaces=True) == {"cpu": parse_quantity("3")}


def test_queue_exceeded_sizes_by_the_release_and_kueue_release_names_it() -> None:
    pods = views(runtime(), per_node("a"))
    queues = kueue([("default", "100", "6Gi")])  # 2 pods x 4Gi only where the runtime's memory is kept
    queues.release = KueueRelease("v0.20.0", 20, "test")
    [found] = exceeded([per_node("a")], pods, queues)
    assert "needs memory 8Gi where flavor default has 6Gi left" in found.message
    queues.release = KueueRelease("v0.19.2", 19, "test")
    assert exceeded([per_node("a")], pods, queues) == []
    [named] = release_followed([per_node("a")], pods, queues)
    assert (named.code, named.severity, named.object) == ("kueue-release", "info", f"CustomResourceDefinition/{CRD}")
    assert named.message.startswith("Kueue v0.19.2 (test) builds a TrainJob's pod sets with Trainer v2.2.1")
    unqueued = build.trainjob("b", "rt", namespace="team")
    assert release_followed([unqueued], views(runtime(), unqueued), queues) == []


def test_a_pinned_release_is_the_callers_word_and_a_malformed_one_is_refused() -> None:
    release = pinned("0.20.1")
    assert (release.version, release.per_node_replaces, release.read) == ("v0.20.1", False, "--kueue-version")
    for bad in ("v0.20", "latest", "v1.0.0", ""):
        with pytest.raises(ValueError, match="not a Kueue release"):
            pinned(bad)
