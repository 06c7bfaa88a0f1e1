"""The CI step docs/explain-and-policy.md documents for the pull-request report, run with bash as
written (issue 50): in a git repository with the base on ``origin/main``, the CLI as installed, and a
``gh`` stand-in that keeps what it would post. Under GitHub Actions' shell options (``bash -e -o
pipefail``) and without any, the step posts the report and exits 1 on a refused change, 0 on one
that renders.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_explain import DATA_LOADER

DOC = Path(__file__).resolve().parents[1] / "docs" / "explain-and-policy.md"
BIN = Path(sys.executable).parent  # trainjob-resources as installed

GH = """#!/bin/sh
# a stand-in for the GitHub CLI: keeps its arguments and the body it would post
printf '%s\\n' "$*" > "$GH_CALLS"
while [ $# -gt 0 ]; do
  if [ "$1" = "--body-file" ]; then cp "$2" "$GH_CALLS.body"; fi
  shift
done
"""


def documented_step() -> str:
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
    (step,) = [b for b in blocks if "gh pr comment" in b]
    return step


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repository(root: Path, change: str) -> Path:
    repo = root / "repo"
    (repo / "overlays" / "prod").mkdir(parents=True)
    jobs = repo / "overlays" / "prod" / "jobs.yaml"
    jobs.write_text(DATA_LOADER.read_text())
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    jobs.write_text(change)
    return repo


CHANGES = {
    "refused": DATA_LOADER.read_text().replace(
        "- name: data-loader\n                      resources", "- name: data-lodaer\n                      resources"
    ),
    "ok": DATA_LOADER.read_text().replace("numNodes: 4", "numNodes: 6"),
}


@pytest.mark.slow
@pytest.mark.parametrize("shell", [["bash", "-e", "-o", "pipefail"], ["bash"]], ids=["actions", "plain"])
@pytest.mark.parametrize("outcome", ["refused", "ok"])
def test_the_documented_step_posts_the_report_and_exits_with_its_status(
    tmp_path: Path, shell: list[str], outcome: str
) -> None:
    assert CHANGES[outcome] != DATA_LOADER.read_text()
    repo = repository(tmp_path, CHANGES[outcome])
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "gh").write_text(GH)
    (tools / "gh").chmod(0o755)
    calls = tmp_path / "gh-calls"
    git_dir = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    done = subprocess.run(
        [*shell, "-c", documented_step()],
        cwd=repo,
        capture_output=True,
        text=True,
        env={
            "PATH": f"{tools}:{BIN}:{git_dir}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PR_NUMBER": "7",
            "GH_CALLS": str(calls),
        },
        timeout=120,
        check=False,
    )
    assert done.returncode == (1 if outcome == "refused" else 0), done.stderr
    assert calls.read_text() == "pr comment 7 --body-file report.md\n", "posted either way"
    body = Path(f"{calls}.body").read_text()
    if outcome == "refused":
        assert body.startswith("**refused: 1 error**\n"), body
        assert "data-lodaer" in body, "the refusal itself, not only stderr"
    else:
        assert body.startswith("**ok**\n"), body
