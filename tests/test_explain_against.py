"""``explain --against DIR``: what a change does to each TrainJob, as a pull-request report (issue 32).

The oracle is ``explain`` itself, run on each side alone: every before/after the report shows is the
one-sided explanation of that TrainJob, and each namespace's total is the sum of its TrainJobs'.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from trainjob_resources.cli import explain as explain_cli
from trainjob_resources.krm.resource_list import Item, ResourceList
from trainjob_resources.report import change_report
from trainjob_resources.yamltext.yamlnodes import from_python

from tests.kit import build
from tests.test_explain import DATA_LOADER, run
from tests.test_explain_escaping import HOSTILE, skeleton

BASE_TEXT = DATA_LOADER.read_text()


def second_trainjob(name: str, namespace: str, memory: str = "16Gi", sidecar: str = "data-loader") -> str:
    """A TrainJob of the walkthrough's runtime sizing its ``sidecar`` to ``memory``."""
    loader = {"name": sidecar, "resources": {"limits": {"memory": memory}, "requests": {"memory": memory}}}
    patch = build.container_patch("node", "initContainers", loader)
    return "---\n" + build.yaml_text(build.trainjob(name, "torch-data-pipeline", [patch], namespace=namespace))


def checkout(root: Path, text: str) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "app" / "jobs.yaml").write_text(text)
    return root


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    """The base: the data-loader TrainJob and team-b/old. The change: the data-loader grows to 96Gi
    and 6 nodes, team-b/old is removed, team-c/new is added."""
    same = second_trainjob("same", "team-b", "12Gi")
    base = checkout(tmp_path / "base", BASE_TEXT + second_trainjob("old", "team-b") + same)
    changed = BASE_TEXT.replace("memory: 64Gi   # runtime default 8Gi", "memory: 96Gi")
    changed = changed.replace("memory: 64Gi\n", "memory: 96Gi\n", 1).replace("numNodes: 4", "numNodes: 6")
    assert changed != BASE_TEXT
    change = checkout(tmp_path / "change", changed + same + second_trainjob("new", "team-c", "24Gi"))
    return base, change


