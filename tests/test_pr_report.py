"""``explain --against``'s report is the review (issue 50): the status line first, every refusal of
the change's render (the same errors ``explain`` prints on stderr), each TrainJob the change
re-points at another runtime (the runtimeRef each side's ``render`` writes), per container what
changed as written, byte totals as a person reads them, and ``--config``/``--runtimes`` read from
where the command runs.

The oracles: the run's own stderr (every error line is in the report), ``render`` of each side alone
(the runtimeRef it writes), and Kubernetes' quantity grammar (a readable total parses back to the
same value). The API server's refusal of a re-pointed TrainJob is tests/cluster/test_pr_report.py.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from trainjob_resources.cli import render as render_cli
from trainjob_resources.kube.quantity import parse_quantity
from trainjob_resources.kube.readable import readable
from trainjob_resources.values.text import markdown_text

from tests.test_explain import DATA_LOADER, run

BASE_TEXT = DATA_LOADER.read_text()
LOADER_LIMIT = "memory: 64Gi   # runtime default 8Gi"
LOADER_REQUEST = "                          memory: 64Gi\n"
POLICY = """apiVersion: fn.trainjob-resources.io/v1alpha1
kind: TrainJobResources
metadata: {name: platform}
spec:
  maxPerContainer: {memory: 80Gi}
"""


def loader(memory: str, text: str = BASE_TEXT) -> str:
    """The data-loader's request and limit set to ``memory``, as written."""
    changed = text.replace(LOADER_LIMIT, f"memory: {memory}").replace(
        LOADER_REQUEST, f"{LOADER_REQUEST[:-5]}{memory}\n"
    )
    assert changed.count(memory) >= 2, "both edits made"
    return changed


def sides(root: Path, base: str, change: str) -> tuple[Path, Path]:
    for side, text in (("base", base), ("change", change)):
        (root / side / "app").mkdir(parents=True)
        (root / side / "app" / "jobs.yaml").write_text(text)
    return root / "base", root / "change"


def against(
    change: Path,
    base: Path,
    output: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *extra: str,
) -> tuple[int, str, str]:
    monkeypatch.chdir(change)
    return run(["app", "--against", str(base), "--format", output, *extra], capsys, monkeypatch)


