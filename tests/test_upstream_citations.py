"""Every kubeflow/trainer path the code and docs cite exists upstream (issue 12).

``testdata/upstream/trainer-files.txt`` lists kubeflow/trainer's files at the commit its first line
names; regenerate it with the command on its second line when moving to a newer upstream.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
FILES = ROOT / "tests" / "testdata" / "upstream" / "trainer-files.txt"
# Path prefixes that are kubeflow/trainer's (pkg/apis/core, pkg/util/strategicpatch, ... are Kubernetes').
TRAINER_PREFIXES = (
    "pkg/runtime/",
    "pkg/apis/trainer/",
    "pkg/apis/config/",
    "pkg/util/trainingruntime/",
    "pkg/util/trainjob/",
    "pkg/webhooks/",
    "pkg/constants/",
    "pkg/controller/",
    "manifests/",
)
# not inside a URL or another path (another project's ``.../manifests/install.yaml``)
CITED = re.compile(r"(?<![\w./-])(?:pkg|manifests)/[A-Za-z0-9_./-]*[A-Za-z0-9_]")


def cited() -> dict[str, list[str]]:
    sources = [*sorted((ROOT / "function").rglob("*.py")), ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    out: dict[str, list[str]] = {}
    for source in sources:
        for path in CITED.findall(source.read_text()):
            if path.startswith(TRAINER_PREFIXES):
                out.setdefault(path, []).append(str(source.relative_to(ROOT)))
    return out


def test_cited_upstream_paths_exist() -> None:
    upstream = {line for line in FILES.read_text().splitlines() if line and not line.startswith("#")}
    directories = {str(Path(f).parent) for f in upstream} | {str(p) for f in upstream for p in Path(f).parents}
    found = cited()
    missing = {path: where for path, where in found.items() if path not in upstream and path not in directories}
    assert missing == {}
    assert "pkg/runtime/core/trainingruntime.go" in found  # the check reads what it should


def test_the_check_finds_a_missing_path() -> None:
    upstream = set(FILES.read_text().splitlines())
    assert "pkg/util/trainingruntime/resourcerequirements.go" not in upstream  # cited once, gone at HEAD
    assert CITED.findall("see ``pkg/util/trainingruntime/resourcerequirements.go``.") == [
        "pkg/util/trainingruntime/resourcerequirements.go"
    ]
