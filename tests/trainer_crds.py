"""The schemas of Kubeflow Trainer's CRDs as the function ships them (package data,
``function/trainjob_resources/trainer/crds/<release>.json``), written from the release's Go module:

    .venv/bin/python -m tests.trainer_crds          # (re)write every release's file
    .venv/bin/python -m tests.trainer_crds --check  # exit 1 if a file differs from its module

``go mod download`` finds the module (in the module cache, or from the Go module proxy); its
``manifests/base/crds/trainer.kubeflow.org_*.yaml`` are what upstream installs and what the local
control plane serves (tests/cluster/build.sh copies the same files; tests/cluster/test_crd_differential.py
compares the package data with the CRDs the API server serves). Of each CRD only the served
version's ``openAPIV3Schema`` is kept, less its ``description`` keywords (the function never
reads them; they are three quarters of the bytes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "function" / "trainjob_resources" / "trainer" / "crds"
MODULE = "github.com/kubeflow/trainer/v2"
# v2.2.0 too: its runtimes' PodSpec differs from v2.2.1's (workloadRef where v2.2.1 has schedulingGroup).
RELEASES = ("v2.3.0", "v2.2.1", "v2.2.0")
FILES = {
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
}


def module_dir(release: str) -> Path:
    """The release's module folder in the Go module cache (downloaded first if it is not there)."""
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{MODULE}@{release}"], check=True, capture_output=True, text=True
    ).stdout
    return Path(json.loads(out)["Dir"])


def without_descriptions(schema: Any) -> Any:
    """``schema`` less every ``description`` keyword (a property named ``description`` stays)."""
    if isinstance(schema, list):
        return [without_descriptions(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description":
            continue
        if key == "properties":
            out[key] = {name: without_descriptions(s) for name, s in value.items()}
        elif key in ("enum", "default", "required", "x-kubernetes-list-map-keys", "x-kubernetes-validations"):
            out[key] = value
        else:
            out[key] = without_descriptions(value)
    return out


def served_schema(crd: dict[str, Any]) -> dict[str, Any]:
    """The schema of the CRD's one served version, less descriptions."""
    (version,) = [v for v in crd["spec"]["versions"] if v.get("served")]
    return {"version": version["name"], "schema": without_descriptions(version["schema"]["openAPIV3Schema"])}


def release_data(release: str, crds: Path) -> dict[str, Any]:
    kinds = {}
    for kind, name in FILES.items():
        crd = yaml.safe_load((crds / name).read_text())
        assert crd["spec"]["names"]["kind"] == kind, name
        kinds[kind] = {"crd": crd["metadata"]["name"], **served_schema(crd)}
    return {"release": release, "source": f"{MODULE}@{release} manifests/base/crds", "kinds": kinds}


def text_of(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=0, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a file differs from its module")
    args = parser.parse_args(argv)
    stale = []
    for release in RELEASES:
        text = text_of(release_data(release, module_dir(release) / "manifests" / "base" / "crds"))
        target = DATA / f"{release}.json"
        if args.check:
            if not target.is_file() or target.read_text() != text:
                stale.append(str(target.relative_to(ROOT)))
            continue
        DATA.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(f"wrote {target.relative_to(ROOT)} ({len(text)} bytes)")
    if stale:
        print(f"stale (run python -m tests.trainer_crds): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
