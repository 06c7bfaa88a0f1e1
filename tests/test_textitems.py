"""``render`` holds each document of a file as its text (``repo/textitems``): trees composed when
read and dropped when settled, what is printed written once. Dropping a tree must change nothing
users see: every case renders the same bytes, and the same messages, as with every tree kept."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import pytest
from trainjob_resources.cli import render as render_cli
from trainjob_resources.process import process
from trainjob_resources.repo import inputs as render_inputs
from trainjob_resources.repo.printing import printed
from trainjob_resources.repo.textitems import DocumentItem

from tests.examples import EXAMPLES
from tests.test_render_goldens import CASE_PARAMS, NEEDS_KUBECTL, outcome

DATA_LOADER = EXAMPLES / "exec-data-loader"

# Documents whose metadata and annotations render's own annotations are added to and taken out of.
EDGE_CASES = """\
apiVersion: v1
kind: ConfigMap
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata:
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty-annotations, annotations: {}}
---
# a comment, 'quoted' values, a block scalar
apiVersion: v1
kind: ConfigMap
metadata:
  name: only-render-annotations
  annotations:
    internal.config.kubernetes.io/path: elsewhere.yaml
    internal.config.kubernetes.io/index: '7'
data:
  script: |
    echo "hi"
  flag: 'yes'
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: in-a-list}}
"""


def _trainjob(name: str, annotations: str) -> str:
    """The example's TrainJob under another name, with ``annotations`` (a flow map) or none."""
    text = (DATA_LOADER / "trainjob.yaml").read_text()
    head, sep, rest = text.partition("\nmetadata:\n")
    assert sep, "the example has a block metadata map"
    extra = f"  annotations: {annotations}\n" if annotations else ""
    body = rest.replace("name: ", f"name: {name}-", 1)
    return f"{head}{sep}{extra}{body}"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "runtime.yaml").write_text((DATA_LOADER / "runtime.yaml").read_text())
    jobs = [_trainjob("a", ""), _trainjob("b", "{}"), _trainjob("c", "{team: x}")]
    (repo / "trainjobs.yaml").write_text("---\n".join(jobs))
    (repo / "edge.yaml").write_text(EDGE_CASES)
    return repo


def _render(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO()))
    code = render_cli.main(args)
    out, err = capsys.readouterr()
    return code, out + "\n--- stderr\n" + err


def _keep_trees(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DocumentItem, "settle", lambda self: None)
    monkeypatch.setattr(DocumentItem, "drop", lambda self: None)


@pytest.mark.parametrize("output", ["yaml", "json"])
@pytest.mark.parametrize("mode", ["materialize", "native"])
def test_dropping_trees_changes_no_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], output: str, mode: str
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.setenv("ARGOCD_ENV_MODE", mode)
    args = [str(repo), "-o", output, "--config-from-env", "--root", str(tmp_path), "--verbose"]
    dropped = _render(args, monkeypatch, capsys)
    with monkeypatch.context() as patched:
        _keep_trees(patched)
        kept = _render(args, monkeypatch, capsys)
    assert dropped[0] == 0, dropped[1]
    assert dropped == kept
    assert "only-render-annotations" in dropped[1] and "internal.config" not in dropped[1]


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_goldens_render_the_same_with_every_tree_kept(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.name in NEEDS_KUBECTL and shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH; this case builds a kustomization")
    dropped = outcome(case)
    _keep_trees(monkeypatch)
    assert outcome(case) == dropped


def test_only_the_runtime_keeps_its_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    resource_list, inputs = render_inputs.load(render_inputs.ReadRequest([str(repo)], root=str(tmp_path)))
    assert not inputs.errors
    read = list(resource_list.items)
    documents = [item for item in read if isinstance(item, DocumentItem)]
    assert len(documents) == len(read) - 1  # the List's item is not a whole document
    held = [item.kind for item in documents if item._node is not None]
    assert held == ["ClusterTrainingRuntime"], "read: only what the bundle index reads again keeps its tree"
    result = process(resource_list, inputs.platform_ids)
    trainjobs = [item for item in documents if item.kind == "TrainJob"]
    assert len(trainjobs) == 3
    assert all(item.dirty for item in trainjobs if item._node is not None) and any(
        item._node is None for item in trainjobs
    )
    changed = [item for item in trainjobs if item._node is None and item.origin is None]
    assert changed, "a TrainJob the function rewrote, with annotations of its own, keeps no tree either"
    # Written once when settled, but for the runtime (never settled) and a map left empty by taking
    # render's annotations out: kustomize prints none, a file keeps it, so that waits for printing.
    unwritten = {item.name for item in documents if item.printed() is None}
    assert unwritten == {"pytorch-distributed", "empty-annotations", "only-render-annotations"}
    texts = list(printed(result, inputs, texts=True))
    assert sum(isinstance(text, str) for text in texts) == len(documents) - len(unwritten)
    assert not [item.name for item in documents if item._node is not None and not item.dirty], "printed, then dropped"


def test_a_kept_trainjob_keeps_its_tree_and_reads_as_the_settled_one(tmp_path: Path) -> None:
    """``check`` (Item.kept) reads each TrainJob as rendered from its tree, not composed again from its text."""

    repo = _repo(tmp_path)

    def rendered(kept: bool) -> list[tuple[bool, object]]:
        resource_list, inputs = render_inputs.load(render_inputs.ReadRequest([str(repo)], root=str(tmp_path)))
        for item in resource_list.items:
            item.kept = kept and item.kind == "TrainJob"
        trainjobs = [item for item in resource_list.items if item.kind == "TrainJob"]
        process(resource_list, inputs.platform_ids)
        return [(item._node is not None, item.value()) for item in trainjobs]

    settled, kept = rendered(False), rendered(True)
    assert len(kept) == 3 and all(held for held, _ in kept)
    assert not all(held for held, _ in settled)
    assert [value for _, value in kept] == [value for _, value in settled]
