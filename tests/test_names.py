"""Derived runtime names: what they hash (materialize.derived_name, scheme 1) and the names they give.

``TrainJob.spec.runtimeRef`` is immutable upstream (CEL ``self == oldSelf`` in
pkg/apis/trainer/v1alpha1/trainjob_types.go): a release that renames a derived runtime makes every
live TrainJob using it unappliable. ``PINNED`` fails on any such change; a deliberate one bumps
``NAME_SCHEME_VERSION`` and says so in docs/lifecycle.md.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from typing import Any

import pytest
from trainjob_resources.derive.materialize import NAME_SCHEME_VERSION, canonical_quantity, derived_name
from trainjob_resources.krm.resource_list import Item
from trainjob_resources.yamltext import yamlnodes as yn

from tests.support import render
from tests.test_rerender import RUNTIME, job

LOADER_64 = {
    "node/initContainers/data-loader": {"limits": {"memory": "68719476736"}, "requests": {"memory": "68719476736"}}
}
TWO = {
    "node/containers/metrics": {"requests": {"cpu": "5e-1"}},
    "node/initContainers/data-loader": {"limits": {"memory": "68719476736"}, "requests": {"cpu": None}},
}


def base(kind: str, name: str, namespace: str = "", spec: Any = None) -> Item:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    value = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": metadata, "spec": spec or {}}
    return Item(yn.from_python(value))


# (base kind, base namespace, base name, derived kind, derived namespace, overrides) -> name
PINNED: list[tuple[tuple[str, str, str, str, str, dict[str, Any]], str]] = [
    (
        ("ClusterTrainingRuntime", "", "pytorch-distributed", "TrainingRuntime", "team-a", LOADER_64),
        "pytorch-distributed-6fe0a46dc9",
    ),
    (
        ("ClusterTrainingRuntime", "", "pytorch-distributed", "TrainingRuntime", "team-b", LOADER_64),
        "pytorch-distributed-9e71384a98",
    ),
    (
        ("ClusterTrainingRuntime", "", "pytorch-distributed", "ClusterTrainingRuntime", "", LOADER_64),
        "pytorch-distributed-c4cba60cb7",
    ),
    (
        ("TrainingRuntime", "team-a", "pytorch-distributed", "TrainingRuntime", "team-a", LOADER_64),
        "pytorch-distributed-b858ad02df",
    ),
    (
        ("ClusterTrainingRuntime", "", "pytorch-distributed", "TrainingRuntime", "team-a", TWO),
        "pytorch-distributed-ba655a68ad",
    ),
    (("ClusterTrainingRuntime", "", "a" * 63, "TrainingRuntime", "team-a", LOADER_64), "a" * 52 + "-243a8c2725"),
]


@pytest.mark.parametrize(("row", "name"), PINNED)
def test_pinned_names(row: tuple[str, str, str, str, str, dict[str, Any]], name: str) -> None:
    base_kind, base_namespace, base_name, kind, namespace, overrides = row
    assert NAME_SCHEME_VERSION == "1"
    assert derived_name(base(base_kind, base_name, base_namespace), kind, namespace, overrides) == name
    assert len(name) <= 63


def test_the_scheme_is_what_the_readme_says() -> None:
    """Scheme 1, computed from its description: SHA-256 of canonical JSON (keys sorted, no spaces)."""
    payload = {
        "scheme": "1",
        "base": {"kind": "ClusterTrainingRuntime", "namespace": "", "name": "pytorch-distributed"},
        "kind": "TrainingRuntime",
        "namespace": "team-a",
        "overrides": LOADER_64,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    assert PINNED[0][1] == "pytorch-distributed-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def test_a_cluster_runtime_is_named_without_the_namespace_it_was_stamped_with() -> None:
    stamped = base("ClusterTrainingRuntime", "pytorch-distributed", "ml-prod")
    plain = base("ClusterTrainingRuntime", "pytorch-distributed")
    assert derived_name(stamped, "TrainingRuntime", "team-a", LOADER_64) == derived_name(
        plain, "TrainingRuntime", "team-a", LOADER_64
    )
    assert derived_name(plain, "ClusterTrainingRuntime", "team-a", LOADER_64) == derived_name(
        plain, "ClusterTrainingRuntime", "team-b", LOADER_64
    ), "a cluster-scoped derived runtime has no namespace to hash"


def test_the_base_content_is_not_hashed() -> None:
    before = base("ClusterTrainingRuntime", "torch", spec={"mlPolicy": {"numNodes": 1}})
    after = base("ClusterTrainingRuntime", "torch", spec={"mlPolicy": {"numNodes": 4}, "template": {}})
    assert derived_name(before, "TrainingRuntime", "a", LOADER_64) == derived_name(
        after, "TrainingRuntime", "a", LOADER_64
    )


@pytest.mark.parametrize(
    ("spellings", "value"),
    [
        (["64Gi", "65536Mi", "68719476736", 68719476736, "67108864Ki", "68719476736000m"], "68719476736"),
        (["500m", "0.5", 0.5, "500000u"], "5e-1"),
        (["1", 1, "1000m", "1.0", "0.001k"], "1"),
        (["1k", "1000", "1e3", "1E3"], "1e3"),
        (["0", "0Gi", 0], "0"),
    ],
)
def test_equal_quantities_are_one_canonical_value(spellings: list[Any], value: str) -> None:
    assert {canonical_quantity(s) for s in spellings} == {value}


def refs(out: Any) -> dict[str, str]:
    return {t["metadata"]["name"]: t["spec"]["runtimeRef"]["name"] for t in out.of_kind("TrainJob")}


def test_a_rendered_bundle_gets_the_pinned_names() -> None:
    out = render([RUNTIME, job("a", "64Gi"), job("b", "64Gi", "team-b")])
    assert refs(out) == {"a": "loader-runtime-e87d68d5e3", "b": "loader-runtime-36de48985a"}


def test_equal_overrides_in_three_spellings_share_one_runtime() -> None:
    out = render([RUNTIME, job("a", "64Gi"), job("b", "65536Mi"), job("c", 68719476736)])
    assert out.code == 0, out.results
    assert len(set(refs(out).values())) == 1
    (derived,) = out.of_kind("TrainingRuntime")
    loader = derived["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert loader["initContainers"][0]["resources"] == {"limits": {"memory": "64Gi"}, "requests": {"memory": "64Gi"}}, (
        "written with the spelling that sorts first, whichever TrainJob comes first"
    )


@pytest.mark.slow
def test_the_order_of_the_items_changes_no_name_and_no_derived_runtime() -> None:
    jobs = [job("a", "64Gi"), job("b", "65536Mi"), job("c", "32Gi"), job("d", "64Gi", "team-b")]
    outputs = []
    for order in itertools.permutations([RUNTIME, *jobs]):
        out = render(copy.deepcopy(list(order)))
        assert out.code == 0
        derived = sorted(
            out.of_kind("TrainingRuntime"), key=lambda d: (d["metadata"]["namespace"], d["metadata"]["name"])
        )
        outputs.append((refs(out), derived))
        if len(outputs) > 24:
            break
    assert all(o == outputs[0] for o in outputs)


def test_namespace_and_kind_separate_names() -> None:
    out = render([RUNTIME, job("a", "64Gi"), job("b", "64Gi", "team-b")])
    assert len(set(refs(out).values())) == 2
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}}
    cluster = render(
        [RUNTIME, job("a", "64Gi"), job("b", "64Gi", "team-b")],
        {**config, "data": {"derivedRuntimeKind": "ClusterTrainingRuntime"}},
    )
    assert len(set(refs(cluster).values())) == 1
    assert set(refs(cluster).values()).isdisjoint(refs(out).values())