def alone(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> dict[tuple[str, str], Any]:
    monkeypatch.chdir(root)
    code, out, _ = run(["app", "--format", "json"], capsys, monkeypatch)
    assert code == 0
    return {(t["namespace"], t["name"]): t for t in json.loads(out)["trainJobs"]}


SUFFIXES = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def amount(text: str) -> Fraction:
    """A canonical quantity's amount, read apart from the package's own Quantity."""
    match = re.fullmatch(r"(\d+)([A-Za-z]*)", text)
    assert match, text
    return Fraction(int(match.group(1))) * SUFFIXES[match.group(2)]


def total(values: list[dict[str, str]]) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for one in values:
        for name, value in one.items():
            out[name] = out.get(name, Fraction(0)) + amount(value)
    return out


def test_each_side_is_what_explain_shows_of_it(
    sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides
    before, after = alone(base, capsys, monkeypatch), alone(change, capsys, monkeypatch)
    monkeypatch.chdir(change)
    code, out, err = run(["app", "--against", "../base", "--format", "json"], capsys, monkeypatch)
    assert (code, err) == (0, "")
    report = json.loads(out)
    changes = {(t["namespace"], t["name"]): t["change"] for t in report["trainJobs"]}
    assert changes == {
        ("team-a", "large-dataset-training"): "changed",
        ("team-b", "same"): "unchanged",
        ("team-c", "new"): "added",
        ("team-b", "old"): "removed",
    }
    assert report["summary"] == {"changed": 1, "added": 1, "removed": 1, "unchanged": 1}
    for shown in report["trainJobs"]:
        key = (shown["namespace"], shown["name"])
        assert shown["before"] == before.get(key) and shown["after"] == after.get(key)
    for namespace in report["namespaces"]:
        for side, explained in (("before", before), ("after", after)):
            views = [v for (ns, _), v in explained.items() if ns == namespace["namespace"]]
            want = total([v["totalRequests"] for v in views])
            assert total([namespace[side]["totalRequests"]]) == want
            assert namespace[side]["trainJobs"] == len(views)
    grown = after[("team-a", "large-dataset-training")]
    assert grown["totalRequests"] != before[("team-a", "large-dataset-training")]["totalRequests"]


def test_the_markdown_opens_with_one_line_per_trainjob(
    sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides
    monkeypatch.chdir(change)
    code, out, _ = run(["app", "--against", str(base), "--format", "markdown"], capsys, monkeypatch)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "**ok**", "the status line first"
    assert lines[2].startswith("### ") and "1 changed, 1 added, 1 removed, 1 unchanged" in lines[2]
    first = lines.index("| TrainJob | change | pods | total requests | total limits |")
    rows = [line for line in lines[first : first + 6] if line.startswith("| ")]
    assert [row.split(" | ")[:2] for row in rows[2:]] == [
        ["| team-a/large-dataset-training", "changed"],
        ["| team-b/same", "unchanged"],
        ["| team-c/new", "added"],
        ["| team-b/old", "removed"],
    ]
    assert "| 5 → 7 |" in rows[2], "4 → 6 nodes and the initializer pod"
    detail = out[out.index("#### TrainJob `team-a/large-dataset-training`") :]
    assert re.search(r"\| node \| 4 → 6 \| [^|]*memory \S+ → \S+", detail), detail
    assert "#### TrainJob `team-b/same`" not in out, "an unchanged TrainJob has its summary line alone"
    assert "| team-b | 2 → 1 |" in out and "| team-c | 0 → 1 |" in out


def test_an_application_the_change_adds_is_read_as_empty_on_the_base(
    sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides
    (base / "app" / "jobs.yaml").unlink()
    (base / "app").rmdir()
    monkeypatch.chdir(change)
    code, out, err = run(["app", "--against", str(base), "--format", "json"], capsys, monkeypatch)
    assert code == 0
    assert f"base {base}: app: not there, read as no TrainJobs" in err
    assert {t["change"] for t in json.loads(out)["trainJobs"]} == {"added"}


def test_a_trainjob_one_side_cannot_explain_is_named_and_not_compared(
    sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides
    jobs = change / "app" / "jobs.yaml"
    new, misspelt = (second_trainjob("new", "team-c", "24Gi", sidecar) for sidecar in ("data-loader", "data-lodaer"))
    assert jobs.read_text().endswith(new)
    jobs.write_text(jobs.read_text().removesuffix(new) + misspelt)
    monkeypatch.chdir(change)
    code, out, err = run(["app", "--against", str(base), "--format", "json"], capsys, monkeypatch)
    assert code == 1, "the change's own error fails the run, as explain does"
    report = json.loads(out)
    assert [(t["namespace"], t["name"], t["side"]) for t in report["notCompared"]] == [("team-c", "new", "change")]
    assert "data-lodaer" in err
    assert ("team-c", "new") not in {(t["namespace"], t["name"]) for t in report["trainJobs"]}
    # the other way round: the base's error is the base's, the run passes
    monkeypatch.chdir(base)
    code, out, err = run(["app", "--against", str(change), "--format", "json"], capsys, monkeypatch)
    assert code == 0
    assert [t["side"] for t in json.loads(out)["notCompared"]] == ["base"]
    assert all(line.startswith(f"base {change}: ") for line in err.splitlines())


@pytest.mark.parametrize("args", [["-", "--against", "."], ["app", "--against", "no-such-folder"]])
def test_bad_usage_exits_2(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        run(args, capsys, monkeypatch)
    assert exit_.value.code == 2
    assert "--against" in capsys.readouterr().err


def views_of(text: str) -> explain_cli.Views:
    documents = [d for d in yaml.safe_load_all(text) if d]
    return explain_cli.explain_views(ResourceList(items=[Item(from_python(d)) for d in documents]))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(name=HOSTILE)
def test_a_trainjobs_name_adds_no_markup_to_the_report(name: str) -> None:
    def report(trainjob: str) -> str:
        base = views_of(BASE_TEXT)
        hostile = BASE_TEXT.replace("name: large-dataset-training", f"name: {json.dumps(trainjob)}")
        change = views_of(hostile.replace("numNodes: 4", "numNodes: 5"))
        return change_report.render_markdown(
            change_report.compare(base.shown, change.shown, base.left_out, change.left_out)
        )

    hostile = report(name)
    plain_name = "plain-name" if re.fullmatch("[A-Za-z0-9][A-Za-z0-9-]*", name) else "plain.name"
    if "Not compared" in hostile:  # a name Kubernetes refuses: left out on the change's side
        # as plain a refused name as the hostile one: without markup (``a-``), or with (``a_b``)
        plain_name = "bad-" if re.fullmatch("[A-Za-z0-9][A-Za-z0-9-]*", name) else "Bad_Name"
    plain = report(plain_name)
    assert skeleton(hostile) == skeleton(plain), hostile
    assert hostile.count("\n") == plain.count("\n")
