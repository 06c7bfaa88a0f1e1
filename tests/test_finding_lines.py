"""A finding on a field the render removes names the field's own line (issue 50: the ``memory: 256``
warning named line 84, the TrainJob's first, instead of the value's; the rewrite had removed the
patch's ``resources`` from the tree the line is looked up in). Through the CLI as installed; the
oracle is the file itself, read by ``yaml.compose`` apart from the package."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_explain import DATA_LOADER

EXECUTABLE = Path(sys.executable).parent / "trainjob-resources"
REQUEST = "                          memory: 64Gi\n"


def line_of(text: str, document: int, path: str) -> int:
    """The 1-based line of the key ``path`` ends with, in the ``document``-th document of ``text``."""
    node = list(yaml.compose_all(text))[document]
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            node = node.value[int(part[1:-1])]
        else:
            key, node = next((k, v) for k, v in node.value if k.value == part)
    return key.start_mark.line + 1  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "written",
    [
        REQUEST.replace("64Gi", "256"),  # block style, the issue's
        "                          memory: 256   # bytes?\n",
        "                          {memory: 256}\n",  # flow style: the key's line is the value's
    ],
    ids=["block", "commented", "flow"],
)
@pytest.mark.parametrize("command", ["render", "explain"])
def test_the_warning_names_the_values_line(tmp_path: Path, written: str, command: str) -> None:
    text = DATA_LOADER.read_text()
    if written.strip().startswith("{"):
        text = text.replace(
            "                        requests:\n" + REQUEST + '                          cpu: "4"\n',
            "                        requests:\n" + written,
        )
    else:
        text = text.replace(REQUEST, written)
    assert "256" in text
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "jobs.yaml").write_text(text)
    done = subprocess.run([str(EXECUTABLE), command, "app"], cwd=tmp_path, capture_output=True, text=True, check=False)
    (warning,) = [line for line in done.stderr.splitlines() if "is 256 bytes" in line]
    named, path = re.match(r"warning: app/jobs\.yaml:(\d+): TrainJob [^:]+: ([^:]+):", warning).groups()  # type: ignore[union-attr]
    assert int(named) == line_of(text, 2, path), warning
    assert text.splitlines()[int(named) - 1].strip().startswith(("memory: 256", "{memory: 256}"))
