"""Reading a runtime directly gives what its pydantic models give, on every input.

``runtime_view`` reads runtimes without building models (start-up time) and hands every value it
does not take as written to ``runtime_models``. Here both readings meet on generated runtimes
whose fields are missing, null, of the wrong type, coercible (``"2"``, ``True``, ``2.0``), under
their Python names, or keyed by non-strings: the same violations, or the same jobs, containers,
pod fields and ML policy.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from trainjob_resources.trainer.models import violations_from
from trainjob_resources.trainer.runtime_models import Runtime
from trainjob_resources.trainer.runtime_view import RuntimeSpecView, jobs_of, parse_runtime

from tests.hostile import RUNTIME, load

ABSENT = object()
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([2.0, 2.5, float("nan"), "", "2", " 3", "yes", "Always", "node", [], [1], {}, {"a": 1}]),
)


@st.composite
def maybe(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """Mostly a valid value, sometimes absent, sometimes anything."""
    roll = draw(st.integers(0, 29))  # hypothesis favours small numbers: those give the valid value
    return ABSENT if roll == 28 else draw(ODD) if roll == 29 else draw(valid)


@st.composite
def model(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> Any:
    """A mapping for a model: its fields (maybe under their Python names), maybe extras or odd keys."""
    out: dict[Any, Any] = {}
    for alias, strategy in fields.items():
        value = draw(strategy)
        if value is ABSENT:
            continue
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in alias)
        out[snake if snake != alias and draw(st.integers(0, 29)) == 29 else alias] = value
    if draw(st.integers(0, 19)) == 19:
        out[draw(st.sampled_from(["extra", "completions", "priorityClassName", 1, True, None]))] = draw(ODD)
    return out if draw(st.integers(0, 49)) < 49 else draw(ODD)


NAMES = st.sampled_from(["node", "launcher", "data-loader", "metrics"])
RESOURCES = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"limits": maybe(st.just({"cpu": "1"})), "requests": maybe(st.just({}))}),
    st.dictionaries(st.sampled_from(["limits", "requests", 1]), maybe(st.just({"memory": "1Gi"})), max_size=1),
)
CONTAINER = model({"name": maybe(NAMES), "resources": maybe(RESOURCES), "restartPolicy": maybe(st.just("Always"))})
CONTAINERS = maybe(st.lists(CONTAINER, max_size=2))
POD_SPEC = model({"containers": CONTAINERS, "initContainers": CONTAINERS, "overhead": maybe(st.just({"cpu": "1"}))})
LABELS = st.dictionaries(
    st.sampled_from(
        ["trainer.kubeflow.org/trainjob-ancestor-step", "team", "trainer.kubeflow.org/trainjob-ancestor-step", 7]
    ),
    maybe(st.just("trainer")),
    max_size=2,
)
JOB_SPEC = model(
    {
        "parallelism": maybe(st.integers(0, 4)),
        "completions": maybe(st.integers(0, 4)),
        "template": maybe(model({"spec": maybe(POD_SPEC)})),
    }
)
JOB = model(
    {
        "name": maybe(NAMES),
        "replicas": maybe(st.integers(0, 3)),
        "template": maybe(model({"metadata": maybe(model({"labels": maybe(LABELS)})), "spec": maybe(JOB_SPEC)})),
    }
)
ML_POLICY = model(
    {"numNodes": maybe(st.integers(1, 4)), "mpi": maybe(model({"runLauncherAsNode": maybe(st.booleans())}))}
)
SPEC = model(
    {
        "mlPolicy": maybe(ML_POLICY),
        "template": maybe(
            model({"spec": maybe(model({"replicatedJobs": maybe(st.lists(JOB, min_size=1, max_size=2))}))})
        ),
    }
)
RUNTIMES = model({"metadata": maybe(model({"name": maybe(NAMES), "namespace": maybe(NAMES)})), "spec": maybe(SPEC)})


def from_models(value: Any) -> tuple[Any, list[Any]]:
    """What the function reads of a runtime, through the pydantic models."""
    try:
        runtime = Runtime.model_validate(value)
    except ValidationError as err:
        return None, violations_from(err, Runtime)
    policy = runtime.spec.ml_policy
    jobs = [
        (
            job.name,
            job.replicas,
            job.template.metadata.labels,
            job.template.spec.parallelism,
            (job.template.spec.model_extra or {}).get("completions"),
            job.template.spec.template.spec.model_extra or {},
            [(c.name, c.resources, c.restart_policy) for c in job.template.spec.template.spec.init_containers],
            [(c.name, c.resources, c.restart_policy) for c in job.template.spec.template.spec.containers],
        )
        for job in runtime.spec.template.spec.replicated_jobs
    ]
    mpi = None if policy is None or policy.mpi is None else (policy.mpi.run_launcher_as_node,)
    return ((None if policy is None else (policy.num_nodes, mpi)), jobs), []


def read_directly(value: Any) -> tuple[Any, list[Any]]:
    spec, violations = parse_runtime(value)
    if spec is None:
        return None, violations
    policy = spec.ml_policy
    jobs = [
        (
            job.name,
            job.replicas,
            job.labels,
            job.parallelism,
            job.completions,
            job.pod_spec,
            [(c.name, c.resources, c.restart_policy) for c in job.init_containers],
            [(c.name, c.resources, c.restart_policy) for c in job.containers],
        )
        for job in spec.replicated_jobs
    ]
    mpi = None if policy is None or policy.mpi is None else (policy.mpi.run_launcher_as_node,)
    return ((None if policy is None else (policy.num_nodes, mpi)), jobs), violations


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=RUNTIMES)
def test_direct_reading_agrees_with_the_models(value: Any) -> None:
    assert read_directly(value) == from_models(value)


def test_the_common_runtime_is_read_without_models(monkeypatch: Any) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the models were used")

    monkeypatch.setattr(Runtime, "model_validate", refuse)
    spec, violations = parse_runtime(load(RUNTIME)[0])
    assert violations == []
    assert isinstance(spec, RuntimeSpecView)
    assert [(j.name, sorted(c for _, c in j.containers)) for j in jobs_of(spec).values()] == [
        ("node", ["loader", "node"])
    ]


def test_coerced_values_are_the_models() -> None:
    value = {
        "spec": {
            "mlPolicy": {"numNodes": "3", "mpi": {"run_launcher_as_node": "yes"}},
            "template": {"spec": {"replicatedJobs": [{"name": "launcher", "replicas": True}]}},
        }
    }
    spec, violations = parse_runtime(value)
    assert violations == []
    assert spec is not None and spec.ml_policy is not None and spec.ml_policy.mpi is not None
    assert (spec.ml_policy.num_nodes, spec.ml_policy.mpi.run_launcher_as_node) == (3, True)
    assert spec.replicated_jobs[0].replicas == 1
    assert sorted(jobs_of(spec)) == ["launcher"]