def rendered_ref(root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The runtimeRef ``render`` writes for the one TrainJob of a side."""
    monkeypatch.chdir(root)
    code = render_cli.main(["app"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (trainjob,) = [d for d in yaml.safe_load_all(out) if d and d["kind"] == "TrainJob"]
    ref = trainjob["spec"]["runtimeRef"]
    return {"kind": ref.get("kind", "ClusterTrainingRuntime"), "name": ref["name"]}


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


def test_a_refused_change_says_so_first_and_carries_every_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides(tmp_path, BASE_TEXT, loader("96Gi"))
    (tmp_path / "policy.yaml").write_text(POLICY)
    config = ("--config", str(tmp_path / "policy.yaml"))
    code, out, err = against(change, base, "json", capsys, monkeypatch, *config)
    assert code == 1
    errors = error_lines(err)
    assert len(errors) == 3, err  # the loader's request and limit, the LimitRange's default for tensorboard
    report = json.loads(out)
    assert list(report)[:3] == ["status", "errors", "refusals"]
    assert (report["status"], report["errors"]) == ("refused", 3)
    (refusal,) = report["refusals"]
    assert refusal["resource"]["name"] == "large-dataset-training"
    messages = [r["message"] for r in refusal["results"]]
    assert all(any(line.endswith(": " + m) for line in errors) for m in messages) and len(messages) == 3
    lines_named = {f"app/jobs.yaml:{r['file']['line']}" for r in refusal["results"]}
    assert lines_named == {line.split(": ")[1] for line in errors}

    code, out, err = against(change, base, "markdown", capsys, monkeypatch, *config)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "**refused: 3 errors**", out
    assert lines.index("#### Refused: the sync of this change fails") < lines.index(
        "| TrainJob | change | pods | total requests | total limits |"
    ), "the refusals before the numbers"
    for message in messages:
        assert markdown_text(message, 4000) in out
    assert out.count("\n  - `app/jobs.yaml:") == 3

    code, out, _ = against(change, base, "table", capsys, monkeypatch, *config)
    assert out.splitlines()[0] == "refused: 3 errors"
    assert sum(line.startswith("  error: app/jobs.yaml:") for line in out.splitlines()) == 3


def test_a_change_the_policy_allows_is_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides(tmp_path, BASE_TEXT, BASE_TEXT.replace("numNodes: 4", "numNodes: 6"))
    code, out, err = against(change, base, "markdown", capsys, monkeypatch)
    assert (code, error_lines(err)) == (0, [])
    assert out.splitlines()[0] == "**ok**"
    assert "Refused" not in out and "recreate" not in out, "numNodes is no override: the same runtime"
    code, out, _ = against(change, base, "json", capsys, monkeypatch)
    report = json.loads(out)
    assert (report["status"], report["errors"], report["refusals"]) == ("ok", 0, [])
    (job,) = report["trainJobs"]
    assert job["runtimeRef"]["recreate"] is False
    assert job["runtimeRef"]["before"] == job["runtimeRef"]["after"] == rendered_ref(change, capsys, monkeypatch)


def test_an_edited_override_flags_the_trainjob_to_recreate_with_both_derived_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides(tmp_path, BASE_TEXT, loader("40Gi"))
    code, out, _ = against(change, base, "json", capsys, monkeypatch)
    assert code == 0
    (job,) = json.loads(out)["trainJobs"]
    before, after = rendered_ref(base, capsys, monkeypatch), rendered_ref(change, capsys, monkeypatch)
    assert before != after, "an override's value is in the derived runtime's name"
    assert job["runtimeRef"] == {"before": before, "after": after, "recreate": True}
    code, out, _ = against(change, base, "markdown", capsys, monkeypatch)
    said = (
        f"runtimeRef changes from {before['kind']} {before['name']} to {after['kind']} {after['name']}: "
        "the TrainJob must be recreated"
    )
    assert out.count(said) == 2, "in the list to act on and in the TrainJob's section"
    code, out, _ = against(change, base, "table", capsys, monkeypatch)
    assert f"recreate: team-a/large-dataset-training: {said}" in out


def test_each_container_change_is_shown_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data-loader raised from 16Gi to 40960Mi (written so): the report says the container and the
    values as written; a cpu limit set on the same container is its own transition, from the one the
    namespace's LimitRange gave it (its max, 32, canonical: no one wrote it for this container)."""
    base_text = loader("16Gi")
    limits = "                        limits:\n                          memory: 40960Mi\n"
    change_text = loader("40960Mi").replace(limits, limits + '                          cpu: "6"\n')
    assert 'cpu: "6"' in change_text
    base, change = sides(tmp_path, base_text, change_text)
    code, out, err = against(change, base, "markdown", capsys, monkeypatch)
    assert code == 0, err
    assert "| node | data-loader | cpu limit 32 → 6, memory 16Gi → 40960Mi |" in out, out
    code, out, _ = against(change, base, "json", capsys, monkeypatch)
    (job,) = json.loads(out)["trainJobs"]
    assert job["containerChanges"] == [
        {
            "replicatedJob": "node",
            "container": "data-loader",
            "change": "changed",
            "requests": {"memory": {"before": "16Gi", "after": "40960Mi"}},
            "limits": {"cpu": {"before": "32", "after": "6"}, "memory": {"before": "16Gi", "after": "40960Mi"}},
        }
    ]
    code, out, _ = against(change, base, "table", capsys, monkeypatch)
    assert "  in node: data-loader cpu limit 32 → 6, memory 16Gi → 40960Mi" in out


def test_totals_read_in_the_largest_binary_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, change = sides(tmp_path, BASE_TEXT, loader("96Gi"))
    code, out, _ = against(change, base, "markdown", capsys, monkeypatch)
    assert code == 0
    assert "memory 390.5Gi → 518.5Gi" in out, "399872Mi → 530944Mi"
    assert "399872Mi" not in out
    code, out, _ = against(change, base, "json", capsys, monkeypatch)
    (job,) = json.loads(out)["trainJobs"]
    assert job["after"]["totalRequests"]["memory"] == "530944Mi", "JSON keeps Kubernetes' canonical form"


BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def amount(text: str) -> tuple[Fraction, str]:
    number, suffix = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", text).groups()  # type: ignore[union-attr]
    return Fraction(number), suffix


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**62), st.sampled_from(["", "Ki", "Mi", "Gi", "k", "M", "G", "m"]))
@example(25000000000000000, "M")  # 2.5e22: apimachinery prints it as "25"
def test_readable_is_exact_and_the_largest_unit(number: int, suffix: str) -> None:
    quantity = parse_quantity(f"{number}{suffix}")
    shown = readable("memory", quantity)
    assert parse_quantity(shown) == quantity, "the text is a quantity of the same value"
    assert readable("cpu", quantity) == quantity.canonical()
    exact = Fraction(quantity.coefficient) * Fraction(10) ** quantity.exponent
    if exact >= 2**63:  # apimachinery reads a binary suffix past int64 as int64's maximum
        # and prints 10^21 and beyond with no suffix (``25000000000000000M`` as ``25``): the exponent form.
        exact_form = parse_quantity(quantity.canonical()) == quantity
        assert shown == quantity.canonical() if exact_form else re.fullmatch(r"[0-9]+e[0-9]+", shown), shown
        return
    value, unit = amount(shown)
    if unit in BINARY:
        assert value >= 1 and (value * 100).denominator == 1, "at least 1, at most two decimals"
        assert len(shown) <= len(quantity.canonical())
    fitting = [u for u, size in BINARY.items() if exact / size >= 1 and (exact / size * 100).denominator == 1]
    if unit in BINARY:
        assert unit == fitting[-1], f"{shown}: {fitting[-1]} is larger"
    elif fitting:
        hundredths = exact / BINARY[fitting[-1]] * 100
        text = f"{Decimal(int(hundredths)).scaleb(-2):f}".rstrip("0").rstrip(".") + fitting[-1]
        assert len(shown) < len(text), f"{shown}: canonical only where shorter than {text}"


