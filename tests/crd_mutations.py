"""Valid Trainer objects and mutations of them, for the differential test of the CRD validator
(tests/cluster/test_crd_differential.py): an unknown field added, a value of the wrong type, outside an
enum or a bound, a list entry repeated, a required field removed, a second ML policy (CEL).

A mutation is plain JSON-able data, so that a failing example is kept as written, as a regression:
``["add", path, key, value]`` adds ``key`` to the map at ``path``; ``["set", path, value]`` replaces
the value at ``path``; ``["dup", path]`` appends a copy of the list entry at ``path``; ``["del", path]``
removes the key at ``path``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from tests.kit import build
from tests.support import load_fixture

Path = list[str | int]
Mutation = list[Any]

RUNTIME_BASES = ("torch-plain", "torchtune", "mpi-launcher-as-node", "torch-data-cache")


def _trainjob_base() -> dict[str, Any]:
    loader = {"name": "data-loader", "env": [{"name": "A", "value": "1"}]}
    patches = [build.container_patch("node", "initContainers", loader, manager="team.example.com/sizing")]
    return build.trainjob(
        "probe",
        "probe-runtime",  # created for real by the test (the TrainJob webhook looks it up)
        patches,
        namespace="default",
        trainer={"numNodes": 2, "env": [{"name": "B", "value": "2"}], "resourcesPerNode": {"limits": {"cpu": "2"}}},
        initializer={"dataset": {"storageUri": "hf://org/ds"}},
        managedBy="trainer.kubeflow.org/trainjob-controller",
        activeDeadlineSeconds=600,
    )


def base(name: str) -> dict[str, Any]:
    """A valid object: a runtime fixture (tests/testdata/runtimes) by name, or ``trainjob``."""
    if name == "trainjob":
        return _trainjob_base()
    obj = load_fixture(name)
    obj["metadata"] = {"name": "probe"}
    return obj


def _walk(value: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _walk(child, [*path, key])
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _walk(child, [*path, i])


def places(obj: dict[str, Any]) -> list[tuple[Path, Any]]:
    """Every place below ``spec`` (and a TrainJob's ``metadata.name``) with its value."""
    out = list(_walk(obj["spec"], ["spec"]))
    if obj["kind"] == "TrainJob":
        out.append((["metadata", "name"], obj["metadata"]["name"]))
    return out


def apply(obj: dict[str, Any], mutations: list[Mutation]) -> dict[str, Any]:
    """``obj`` with ``mutations`` applied (a copy); one whose place is gone does nothing."""
    out = copy.deepcopy(obj)
    for op, path, *rest in mutations:
        parent: Any = out
        try:
            for part in path[:-1] if op != "add" else path:
                parent = parent[part]
        except (KeyError, IndexError, TypeError):
            continue
        last = path[-1] if path and op != "add" else None
        if op == "add" and isinstance(parent, dict):
            parent[rest[0]] = copy.deepcopy(rest[1])
        elif op == "set" and isinstance(parent, (dict, list)):
            if isinstance(parent, dict) or (isinstance(last, int) and last < len(parent)):
                parent[last] = copy.deepcopy(rest[0])
        elif op == "del" and isinstance(parent, dict):
            parent.pop(last, None)
        elif op == "dup" and isinstance(parent, dict) and isinstance(parent.get(last), list) and parent[last]:
            parent[last].append(copy.deepcopy(parent[last][0]))
    return out


SCALARS: list[Any] = [
    "",
    "x",
    "auto",
    "node",
    "InOrder",
    "AnyOrder",
    "Always",
    "Never",
    "OpenMPI",
    "TCP",
    "IfNotPresent",
    "kueue.x-k8s.io/multikueue",
    "example.com/mine",
    "hf://a",
    "hf://a\n",
    "hf//a",
    "1Gi",
    "1.5.2Gi",
    "Not_A_Name",
    "a" * 64,
    0,
    1,
    -1,
    2,
    2**31,
    1.5,
    1.0,
    True,
    None,
]
VALUES: list[Any] = [
    *SCALARS,
    [],
    {},
    ["node"],
    [{"name": "x"}],
    {"name": "x"},
    {"a": "b"},
    {"limits": {"cpu": 1.5}},
    {"limits": {"memory": "1Gi", "cpu": 2}},
    {"requests": {"memory": "1.5.2Gi"}},
]
KEYS = [
    "numProcPerNode",
    "foo",
    "resources",
    "mpi",
    "torch",
    "jax",
    "xgboost",
    "flux",
    "numNodes",
    "dependsOn",
    "startupPolicy",
    "containerNames",
    "targets",
    "envInjection",
    "name",
    "terminationGracePeriodSeconds",
    "storageUri",
    "managedBy",
]


@st.composite
def mutations(draw: st.DrawFn, obj: dict[str, Any]) -> list[Mutation]:
    """One or two mutations of ``obj``."""
    found = places(obj)
    maps = [p for p, v in found if isinstance(v, dict)]
    lists = [p for p, v in found if isinstance(v, list) and v]
    keys = [p for p, _ in found if p and isinstance(p[-1], str)]
    out: list[Mutation] = []
    for _ in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(["add", "set", "set", "dup", "del"]))
        if op == "add":
            out.append(["add", draw(st.sampled_from(maps)), draw(st.sampled_from(KEYS)), draw(st.sampled_from(VALUES))])
        elif op == "set":
            out.append(["set", draw(st.sampled_from([p for p, _ in found if p])), draw(st.sampled_from(VALUES))])
        elif op == "dup" and lists:
            out.append(["dup", draw(st.sampled_from(lists))])
        elif op == "del":
            out.append(["del", draw(st.sampled_from(keys))])
    return out


def as_kubectl_sends(value: Any) -> Any:
    """``value`` as kubectl sends what YAML says: Go's JSON encoder writes a float without a
    fraction as an integer (1.0 as 1)."""
    if isinstance(value, dict):
        return {k: as_kubectl_sends(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_kubectl_sends(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value
