"""The README's minimal platform policy (issue 50), run as written: the block given to the CLI as
installed with ``--config``; a TrainJob within its caps renders, one whose sidecar goes past
``maxPerRole.sidecar`` is refused, naming the option."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_pr_report import loader

README = Path(__file__).resolve().parents[1] / "README.md"
EXECUTABLE = Path(sys.executable).parent / "trainjob-resources"


def readme_policy() -> str:
    (policy,) = [b for b in re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S) if "TrainJobResources" in b]
    return policy


@pytest.mark.parametrize(("memory", "refused"), [("64Gi", False), ("96Gi", True)])
def test_the_readme_policy_caps_the_sidecar(tmp_path: Path, memory: str, refused: bool) -> None:
    (tmp_path / "platform.yaml").write_text(readme_policy())
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "jobs.yaml").write_text(loader(memory))
    done = subprocess.run(
        [str(EXECUTABLE), "render", "app", "--config", "platform.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == (1 if refused else 0), done.stderr
    if refused:
        assert "functionConfig maxPerRole.sidecar" in done.stderr and f"memory {memory}" in done.stderr
    else:
        assert "kind: TrainJob" in done.stdout
