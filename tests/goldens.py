"""Golden cases in the kyaml framework's layout (tests/test_goldens.py checks them).

``tests/testdata/success/<case>/input.yaml`` -> ``expected.yaml`` (the whole output ResourceList, exit 0);
``tests/testdata/error/<case>/input.yaml`` -> ``results.yaml`` (the results, exit 1) and ``stderr.txt``
(the lines kustomize shows: what users read).
``make goldens`` rewrites them (tests/kit/golden.py); review the diff.
"""

from __future__ import annotations

import io
from pathlib import Path

import yaml
from trainjob_resources.cli.main import as_main
from trainjob_resources.process import process

TESTDATA = Path(__file__).parent / "testdata"


def run_function(data: bytes) -> tuple[int, bytes, str]:
    """The KRM function in-process: exit code, stdout, stderr."""
    stdout, stderr = io.BytesIO(), io.StringIO()
    code = as_main(process, io.BytesIO(data), stdout, stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def cases(kind: str) -> list[Path]:
    return sorted(p for p in (TESTDATA / kind).iterdir() if (p / "input.yaml").is_file())


def results_of(output: bytes) -> list[object]:
    return list(yaml.safe_load(output).get("results") or [])


def results_text(output: bytes) -> str:
    """The results of an output ResourceList as ``results.yaml`` holds them."""
    return yaml.safe_dump(results_of(output), sort_keys=False, allow_unicode=True, width=1 << 30)
