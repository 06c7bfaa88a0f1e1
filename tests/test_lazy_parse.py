"""A TrainJob read lazily is parsed once, when it is processed: no check of its text up front.

``krm.read`` used to parse every TrainJob's text with libyaml before anything else, to know that
it reads on its own (else the whole document is read, whose error says where the input is broken).
Now its first reading finds that out and the command starts again from the whole document
(``krm.NotSplittable``). The oracle here is that check, made up front as before: every output
(stdout, stderr, exit code) must be the one it gives, wherever the broken TrainJob sits, in this
process or in the fork, whatever else is wrong with the input.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from trainjob_resources.cli import fan_out, main
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.krm.item import document_of
from trainjob_resources.process import process
from trainjob_resources.yamltext import layout
from trainjob_resources.yamltext import yamlnodes as yn

GENERATOR = Path(__file__).resolve().parent.parent / "bench" / "generate.py"
TRAINJOB = "\n  kind: TrainJob\n"

# Lines put among a TrainJob's top-level keys: text that does not parse on its own, and one that
# parses but does not compose (an alias to no anchor: an error of the TrainJob's own).
BROKEN = {
    "unclosed flow": "  oops: [unclosed, {a: 1}\n",
    "bad indentation": "  oops:\n    - a\n    b: 1\n",
    "a tab": "  oops:\n\t- a\n",
    "unterminated quote": "  oops: 'open\n",
    "text after a quoted scalar": '  oops: "a" b\n',
    # Alone, the item's text ends there ("expected <document start>"); the whole document says
    # "expected key": only this one tells the two readings apart by their message.
    "a line left of the item's keys": " oops: 1\n",
}
UNCOMPOSABLE = "  oops: *nowhere\n"


def _bundle(n: int, tmp: Path) -> bytes:
    subprocess.run([sys.executable, str(GENERATOR), "--n", str(n), "--out", str(tmp)], check=True)
    return (tmp / "resourcelist.yaml").read_bytes()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _bundle(3, tmp_path_factory.mktemp("small"))


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _bundle(fan_out.MIN_TRAINJOBS + 20, tmp_path_factory.mktemp("large"))


def _break(data: bytes, which: int, line: str) -> bytes:
    """``line`` put after the ``kind:`` of TrainJob number ``which`` (negative: from the end)."""
    text = data.decode()
    starts = [m.end() for m in re.finditer(re.escape(TRAINJOB), text)]
    at = starts[which]
    return (text[:at] + line + text[at:]).encode()


def _with_config(data: bytes, config: str) -> bytes:
    text = data.decode()
    assert "\nfunctionConfig:" not in text
    return (text.rstrip("\n") + "\n" + config).encode()


def _checked_first(data: bytes, by_items: bool = True) -> krm.ResourceList:
    """``krm.read`` with the check it made before: every TrainJob's text parsed up front."""
    if by_items:
        shape = layout.split(yn.decode(data))
        if shape is not None and any(
            krm._lazy_hint(chunk.text, shape.dash) is not None
            and not yn.well_formed(document_of(chunk.text, shape.dash))
            for chunk in shape.chunks
        ):
            by_items = False
    return READ(data, by_items=by_items)


READ = krm.read


def _run(data: bytes, read: Callable[..., krm.ResourceList], monkeypatch: pytest.MonkeyPatch) -> tuple[int, bytes, str]:
    with monkeypatch.context() as patched:
        patched.setattr(krm, "read", read)
        stdout, stderr = io.BytesIO(), io.StringIO()
        code = main.as_main(lambda rl: process(rl, fan_out=fan_out.forked), io.BytesIO(data), stdout, stderr)
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture
def lazily(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], tuple[int, bytes, str]]]:
    """The command as it is, and a check that the oracle gives the same."""
    outputs: list[tuple[bytes, tuple[int, bytes, str]]] = []

    def run(data: bytes) -> tuple[int, bytes, str]:
        got = _run(data, READ, monkeypatch)
        outputs.append((data, got))
        return got

    yield run
    for data, got in outputs:
        assert got == _run(data, _checked_first, monkeypatch)


@pytest.mark.parametrize("line", BROKEN.values(), ids=BROKEN.keys())
@pytest.mark.parametrize("which", [0, 1, -1], ids=["first", "second", "last"])
def test_a_trainjob_that_does_not_parse_reads_the_whole_document(
    small: bytes, line: str, which: int, lazily: Callable[[bytes], tuple[int, bytes, str]]
) -> None:
    code, stdout, stderr = lazily(_break(small, which, line))
    assert code == 1
    assert "invalid YAML" in stderr, stderr
    assert b"kind: TrainJob" not in stdout, "nothing of the broken input is written as items"


def test_a_trainjob_that_parses_but_does_not_compose_is_its_own_error(
    small: bytes, lazily: Callable[[bytes], tuple[int, bytes, str]]
) -> None:
    broken = _break(small, 1, UNCOMPOSABLE)
    line = broken.decode().splitlines().index(UNCOMPOSABLE.rstrip("\n")) + 1  # the whole input's line
    code, _, stderr = lazily(broken)
    assert code == 1
    assert f"undefined alias (line {line}, column 9)" in stderr, stderr


@pytest.mark.parametrize(
    "config",
    [
        "functionConfig: 3\n",  # read() refuses it once the items are read
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {mode: bogus}\n",
    ],
    ids=["not a mapping", "a bad option"],
)
def test_the_broken_trainjob_is_reported_before_a_bad_function_config(
    small: bytes, config: str, monkeypatch: pytest.MonkeyPatch, lazily: Callable[[bytes], tuple[int, bytes, str]]
) -> None:
    assert _run(_with_config(small, config), READ, monkeypatch)[0] == 1, "the config alone is refused"
    code, _, stderr = lazily(_with_config(_break(small, -1, BROKEN["unclosed flow"]), config))
    assert code == 1
    assert "invalid YAML" in stderr, stderr


def _reaped(pid: int) -> bool:
    """Whether the child ``pid`` is gone and was waited for (by the function, not here)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("which", [5, -5], ids=["in this process", "in the fork"])
def test_a_broken_trainjob_in_a_forked_bundle(
    large: bytes, which: int, monkeypatch: pytest.MonkeyPatch, lazily: Callable[[bytes], tuple[int, bytes, str]]
) -> None:
    monkeypatch.setattr(fan_out, "workers", lambda: 2)
    forks: list[Any] = []
    original = fan_out._start

    def counting(*args: Any) -> Any:
        child = original(*args)
        forks.append(child)
        return child

    monkeypatch.setattr(fan_out, "_start", counting)
    code, _, stderr = lazily(_break(large, which, BROKEN["bad indentation"]))
    assert code == 1
    assert "invalid YAML" in stderr, stderr
    assert forks and forks[0] is not None, "the first try forked"
    assert all(_reaped(pid) for pid, _ in forks), "every fork was reaped"


def test_an_intact_bundle_reads_by_items(small: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    whole: list[bool] = []

    def recording(data: bytes, by_items: bool = True) -> krm.ResourceList:
        whole.append(not by_items)
        return READ(data, by_items=by_items)

    assert _run(small, recording, monkeypatch)[0] == 0
    assert whole == [False]
