"""The output bound counts what is written (issue 46): a derived runtime is written with every alias
of its base written out, so the bound counts its base's text as written, counted as the writer writes
it and refused as soon as it passes what the bound has left. A 210 KB runtime (one 200 KB env value
aliased 199 times) wrote 40 MB per derived runtime: 10 TrainJobs with distinct overrides made 400 MB
of output and 1.6 GB of memory before.

The installed command runs the issue's cases under hard limits (render and the KRM function); a
generated family of aliased runtimes, in process at a small bound, checks that the bytes counted are
the bytes written and that exactly the TrainJobs that fit derive.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trainjob_resources.derive import derived_bound, materialize
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.process import process
from trainjob_resources.yamltext.yamlnodes import MAX_INPUT_BYTES

from tests.examples import KPT_PACKAGE, kpt_render
from tests.hostile import EXECUTABLE, MiB, parse_output, run_limited
from tests.kit import build


def trainjob(index: int) -> build.Obj:
    """A TrainJob sizing the ``loader`` sidecar with overrides of its own."""
    return build.sized_trainjob(f"tj-{index:03d}", {"memory": f"{index + 100}Mi"})


def as_items(*documents: build.Obj) -> bytes:
    """A ResourceList of the documents."""
    return build.resource_list(list(documents))


def bound_results(output: dict[str, object]) -> list[dict[str, object]]:
    results = output.get("results") or []
    assert isinstance(results, list)
    return [r for r in results if str(r["message"]).startswith(derived_bound.BOUND_MESSAGE)]


def derived_items(items: list[krm.Item]) -> list[krm.Item]:
    return [i for i in items if "fn.trainjob-resources.io/derived-from" in i.annotations()]


@pytest.mark.slow
def test_render_refuses_nine_of_ten_40_mb_derived_runtimes(tmp_path: Path) -> None:
    """The issue's case through ``trainjob-resources render`` as installed, under 768 MiB of address
    space: the first TrainJob derives (40 MB as written), the other nine are refused by name."""
    runtime = build.aliased_runtime(200 * 1024, 199)
    (tmp_path / "all.yaml").write_text(build.yaml_text(runtime, *(trainjob(i) for i in range(10))))
    assert (tmp_path / "all.yaml").stat().st_size < 220 * 1024

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (768 * MiB, 768 * MiB))
        resource.setrlimit(resource.RLIMIT_CPU, (60, 60))

    done = subprocess.run(
        [str(EXECUTABLE), "render", str(tmp_path)], capture_output=True, preexec_fn=limit, check=False
    )
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr[-2000:]
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert done.stdout == b"", "render writes nothing when there is an error"
    refused = [line for line in stderr.splitlines() if derived_bound.BOUND_MESSAGE in line]
    assert [line.split("TrainJob team-a/", 1)[1].split(":", 1)[0] for line in refused] == [
        f"tj-{i:03d}" for i in range(1, 10)
    ]
    assert "40,97" in refused[0] and "bytes each as written" in refused[0], refused[0]


@pytest.mark.slow
def test_the_krm_function_writes_one_40_mb_derived_runtime_not_ten() -> None:
    """The same as a ResourceList through the KRM function as installed: one derived runtime in the
    output, nine TrainJobs returned as written with the error."""
    data = as_items(build.aliased_runtime(200 * 1024, 199), *(trainjob(i) for i in range(10)))
    run = run_limited(data, memory_mib=768, cpu_seconds=60)
    assert run.code == 1, run.stderr[-2000:]
    assert 40 * 10**6 < len(run.stdout) < MAX_INPUT_BYTES + len(data), "one derived runtime, not ten"
    output = parse_output(run.stdout)
    assert [r["resourceRef"]["name"] for r in bound_results(output)] == [f"tj-{i:03d}" for i in range(1, 10)]  # type: ignore[index]
    assert sum(1 for i in output["items"] if i["kind"] == "TrainingRuntime") == 1


@pytest.mark.slow
def test_a_runtime_whose_aliases_pass_the_whole_bound_is_refused_before_it_is_written() -> None:
    """The KRM function as installed: a 1 MiB value aliased 100 times is 100 MiB as written, past the
    64 MiB bound on its own; the count stops at the bound, so 512 MiB of address space is plenty,
    and nothing of it is written."""
    data = as_items(build.aliased_runtime(MiB, 100), trainjob(0))
    assert len(data) < 2 * MiB
    run = run_limited(data, memory_mib=512, cpu_seconds=30)
    assert run.code == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    assert len(run.stdout) < 2 * MiB + 100_000
    output = parse_output(run.stdout)
    (refused,) = bound_results(output)
    assert refused["resourceRef"]["name"] == "tj-000"  # type: ignore[index]
    assert f"more than the {MAX_INPUT_BYTES:,} bytes left of the bound" in str(refused["message"])
    assert not [i for i in output["items"] if i["metadata"]["name"] != "torch" and i["kind"] != "TrainJob"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value_bytes=st.integers(min_value=50, max_value=3000),
    aliases=st.integers(min_value=0, max_value=40),
    count=st.integers(min_value=1, max_value=8),
    fits=st.integers(min_value=0, max_value=6),
)
def test_the_bytes_counted_are_the_bytes_written(
    value_bytes: int, aliases: int, count: int, fits: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a bound between ``fits`` and ``fits + 1`` derived runtimes (each counted as its base's
    text as written, its overrides' 90 bytes twice and its own metadata), exactly the first
    ``fits`` TrainJobs derive; each derived runtime's text as written is no larger than what was
    counted for it, aliases and all."""
    runtime = build.aliased_runtime(value_bytes, aliases)
    base = krm.Item(krm.read(as_items(runtime)).items[0].node)
    each = materialize.WrittenBase(base).size + 2 * 90 + derived_bound.OWN_METADATA_BYTES
    assert each > (aliases + 1) * value_bytes, "the count holds every alias written out"
    monkeypatch.setattr(derived_bound, "MAX_DERIVED_BYTES", fits * each + each // 2)
    result = process(krm.read(as_items(runtime, *(trainjob(i) for i in range(count)))))
    made = derived_items(result.items)
    assert len(made) == min(count, fits)
    refused = sorted(r.resource_ref.name for r in result.results if r.message.startswith(derived_bound.BOUND_MESSAGE))
    assert refused == [f"tj-{i:03d}" for i in range(len(made), count)]
    for item in made:
        assert len(item.serialized().encode()) <= each
    assert sum(len(item.serialized().encode()) for item in made) <= derived_bound.MAX_DERIVED_BYTES


@settings(max_examples=6, deadline=None)
@given(note=st.integers(min_value=1000, max_value=30_000), fits=st.integers(min_value=0, max_value=4))
def test_derived_runtime_metadata_counts_on_each(note: int, fits: int) -> None:
    """``derivedRuntimeMetadata`` (an annotation of ``note`` bytes) is written on every derived runtime,
    so it counts on each: a small base and many TrainJobs cannot multiply it past the bound."""
    metadata = json.dumps({"annotations": {"example.com/note": "n" * note}})
    config = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}})
    data = as_items(build.aliased_runtime(50, 0), *(trainjob(i) for i in range(6)))
    data = data.replace(b"items:\n", f"functionConfig: {config}\nitems:\n".encode(), 1)
    data = data.replace(b'"data": {}', f'"data": {{"derivedRuntimeMetadata": {json.dumps(metadata)}}}'.encode())
    base = krm.Item(krm.read(as_items(build.aliased_runtime(50, 0))).items[0].node)
    bound = derived_bound.OutputBound(1 << 40)
    bound.count_metadata(json.loads(metadata))
    each = materialize.WrittenBase(base).size + 2 * 90 + derived_bound.OWN_METADATA_BYTES + bound.metadata_bytes
    assert bound.metadata_bytes > note
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(derived_bound, "MAX_DERIVED_BYTES", fits * each + each // 2)
        result = process(krm.read(data))
    made = derived_items(result.items)
    assert len(made) == min(6, fits)
    for item in made:
        assert item.annotations()["example.com/note"] == "n" * note
        assert len(item.serialized().encode()) <= each


@pytest.mark.slow
def test_kpt_render_refuses_a_runtime_whose_aliases_pass_the_bound(kpt: str, tmp_path: Path) -> None:
    """The kpt example package through ``kpt fn render`` (the function as kpt runs it), its runtime
    given a 1 MiB env value aliased 100 times: kpt reports the function's error, and the package is
    left as it was (nothing derived)."""
    package = tmp_path / "package"
    shutil.copytree(KPT_PACKAGE, package)
    env = f"                      env:\n                        - {{name: E0, value: &big '{'x' * MiB}'}}\n"
    env += "".join(f"                        - {{name: E{i}, value: *big}}\n" for i in range(1, 100))
    (package / "runtime.yaml").write_text((package / "runtime.yaml").read_text() + env)
    before = sorted(p.name for p in package.iterdir())
    done = kpt_render(kpt, package)
    assert done.returncode != 0
    assert derived_bound.BOUND_MESSAGE in done.stderr and "bytes left of the bound" in done.stderr, done.stderr[-3000:]
    assert sorted(p.name for p in package.iterdir()) == before