def test_relative_config_and_runtimes_are_read_from_where_the_command_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base checked out far from the repository (a CI cache): ``--config policy.yaml`` and
    ``--runtimes platform`` are the current folder's, for both sides."""
    documents = BASE_TEXT.split("\n---\n")
    runtime, rest = documents[0], "\n---\n".join(documents[1:])
    base, change = sides(tmp_path / "elsewhere", rest, loader("96Gi", rest))
    (change / "platform").mkdir()
    (change / "platform" / "runtime.yaml").write_text(runtime)
    (change / "policy.yaml").write_text(POLICY.replace("80Gi", "100Gi"))
    base_far = tmp_path / "ci-cache" / "base"
    base_far.parent.mkdir()
    base.rename(base_far)
    code, out, err = against(
        change, base_far, "json", capsys, monkeypatch, "--config", "policy.yaml", "--runtimes", "platform"
    )
    assert "no such file" not in err and "not there" not in err, err
    report = json.loads(out)
    assert [t["change"] for t in report["trainJobs"]] == ["changed"], err
    assert report["notCompared"] == []
    assert report["status"] == "refused", "the policy read for both sides: tensorboard's 128Gi default is above 100Gi"
    assert code == 1


def test_the_bases_own_copy_of_the_runtimes_folder_is_left_to_the_platform(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``explain . --runtimes platform --against BASE``: the platform's runtimes are the current folder's;
    the base's own ``platform/`` (here an old copy that does not even parse) is not read as its input."""
    documents = BASE_TEXT.split("\n---\n")
    runtime, rest = documents[0], "\n---\n".join(documents[1:])
    base, change = sides(tmp_path, rest, rest.replace("numNodes: 4", "numNodes: 6"))
    for side, text in ((change, runtime), (base, "kind: [broken\n")):
        (side / "platform").mkdir()
        (side / "platform" / "runtime.yaml").write_text(text)
    monkeypatch.chdir(change)
    code, out, err = run(
        [".", "--runtimes", "platform", "--against", str(base), "--format", "json"], capsys, monkeypatch
    )
    assert code == 0, err
    assert f"base {base}: note: ./platform: not an input" in err
    assert json.loads(out)["summary"]["changed"] == 1
