"""explain's output bound (issue 46): 150 KB of input (a runtime of 1,000 containers, 200 TrainJobs
using it) asked for 118 MB of JSON and 1.35 GB of memory; ``--against`` printed both sides. Now the
explanations of one run (both sides of ``--against`` together) hold at most ``MAX_EXPLAIN_BYTES``,
each counted as its JSON; past it, the rest are named as not explained, with an error (exit 1).

The installed command runs the issue's case in every format and with ``--against`` under hard
limits; a generated family, in process at a small bound, checks that exactly the TrainJobs that fit
are explained, in input order, and that ``render_json`` writes what ``json.dumps`` would.
"""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.cli.explain import explain_views
from trainjob_resources.krm.resource_list import Item, ResourceList
from trainjob_resources.report import explain_bound, explain_report
from trainjob_resources.yamltext.yamlnodes import from_python

from tests.hostile import EXECUTABLE, MiB


def runtime(containers: int) -> str:
    entries = "".join(
        f"                - {{name: c{i}, image: x, resources: {{requests: {{cpu: 1}}}}}}\n" for i in range(containers)
    )
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: torch}\n"
        "spec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template:\n    spec:\n      replicatedJobs:\n"
        "      - name: node\n        template:\n          metadata:\n"
        "            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
        "          spec:\n            template:\n              spec:\n                containers:\n" + entries
    )


def trainjobs(count: int) -> str:
    return "".join(
        "---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        f"metadata: {{name: tj-{i:03d}, namespace: team-a}}\nspec:\n  runtimeRef: {{name: torch}}\n"
        for i in range(count)
    )


def read_documents(text: str) -> ResourceList:
    return ResourceList(items=[Item(from_python(d)) for d in yaml.safe_load_all(text)])


def explain_installed(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (768 * MiB, 768 * MiB))
        resource.setrlimit(resource.RLIMIT_CPU, (60, 60))

    return subprocess.run(
        [str(EXECUTABLE), "explain", *arguments], cwd=cwd, capture_output=True, preexec_fn=limit, check=False
    )


def hostile_app(root: Path) -> Path:
    app = root / "app"
    app.mkdir(parents=True)
    (app / "all.yaml").write_text(runtime(1000) + trainjobs(200))
    assert (app / "all.yaml").stat().st_size < 160_000
    return app


@pytest.mark.slow
@pytest.mark.parametrize("output_format", ["json", "table", "markdown"])
def test_explain_stops_at_the_bound_in_every_format(tmp_path: Path, output_format: str) -> None:
    hostile_app(tmp_path)
    done = explain_installed(["app", "--format", output_format], tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr[-2000:]
    assert "Traceback" not in stderr
    assert len(done.stdout) < explain_bound.MAX_EXPLAIN_BYTES + MiB
    (error,) = [line for line in stderr.splitlines() if explain_bound.BOUND_REASON in line]
    assert error.startswith("error: ") and "not explained, from team-a/tj-" in error and "33,554,432 bytes" in error
    count = int(error.split("error: ", 1)[1].split(" ", 1)[0])
    assert 0 < count < 200
    first = f"tj-{200 - count:03d}"
    assert f"from team-a/{first} on" in error
    text = done.stdout.decode()
    if output_format == "json":
        output = json.loads(text)
        assert [t["name"] for t in output["trainJobs"]] == [f"tj-{i:03d}" for i in range(200 - count)]
        assert {t["reason"] for t in output["notExplained"]} == {explain_bound.BOUND_REASON}
        assert len(output["notExplained"]) == count
    else:
        assert f"team-a/{first}" in text and explain_bound.BOUND_REASON in text


@pytest.mark.slow
def test_against_counts_both_sides_together(tmp_path: Path) -> None:
    """Both sides of ``--against`` (151 MB of JSON and 1.7 GB of memory before) share one bound."""
    hostile_app(tmp_path)
    hostile_app(tmp_path / "base")
    done = explain_installed(["app", "--against", "base", "--format", "json"], tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr[-2000:]
    assert len(done.stdout) < explain_bound.MAX_EXPLAIN_BYTES
    assert sum(explain_bound.BOUND_REASON in line for line in stderr.splitlines()) == 2, "both sides said"
    assert f"base base: error: 200 TrainJobs not explained, from team-a/tj-000 on: {explain_bound.BOUND_REASON}" in (
        stderr
    )


@settings(max_examples=10, deadline=None)
@given(
    containers=st.integers(min_value=1, max_value=6),
    count=st.integers(min_value=1, max_value=8),
    fits=st.integers(min_value=0, max_value=9),
)
def test_exactly_the_trainjobs_that_fit_are_explained(containers: int, count: int, fits: int) -> None:
    documents = runtime(containers) + trainjobs(count)
    unbounded = explain_views(read_documents(documents), bound=explain_bound.ExplainBound(1 << 40))
    entries = [len(explain_report.json_entry(view).encode()) + 1 for view in unbounded.shown]
    assert len(set(entries)) == 1, "TrainJobs of names of one length explain alike"
    limit = fits * entries[0] + entries[0] // 2
    views = explain_views(read_documents(documents), bound=explain_bound.ExplainBound(limit))
    assert [v.name for v in views.shown] == [f"tj-{i:03d}" for i in range(min(fits, count))]
    text = explain_report.render_json(views.shown, views.left_out)
    assert text == json.dumps(explain_report.to_json(views.shown, views.left_out), indent=2, ensure_ascii=False) + "\n"
    output = json.loads(text)
    assert len(json.dumps(output["trainJobs"], indent=2, ensure_ascii=False).encode()) <= limit + 8
    refused = [t["name"] for t in output.get("notExplained", [])]
    assert refused == [f"tj-{i:03d}" for i in range(min(fits, count), count)]
    assert views.failed == (fits < count)
