"""Issue 46's benchmark: the output bounds hold whatever the input asks for.

Two hostile families, each at growing sizes, through the installed command (one process per run;
peak RSS and CPU from ``os.wait4``):

- aliases: one runtime whose one env value (200 KB) is aliased A times, and 10 TrainJobs with
  distinct overrides, through the KRM function (a ResourceList on stdin) and ``render`` (which
  prints nothing on an error): a derived runtime is written with every alias written out, so each
  is A x 200 KB; the derived runtimes hold at most 64 MiB, and a base past what is left is counted,
  never held;
- explain: a runtime of C containers and 200 TrainJobs using it, through ``explain --format json``
  and ``--against`` a copy: the explanations hold at most 32 MiB, both sides together.

Prints a table of input bytes, output bytes, peak RSS and CPU per case, and writes it as JSON.

    .venv/bin/python bench/bounds.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FUNCTION = ROOT / ".venv" / "bin" / "trainjob-resources"
RESULTS = Path(__file__).resolve().parent / "results"

sys.path.insert(0, str(ROOT))
from tests.kit import build  # noqa: E402  (the tests' builders, from the checkout's root)


def aliased(aliases: int, trainjobs: int = 10, value_bytes: int = 200 * 1024) -> str:
    """Issue 46's runtime (one env value of ``value_bytes`` aliased ``aliases`` times) and ``trainjobs``
    TrainJobs, each sizing its sidecar differently."""
    jobs = (build.sized_trainjob(f"tj-{i}", {"memory": f"{i + 1}Gi"}) for i in range(trainjobs))
    return build.yaml_text(build.aliased_runtime(value_bytes, aliases), *jobs)


def wide(containers: int, trainjobs: int = 200) -> str:
    """A runtime whose trainer has ``containers`` containers, and ``trainjobs`` TrainJobs using it."""
    entries = [{"name": f"c{i}", "image": "x", "resources": {"requests": {"cpu": 1}}} for i in range(containers)]
    jobs = (build.trainjob(f"tj-{i}", "torch", namespace="team-a") for i in range(trainjobs))
    return build.yaml_text(build.trainer_runtime("torch", containers=entries), *jobs)


def as_resource_list(text: str) -> str:
    """The documents of ``text`` as the items of a ResourceList (the KRM function's input)."""
    items = "".join("- " + doc.strip("\n").replace("\n", "\n  ") + "\n" for doc in text.split("---\n") if doc.strip())
    return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items


def run(argv: list[str], cwd: Path, stdin: Path | None = None) -> dict[str, Any]:
    """One run: exit status, stdout bytes, peak RSS (MB) and CPU seconds of the child."""
    with tempfile.TemporaryFile() as out, stdin.open("rb") if stdin else open(os.devnull, "rb") as source:
        proc = subprocess.Popen(argv, cwd=cwd, stdin=source, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        size = out.seek(0, os.SEEK_END)
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "output_bytes": size,
        "peak_rss_mb": round(usage.ru_maxrss * 1024 / 1e6, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
    }


def case(name: str, text: str, arguments: list[str], against: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "app").mkdir()
        (root / "app" / "all.yaml").write_text(text)
        (root / "resourcelist.yaml").write_text(as_resource_list(text))
        if against:
            shutil.copytree(root / "app", root / "base" / "app")
        result = run([str(FUNCTION), *arguments], root, root / "resourcelist.yaml" if not arguments else None)
    return {"case": name, "input_bytes": len(text.encode()), **result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for bounds-latest.json")
    options = parser.parse_args()
    rows = [case(f"function, 200 KB aliased {a}x, 10 TrainJobs", aliased(a), []) for a in (49, 199, 999)]
    rows += [case(f"render, 200 KB aliased {a}x, 10 TrainJobs", aliased(a), ["render", "app"]) for a in (199, 999)]
    rows += [
        case(f"explain json, {c} containers x 200 TrainJobs", wide(c), ["explain", "app", "--format", "json"])
        for c in (100, 1000, 4000)
    ]
    rows += [
        case(
            "explain --against json, 1000 containers x 200 TrainJobs",
            wide(1000),
            ["explain", "app", "--against", "base", "--format", "json"],
            against=True,
        )
    ]
    print("| case | input | exit | output | peak RSS | CPU |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(
            f"| {row['case']} | {row['input_bytes'] / 1e6:.2f} MB | {row['exit']} | {row['output_bytes'] / 1e6:.1f} MB "
            f"| {row['peak_rss_mb']} MB | {row['cpu_s']} s |"
        )
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "bounds-latest.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
