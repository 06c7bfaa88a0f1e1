"""The output bound (issue 30, case 5): the derived runtimes of one render hold at most the input
limit (64 MiB) together. Past it, each TrainJob that would derive one more is refused (returned as
written, with an error naming the base runtime, the count and the bound), so that output and memory
stay proportional to the input: one 768 KiB runtime and 400 TrainJobs with distinct overrides made
316 MB of output and 980 MB of memory before.

A generated family runs at a small bound (the module constant, patched): exactly the TrainJobs
that fit derive, in input order, and a fork of the function (cli/fan_out.py) gives the same bytes.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trainjob_resources.derive import derived_bound, materialize
from trainjob_resources.krm.resource_list import Item
from trainjob_resources.yamltext import yamlnodes as yn
from trainjob_resources.yamltext.yamlnodes import MAX_INPUT_BYTES

from tests.hostile import RUNTIME, MiB, bundle, parse_output, run_limited, trainjob_value, trainjob_yaml
from tests.test_fan_out import one_process, two_processes


def padded_runtime(size: int) -> str:
    """The hostile suite's runtime, about ``size`` bytes: an env list on its trainer container."""
    entry = "                    - {name: PAD_%06d, value: '%s'}\n"
    per = len(entry % (0, "x" * 40))
    env = "".join(entry % (i, "x" * 40) for i in range(max(0, size - len(RUNTIME)) // per))
    return RUNTIME + "                    env:\n" + env


def written_size(runtime: str) -> int:
    """What the bound counts for each runtime derived from ``runtime``: its base's text as written."""
    return materialize.WrittenBase(Item(yn.from_python(yaml.safe_load(runtime)[0]))).size


def jobs(count: int) -> str:
    """``count`` TrainJobs, each with overrides of its own (so each would derive its own runtime)."""
    return "".join(trainjob_yaml(trainjob_value(f"tj-{i:04d}", f"{i + 1}Mi")) for i in range(count))


def results_of(output: dict[str, Any]) -> list[dict[str, Any]]:
    return output.get("results") or []


def derived_names(output: dict[str, Any]) -> list[str]:
    return [
        i["metadata"]["name"]
        for i in output["items"]
        if "fn.trainjob-resources.io/derived-from" in (i["metadata"].get("annotations") or {})
    ]


def test_the_bound_is_the_input_limit() -> None:
    assert derived_bound.MAX_DERIVED_BYTES == MAX_INPUT_BYTES == 64 * MiB


@pytest.mark.slow
def test_one_large_runtime_and_400_distinct_overrides_are_refused_within_bounded_memory() -> None:
    """The issue's case, as the installed command under hard limits (2 GiB of address space)."""
    runtime = padded_runtime(768 * 1024)
    data = bundle(runtime, jobs(400))
    assert len(data) < 2 * MiB
    run = run_limited(data, memory_mib=2048, cpu_seconds=120)
    assert run.code == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert len(run.stdout) < 2 * MAX_INPUT_BYTES, "output proportional to the bound, not to 400 runtimes"
    output = parse_output(run.stdout)
    refused = [r for r in results_of(output) if r["message"].startswith(derived_bound.BOUND_MESSAGE)]
    made = derived_names(output)
    assert len(refused) + len(made) == 400
    assert 0 < len(made) <= MAX_INPUT_BYTES // written_size(runtime)
    first = refused[0]
    assert first["severity"] == "error" and first["field"]["path"] == "spec.runtimeRef"
    assert first["resourceRef"]["name"] == f"tj-{len(made):04d}"
    for said in ("ClusterTrainingRuntime torch", f"number {len(made) + 1}", f"{MAX_INPUT_BYTES:,} bytes", "64 MiB"):
        assert said in first["message"]
    returned = {i["metadata"]["name"]: i for i in output["items"] if i["kind"] == "TrainJob"}
    assert returned[first["resourceRef"]["name"]]["spec"]["runtimeRef"] == {"name": "torch"}, "as written"


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    size=st.integers(min_value=1500, max_value=6000),
    count=st.integers(min_value=1, max_value=30),
    repeats=st.integers(min_value=1, max_value=3),
    fits=st.integers(min_value=0, max_value=12),
)
def test_exactly_the_trainjobs_that_fit_derive_in_input_order(
    size: int, count: int, repeats: int, fits: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = padded_runtime(size)
    # overrides of one length (three digits), so that every derived runtime counts alike: its
    # base's text as written, its overrides' canonical JSON (90 bytes) twice and its own
    # metadata; the bound sits between two counts
    items = [trainjob_value(f"tj-{i:04d}", f"{i // repeats + 100}Mi") for i in range(count)]
    data = bundle(runtime, *(trainjob_yaml(i) for i in items))
    each = written_size(runtime) + 2 * 90 + derived_bound.OWN_METADATA_BYTES
    monkeypatch.setattr(derived_bound, "MAX_DERIVED_BYTES", fits * each + each // 2)
    output = yaml.safe_load(one_process(data))
    distinct = -(-count // repeats)
    made = derived_names(output)
    assert len(made) == min(distinct, fits)
    refused = {
        r["resourceRef"]["name"] for r in results_of(output) if r["message"].startswith(derived_bound.BOUND_MESSAGE)
    }
    expected = {i["metadata"]["name"] for n, i in enumerate(items) if n // repeats >= len(made)}
    assert refused == expected
    written = {i["metadata"]["name"]: i for i in items}
    for item in output["items"]:
        if item["metadata"]["name"] in refused:
            assert item == written[item["metadata"]["name"]], "returned exactly as written"


@pytest.mark.parametrize("fits", [0, 3, 20, 50])
def test_a_fork_gives_the_same_bytes_at_the_bound(fits: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork's copy of the bound knows only its own range: where it would admit what one process
    refuses, or refuse what it admits, its range is processed here instead. The fork takes the second
    half (20 of 40): the bound is reached by none, in the first half, at the fork's first, or never."""
    runtime = padded_runtime(2000)
    data = bundle(runtime, jobs(40))
    monkeypatch.setattr(derived_bound, "MAX_DERIVED_BYTES", fits * (len(runtime) + 200))
    assert two_processes(data) == one_process(data)
