"""Golden cases in the kyaml framework's layout, and the one command that regenerates them.

``tests/testdata/success/<case>/input.yaml`` -> ``expected.yaml`` (the whole output ResourceList, exit 0);
``tests/testdata/error/<case>/input.yaml`` -> ``results.yaml`` (the results, exit 1) and ``stderr.txt``
(the lines kustomize shows: what users read).
Regenerate with ``make goldens`` and review the diff.
"""

from __future__ import annotations

import io
import sys
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


def regenerate() -> None:
    for case in cases("success"):
        _, out, _ = run_function((case / "input.yaml").read_bytes())
        (case / "expected.yaml").write_bytes(out)
    for case in cases("error"):
        _, out, err = run_function((case / "input.yaml").read_bytes())
        text = yaml.safe_dump(results_of(out), sort_keys=False, allow_unicode=True, width=1 << 30)
        (case / "results.yaml").write_text(text)
        (case / "stderr.txt").write_text(err)
    print(f"regenerated {len(cases('success'))} success and {len(cases('error'))} error goldens", file=sys.stderr)


if __name__ == "__main__":
    regenerate()
