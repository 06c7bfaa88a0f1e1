"""Applying a golden's or an example's objects to the control plane, each case in namespaces of its own."""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.controlplane import JOBSET, ControlPlane, KubectlError
from tests.cluster.lifecycle import (
    CLUSTER_SCOPED,
    NOT_YET,
    RUNTIME_KINDS,
    argocd_order,
    identity,
    runtime_of,
    until_admitted,
)

LOCAL_CONFIG = "config.kubernetes.io/local-config"
UPSTREAM = Path("/root/go/pkg/mod/github.com/kubeflow/trainer/v2@v2.3.0")


def namespace_map(objects: Iterable[dict[str, Any]], case: str) -> dict[str, str]:
    """Each namespace the objects name ("" for none) -> one of this case's own."""
    short = re.sub(r"[^a-z0-9-]", "-", case.lower())[:40].strip("-")
    names = {str((o.get("metadata") or {}).get("namespace") or "") for o in objects}
    return {n: f"{short}-{n or 'default'}"[:63].strip("-") for n in sorted(names)}


def placed(obj: dict[str, Any], namespaces: dict[str, str]) -> dict[str, Any]:
    """The object in the case's namespace, without the annotations of the orchestrators' bookkeeping."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    for key in [k for k in annotations if k.startswith(("internal.config.kubernetes.io/", "config.kubernetes.io/"))]:
        del annotations[key]
    if not annotations:
        meta.pop("annotations", None)
    if out.get("kind") not in CLUSTER_SCOPED:
        meta["namespace"] = namespaces[str(meta.get("namespace") or "")]
    return out


def deployable(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a deployer applies: no local-config object, no function config, no Kptfile."""
    out = []
    for obj in objects:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if str(annotations.get(LOCAL_CONFIG)) == "true" or obj.get("kind") in ("Kptfile", "TrainJobResources"):
            continue
        if not obj.get("apiVersion") or obj.get("kind") in ("ResourceList",):
            continue
        out.append(obj)
    return out


def apply_all(cp: ControlPlane, objects: list[dict[str, Any]], wave_delay: float = 0.5) -> dict[str, str]:
    """Server-side apply as Argo CD (field manager argocd-controller), runtimes before the rest; returns the
    refusals by object."""
    refused: dict[str, str] = {}
    # Runtimes first, then a pause like Argo CD's between waves. The TrainJob webhook reads runtimes from the
    # controller's cache, which a TrainJob applied right after its runtime can outrun however long the pause
    # on a loaded machine: a TrainJob naming a runtime applied here is retried while the webhook has not seen it.
    first = [o for o in objects if o.get("kind") in ("Namespace", *RUNTIME_KINDS)]
    rest = [o for o in objects if o.get("kind") not in ("Namespace", *RUNTIME_KINDS)]
    runtimes: set[tuple[str, str, str]] = set()  # applied here
    for number, group in enumerate((first, rest)):
        if number and first:
            time.sleep(wave_delay)
        for obj in [o for wave in argocd_order(group) for o in wave]:
            try:
                if obj.get("kind") == "TrainJob" and runtime_of(obj) in runtimes:
                    apply_admitted(cp, json.dumps(obj), force_conflicts=True)
                else:
                    cp.apply_server_side(json.dumps(obj), force_conflicts=True)
            except KubectlError as error:
                refused[f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"] = str(error)
                continue
            if obj.get("kind") in RUNTIME_KINDS:
                runtimes.add(identity(obj, ""))
    return refused


def apply_admitted(cp: ControlPlane, text: str, *, force_conflicts: bool = False) -> None:
    """Server-side apply of objects with a TrainJob whose runtime is in the cluster (``until_admitted``)."""
    until_admitted(lambda: cp.apply_server_side(text, force_conflicts=force_conflicts))


def submit(cp: ControlPlane, obj: dict[str, Any], *, dry_run: bool = False, validate: str = "strict") -> Any:
    """`kubectl create` (or a server-side dry run of it); retried while the TrainJob webhook's cache has
    not seen the runtime yet (README: what upstream did when run). The completed kubectl."""
    args = ["create", f"--validate={validate}", "-o", "json", "-f", "-"] + (["--dry-run=server"] if dry_run else [])
    deadline = time.monotonic() + 15
    while True:
        done = cp.kubectl(*args, input=json.dumps(obj), check=False)
        if NOT_YET not in done.stderr or time.monotonic() > deadline:
            return done
        time.sleep(0.1)


def create_namespaces(cp: ControlPlane, namespaces: dict[str, str]) -> None:
    for namespace in namespaces.values():
        if cp.get("namespace", namespace) is None:
            cp.kubectl("create", "namespace", namespace)


def cleanup(cp: ControlPlane, objects: Iterable[dict[str, Any]]) -> None:
    """Deletes the cluster-scoped runtimes a case applied (its namespaces are its own, never reused)."""
    for obj in objects:
        if obj.get("kind") == "ClusterTrainingRuntime":
            cp.delete("clustertrainingruntimes.trainer.kubeflow.org", obj["metadata"]["name"], wait=False)


def platform_runtimes(names: set[str]) -> list[dict[str, Any]]:
    """Upstream's own ClusterTrainingRuntimes (manifests/base/runtimes of the v2.3.0 module) of these names:
    what the Trainer Helm chart installs, for cases whose TrainJobs use an installed runtime."""
    found = []
    for path in sorted((UPSTREAM / "manifests" / "base" / "runtimes").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "ClusterTrainingRuntime" and doc["metadata"]["name"] in names:
                found.append(doc)
    return found


__all__ = [
    "JOBSET",
    "UPSTREAM",
    "apply_all",
    "cleanup",
    "create_namespaces",
    "deployable",
    "namespace_map",
    "placed",
    "platform_runtimes",
]
