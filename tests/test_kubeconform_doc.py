"""The kubeconform commands docs/integrations.md documents, run as written with bash (issue 50: the
documented command fetched Kubernetes' schemas from GitHub, so failed offline, and given an overlay's
folder checked only its ``kustomization.yaml``). On a copy of an example overlay, with no network and
kubeconform v0.7.0 (``make kubeconform``): every TrainJob of the render is checked and valid."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_schema import kubeconform as kubeconform  # the fixture: built, or a skip (a failure in CI)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "integrations.md"
EXAMPLE = ROOT / "kustomization-examples" / "argocd-cmp-kustomize"


def blocks() -> list[str]:
    section = DOC.read_text().split("## Schemas for editors and kubeconform", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


@pytest.mark.kubectl
def test_the_documented_kubeconform_step_checks_the_rendered_trainjobs_offline(
    kubeconform: Path, kubectl: str, tmp_path: Path
) -> None:
    work = tmp_path / "repo"
    shutil.copytree(EXAMPLE, work)
    env = {
        "PATH": f"{Path(sys.executable).parent}:{kubeconform.parent}:{Path(kubectl).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        # no proxy and no route: a fetch from GitHub fails fast instead of passing
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    schemas, validate = blocks()
    assert "kubeconform" in validate and "trainjob-resources schema" in schemas
    for block in (schemas, validate):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block], cwd=work, capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, (block, done.stdout, done.stderr)
    rendered = [d for d in yaml.safe_load_all((work / "rendered.yaml").read_text()) if d]
    trainjobs = sum(d["kind"] == "TrainJob" for d in rendered)
    summary = re.search(r"Valid: (\d+), Invalid: (\d+), Errors: (\d+), Skipped: (\d+)", done.stdout)
    assert summary, done.stdout
    valid, invalid, failed, skipped = map(int, summary.groups())
    assert trainjobs >= 1 and (valid, invalid, failed) == (trainjobs, 0, 0), done.stdout
    assert valid + skipped == len(rendered), "every object of the render read, not kustomization.yaml alone"
