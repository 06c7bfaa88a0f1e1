"""A file of an overlay that is not YAML: the error names the user's file and its own line (issue 50:
kustomize's ``MalformedYAMLError: yaml: line N`` counts within the file's document, so a broken second
document was named several lines off). Run through ``render`` as installed, on the real kustomize
(v5.8.2 and v5.4.3 built by ``make cluster``, and ``kubectl kustomize``); the oracle is PyYAML's own
mark on the whole file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

EXECUTABLE = Path(sys.executable).parent / "trainjob-resources"
GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  namespace: team-a\n"
BROKEN = {
    "flow-in-one-document": GOOD + 'data:\n  a: "1"\n  b: [unclosed\n  c: "3"\n',
    "quote-in-a-second-document": GOOD + "---\n" + GOOD.replace("first", "second") + 'data:\n  b: "2\n  c: 3\n',
    "tab-in-a-third-document": GOOD + "---\n" + GOOD + "---\n" + GOOD + "data:\n\ta: 1\n",
}


def oracle_line(text: str) -> int:
    try:
        list(yaml.compose_all(text))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        assert mark is not None
        return mark.line + 1
    raise AssertionError("the text is YAML")


@pytest.fixture(params=["v5.8.2", "v5.4.3", "kubectl"])
def kustomize_path(request: pytest.FixtureRequest, tmp_path: Path, kubectl: str) -> str:
    """A PATH whose kustomize is the one asked for (render runs ``kustomize build``, else ``kubectl kustomize``)."""
    if request.param == "kubectl":
        return f"{Path(kubectl).parent}:/usr/bin:/bin"
    paths: dict[str, Any] = request.getfixturevalue("cluster_paths")
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "kustomize").symlink_to(paths["kustomize"][request.param])
    return f"{tools}:/usr/bin:/bin"


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.parametrize("where", ["overlay", "base"])
def test_the_error_names_the_file_and_its_line(tmp_path: Path, kustomize_path: str, case: str, where: str) -> None:
    repo = tmp_path / "repo"
    (repo / "base").mkdir(parents=True)
    (repo / "overlay").mkdir()
    (repo / "base" / "kustomization.yaml").write_text(
        "resources:\n- broken.yaml\n" if where == "base" else "resources: []\n"
    )
    (repo / "overlay" / "kustomization.yaml").write_text(
        "resources:\n- ../base\n" + ("- broken.yaml\n" if where == "overlay" else "")
    )
    (repo / where / "broken.yaml").write_text(BROKEN[case])
    done = subprocess.run(
        [str(EXECUTABLE), "render", "overlay"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={"PATH": kustomize_path},
        check=False,
    )
    assert done.returncode == 1, done.stderr
    line = oracle_line(BROKEN[case])
    said = re.search(rf"{where}/broken\.yaml: invalid YAML: [^(]+\(line (\d+), column \d+\)", done.stderr)
    assert said, done.stderr
    assert int(said.group(1)) == line, done.stderr
    assert "MalformedYAMLError: yaml: line" not in done.stderr, "kustomize's document-relative line is gone"
