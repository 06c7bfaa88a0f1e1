"""The short fuzzing run of CI (about 15 s): the fuzz target's check on mutated golden inputs and raw
bytes (hypothesis), and a few seconds of coverage-guided atheris when it is installed. The long run
is documented in fuzz_reader.py and docs/hardening.md."""

from __future__ import annotations

import base64
import codecs
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.fuzz_reader import SEEDS, check, seed_corpus

HERE = Path(__file__).parent
DICTIONARY = HERE / "yaml.dict"


def tokens() -> list[bytes]:
    out = []
    for line in DICTIONARY.read_text().splitlines():
        if line.startswith('"'):
            out.append(codecs.escape_decode(line[1:-1].encode())[0])
    return out


TOKENS = tokens()
SEED_BYTES = [p.read_bytes() for p in SEEDS]


@st.composite
def mutated_seeds(draw: st.DrawFn) -> bytes:
    """A golden input with a few edits of the kinds libFuzzer makes: tokens in, spans out or doubled, bytes flipped."""
    data = bytearray(draw(st.sampled_from(SEED_BYTES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["token", "delete", "duplicate", "byte"]))
        if edit == "token":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif edit == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif edit == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(1, 200))]
        elif at < len(data):
            data[at] = draw(st.integers(0, 255))
    return bytes(data)


FUZZ_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@pytest.mark.slow
@FUZZ_SETTINGS
@given(data=mutated_seeds())
def test_mutated_golden_inputs(data: bytes) -> None:
    check(data)


@pytest.mark.slow
@FUZZ_SETTINGS
@given(data=st.binary(max_size=512) | st.text(max_size=256).map(str.encode))
def test_arbitrary_bytes(data: bytes) -> None:
    check(data)


@pytest.mark.slow
def test_atheris_short_run(tmp_path: Path) -> None:
    if importlib.util.find_spec("atheris") is None:
        pytest.skip("atheris is not installed (pip install atheris==3.0.0); the hypothesis runs above still fuzz")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seed_corpus(corpus)
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "fuzz_reader.py"),
            f"-dict={DICTIONARY}",
            "-max_total_time=8",
            "-rss_limit_mb=2048",
            "-timeout=20",
            f"-artifact_prefix={tmp_path}/",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    crashes = sorted(p for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert done.returncode == 0 and not crashes, failure_report(done, crashes)


def failure_report(done: subprocess.CompletedProcess[str], crashes: list[Path]) -> str:
    """What a failed run needs to be replayed: atheris prints the Python exception on stdout and
    libFuzzer its own lines on stderr; each input that failed is shown in base64."""
    inputs = [f"{p.name} (base64): {base64.b64encode(p.read_bytes()).decode()}" for p in crashes]
    return "\n".join([done.stdout[-3000:], done.stderr[-1500:], *inputs])


FINDINGS = sorted((HERE / "findings").glob("*.yaml"))


@pytest.mark.parametrize("finding", FINDINGS, ids=[p.stem for p in FINDINGS])
def test_what_the_fuzzers_found_keeps_the_property(finding: Path) -> None:
    check(finding.read_bytes())
