"""Reading a TrainJob directly (trainjob_view) gives what its pydantic models give, on every input,
and the defaults without a functionConfig (options.DEFAULTS) are FunctionConfig()'s.

The direct reading takes only what ``models`` would accept unchanged and hands everything else to
the models; here both readings meet on valid TrainJobs and on every one-field mutation of them:
the same violations, and for a valid TrainJob the same fields, fields set and extra fields.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from trainjob_resources.options.config import FunctionConfig
from trainjob_resources.options.options import DEFAULTS
from trainjob_resources.trainer import models, trainjob_view

from tests.hostile import load, trainjob_value

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import generate

FULL: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "tj", "namespace": "team", "labels": {"a": "b"}},
    "spec": {
        "runtimeRef": {"name": "torch", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
        "trainer": {
            "numNodes": 2,
            "command": ["tune", "run"],
            "resourcesPerNode": {"limits": {"cpu": "2", "memory": None}, "claims": [{"name": "gpu", "request": "a"}]},
        },
        "suspend": False,
        "runtimePatches": [
            {
                "manager": "example.com/team",
                "time": "2025-01-01T00:00:00Z",
                "trainingRuntimeSpec": {
                    "template": {
                        "metadata": {"labels": {"x": "y"}},
                        "spec": {
                            "replicatedJobs": [
                                {
                                    "name": "node",
                                    "template": {
                                        "metadata": {"annotations": {"k": "v"}},
                                        "spec": {
                                            "template": {
                                                "metadata": {"finalizers": ["f"]},
                                                "spec": {
                                                    "nodeSelector": {"pool": "gpu"},
                                                    "tolerations": [{"key": "k"}],
                                                    "terminationGracePeriodSeconds": 30,
                                                    "serviceAccountName": "sa",
                                                    "initContainers": [
                                                        {"name": "loader", "resources": {"limits": {"memory": "1Gi"}}}
                                                    ],
                                                    "containers": [
                                                        {
                                                            "name": "node",
                                                            "env": [{"name": "A", "value": "1"}],
                                                            "volumeMounts": [],
                                                            "securityContext": {"runAsUser": 1},
                                                            "resources": {
                                                                "requests": {"cpu": 1},
                                                                "claims": [{"name": "c"}],
                                                            },
                                                        }
                                                    ],
                                                },
                                            }
                                        },
                                    },
                                }
                            ]
                        },
                    }
                },
            }
        ],
    },
}

ODD_VALUES: list[Any] = [None, 1, True, 1.5, "2", "", [], {}, ["x"], {"bogus": 1}, {1: "x"}, ("t",)]


def _bases() -> list[Any]:
    bench = [
        item
        for item in load(generate.resource_list(3))["items"]
        if isinstance(item, dict) and item.get("kind") == "TrainJob"
    ]
    return [FULL, trainjob_value(), *bench]


def _mutations(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(where, the whole value with one change) for every change of one field or entry."""
    if isinstance(value, dict):
        for extra in ("bogus", "num_nodes", "runtime_ref", "init_containers", "command"):
            yield (*path, extra), {**value, extra: "x"}
        for key in value:
            yield (*path, key, "deleted"), {k: v for k, v in value.items() if k != key}
            for odd in ODD_VALUES:
                yield (*path, key), {**value, key: odd}
            for where, changed in _mutations(value[key], (*path, key)):
                yield where, {**value, key: changed}
    elif isinstance(value, list):
        for i, entry in enumerate(value):
            for where, changed in _mutations(entry, (*path, i)):
                yield where, [*value[:i], changed, *value[i + 1 :]]


def _cases() -> Iterator[Any]:
    for base in _bases():
        yield base
        for _, mutated in _mutations(base):
            yield mutated
    yield None
    yield []
    yield {"spec": None}


def _shape(obj: Any) -> Any:
    """A model's fields, fields set and extras, recursively, with the types of plain values."""
    if isinstance(obj, BaseModel):
        names = list(type(obj).model_fields)
        return (
            "model",
            type(obj).__name__,
            {n: _shape(getattr(obj, n)) for n in names},
            obj.model_fields_set,
            obj.model_extra,
        )
    if isinstance(obj, trainjob_view._View):
        names = [name for name, _ in type(obj)._schema.values()]
        assert type(obj).__name__.endswith("View")  # each view is named as its model, with View after it
        return (
            "model",
            type(obj).__name__.removesuffix("View"),
            {n: _shape(getattr(obj, n)) for n in names},
            obj.model_fields_set,
            obj.model_extra,
        )
    if isinstance(obj, list):
        return [_shape(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _shape(v) for k, v in obj.items()}
    return (type(obj).__name__, obj)


def _compare(value: Any) -> None:
    expected, expected_violations = models.parse_trainjob(copy.deepcopy(value))
    got, violations = trainjob_view.parse_trainjob(copy.deepcopy(value))
    assert [(v.path, v.message, v.current_value) for v in violations] == [
        (v.path, v.message, v.current_value) for v in expected_violations
    ]
    assert (got is None) == (expected is None)
    if got is not None and expected is not None:
        assert _shape(got) == _shape(expected)
        assert repr(trainjob_view.resources_per_node(got)) == repr(models.resources_per_node(expected))


def test_the_direct_reading_takes_the_bases_itself() -> None:
    for base in _bases():
        trainjob_view._build(trainjob_view.TrainJobView, base, trusted=False)  # no _Unusual


@pytest.mark.parametrize("base", range(len(_bases())))
def test_both_readings_agree_on_every_mutation(base: int) -> None:
    value = _bases()[base]
    _compare(value)
    count = 0
    for _, mutated in _mutations(value):
        _compare(mutated)
        count += 1
    assert count > 100


def test_both_readings_agree_on_odd_roots() -> None:
    for value in (
        None,
        [],
        {},
        {"spec": None},
        {"spec": {}},
        {"metadata": None, "spec": {"runtimeRef": {"name": "x"}}},
    ):
        _compare(value)


def test_the_defaults_are_function_config_s() -> None:
    config = FunctionConfig()
    for name in FunctionConfig.model_fields:
        assert getattr(DEFAULTS, name) == getattr(config, name), name
    for resource in ("nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "gpu.intel.com/i915", "example.com/fpga", "cpu"):
        assert DEFAULTS.is_gpu(resource) == config.is_gpu(resource)
