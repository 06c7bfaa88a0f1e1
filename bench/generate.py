"""Deterministic benchmark workload: one runtime with sidecars, N TrainJobs, some unrelated ConfigMaps.

The same bundle is written twice: as a ResourceList (the function's stdin, with the path and index
annotations kpt adds) and as a kustomize folder (what ``kubectl kustomize`` reads). Items are
written as text, not dumped, so they carry what users' files carry: comments, quoted and flow-style
values, block scalars.

    .venv/bin/python bench/generate.py --n 500 --out /tmp/bundle-500
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

RUNTIME_NAME = "torch-distributed-sidecars"
NAMESPACES = (
    "team-vision",
    "team-nlp",
    "team-speech",
    "team-recsys",
    "team-robotics",
    "research-llm",
    "research-rl",
    "platform-eval",
    "ads-ranking",
    "search-quality",
)
JOB_PREFIXES = ("llama-ft", "resnet-sweep", "whisper-ft", "dlrm-train", "ppo-run", "bert-distill")
DATA_LOADER_SIZES = (
    ("16Gi", "16Gi", "2", "1"),
    ("32Gi", "32Gi", "4", "2"),
    ("64Gi", "48Gi", "8", "4"),
    ("128Gi", "128Gi", "8", "8"),
)
METRICS_SIZES = (("256Mi", "128Mi", "100m"), ("512Mi", "512Mi", "250m"))
GPU_POOLS = ("a100-80g", "h100", "l4")
ZONES = ("us-east1-b", "us-central1-a", "europe-west4-a")


@dataclass(frozen=True)
class Document:
    path: str
    index: int
    text: str


def pick(i: int, what: str, choices: Sequence[str]) -> str:
    """A stable choice (the same on every Python version and platform) for item ``i``."""
    digest = hashlib.sha256(f"{what}:{i}".encode()).digest()
    return choices[int.from_bytes(digest[:4], "big") % len(choices)]


def chance(i: int, what: str, percent: int) -> bool:
    digest = hashlib.sha256(f"{what}:{i}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 < percent


RUNTIME = f"""\
# Platform-provided runtime: PyTorch DDP with a data-loader sidecar (native sidecar,
# KEP-753) and a statsd metrics exporter. Teams resize the sidecars per TrainJob.
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: {RUNTIME_NAME}
  labels:
    trainer.kubeflow.org/framework: torch
    app.kubernetes.io/managed-by: "platform-team"
  annotations:
    platform.example.com/owner: "ml-platform@example.com"
spec:
  mlPolicy:
    numNodes: 1
    torch: {{}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels:
              trainer.kubeflow.org/trainjob-ancestor-step: trainer
          spec:
            template:
              spec:
                initContainers:
                # Blocks until the dataset snapshot is mounted (a regular init container).
                - name: wait-for-data
                  image: "busybox:1.36"
                  command: ["sh", "-c", "until [ -f /data/READY ]; do sleep 2; done"]
                  resources:
                    limits: {{cpu: 100m, memory: 64Mi}}
                    requests: {{cpu: 50m, memory: 32Mi}}
                  volumeMounts:
                  - name: dataset
                    mountPath: /data
                - name: data-loader
                  image: ghcr.io/example/data-loader:v2.3.0
                  restartPolicy: Always   # native sidecar: runs for the whole pod lifetime
                  args:
                  - --cache-dir=/cache
                  - "--prefetch=4"
                  resources:
                    limits:
                      cpu: "2"
                      memory: 8Gi
                    requests:
                      cpu: "1"
                      memory: 8Gi
                  volumeMounts:
                  - name: dataset
                    mountPath: /data
                    readOnly: true
                  - name: cache
                    mountPath: /cache
                containers:
                - name: node
                  image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
                  volumeMounts:
                  - name: cache
                    mountPath: /cache
                - name: metrics
                  image: prom/statsd-exporter:v0.27.1
                  args: ["--statsd.listen-udp=:9125", "--web.listen-address=:9102"]
                  ports:
                  - containerPort: 9102
                    name: metrics
                  resources:
                    limits:
                      memory: 128Mi
                    requests:
                      cpu: 50m
                      memory: 64Mi
                volumes:
                - name: dataset
                  persistentVolumeClaim:
                    claimName: datasets
                - name: cache
                  emptyDir:
                    sizeLimit: 200Gi
"""


def trainjob(i: int, namespace: str) -> str:
    name = f"{pick(i, 'prefix', JOB_PREFIXES)}-{i:05d}"
    team = namespace.split("-", 1)[1]
    mem_limit, mem_request, cpu_limit, cpu_request = DATA_LOADER_SIZES[
        int(pick(i, "loader", [str(k) for k in range(len(DATA_LOADER_SIZES))]))
    ]
    metrics_limit, metrics_request, metrics_cpu = METRICS_SIZES[0 if chance(i, "metrics", 70) else 1]
    nodes = pick(i, "nodes", ("1", "2", "4", "8"))
    pool = pick(i, "pool", GPU_POOLS)
    zone = pick(i, "zone", ZONES)
    lines = [
        f"# {name}: nightly run for {team}.",
        "# Sidecar sizes follow the dataset shard size (see the team runbook).",
        "apiVersion: trainer.kubeflow.org/v1alpha1",
        "kind: TrainJob",
        "metadata:",
        f"  name: {name}",
        f"  namespace: {namespace}",
        "  labels:",
        '    app.kubernetes.io/part-of: "nightly-sweeps"',
        f"    team: '{team}'",
        "  annotations:",
        f'    example.com/owner: "{team}-oncall@example.com"',
        "spec:",
        "  runtimeRef:",
        f"    name: {RUNTIME_NAME}   # the platform's shared runtime",
        "  trainer:",
        f"    numNodes: {nodes}",
        f'    image: "ghcr.io/example/{name.rsplit("-", 1)[0]}:v1.{i % 7}.{i % 3}"',
        '    command: ["torchrun", "train.py"]',
        "    args:",
        f'    - "--epochs={1 + i % 5}"',
        f"    - --lr={pick(i, 'lr', ('3e-5', '1e-4', '5e-4'))}",
        "    resourcesPerNode:",
        "      limits:",
        '        nvidia.com/gpu: "8"',
        "  runtimePatches:",
    ]
    if chance(i, "platform-patch", 40):
        lines += [
            "  # Added by the platform's quota controller: pin to the team's GPU pool.",
            "  - manager: platform.example.com/quota-controller",
            *_pod_spec_header(),
            f'                    nodeSelector: {{pool: "{pool}", "topology.kubernetes.io/zone": {zone}}}',
            "                    tolerations:",
            "                    - key: nvidia.com/gpu",
            "                      operator: Exists",
            "                      effect: NoSchedule",
        ]
        user_scheduling: list[str] = []
    else:
        user_scheduling = [
            "                    nodeSelector:",
            f'                      pool: "{pool}"',
            "                    tolerations:",
            '                    - {key: "nvidia.com/gpu", operator: Exists, effect: NoSchedule}',
        ]
    lines += [
        f"  - manager: ml.example.com/{team}",
        *_pod_spec_header(),
        *user_scheduling,
        "                    initContainers:",
    ]
    if chance(i, "wait-init", 10):
        lines += [
            "                    - name: wait-for-data",
            "                      resources:",
            "                        limits: {cpu: 200m, memory: 128Mi}",
            "                        requests: {cpu: 100m, memory: 64Mi}",
        ]
    lines += [
        "                    - name: data-loader",
        "                      resources:",
        "                        limits:",
        f'                          memory: "{mem_limit}"   # shard cache; runtime default 8Gi',
        f"                          cpu: '{cpu_limit}'",
        "                        requests:",
        f'                          memory: "{mem_request}"',
        f'                          cpu: "{cpu_request}"',
        "                    containers:",
        "                    - name: metrics",
    ]
    if chance(i, "env", 60):
        lines += [
            "                      env:",
            "                      - name: METRICS_PUSH_INTERVAL",
            f'                        value: "{pick(i, "interval", ("15s", "30s", "60s"))}"',
            "                      - name: RUN_LABELS",
            "                        value: |",
            f"                          team={team}",
            f"                          run={i:05d}",
        ]
    lines += [
        "                      resources:",
        f"                        limits: {{memory: {metrics_limit}}}",
        f'                        requests: {{memory: "{metrics_request}", cpu: {metrics_cpu}}}',
    ]
    return "\n".join(lines) + "\n"


def _pod_spec_header() -> list[str]:
    return [
        "    trainingRuntimeSpec:",
        "      template:",
        "        spec:",
        "          replicatedJobs:",
        "          - name: node",
        "            template:",
        "              spec:",
        "                template:",
        "                  spec:",
    ]


def configmap(i: int, namespace: str) -> str:
    return f"""\
# Sweep parameters read by the training script (not touched by any function).
apiVersion: v1
kind: ConfigMap
metadata:
  name: sweep-params-{i:05d}
  namespace: {namespace}
data:
  learning_rate: "{pick(i, "cm-lr", ("3e-5", "1e-4", "5e-4"))}"
  batch_size: '{pick(i, "cm-batch", ("32", "64", "128"))}'
  enable_amp: "true"
  notes: |
    Sweep {i:05d}; owner {namespace}.
    Results go to gs://example-ml-results/{namespace}/{i:05d}/
"""


def item_count(n: int) -> int:
    return 1 + n + max(1, n // 5)


def documents(n: int) -> list[Document]:
    """The bundle, in file order: the runtime, then each namespace's TrainJobs, then the ConfigMaps."""
    docs = [Document("runtime.yaml", 0, RUNTIME)]
    by_namespace: dict[str, list[str]] = {}
    for i in range(n):
        namespace = NAMESPACES[i % len(NAMESPACES)]
        by_namespace.setdefault(namespace, []).append(trainjob(i, namespace))
    for namespace, texts in by_namespace.items():
        docs += [Document(f"trainjobs/{namespace}.yaml", k, t) for k, t in enumerate(texts)]
    docs += [
        Document("configmaps.yaml", k, configmap(k, NAMESPACES[(k * 3) % len(NAMESPACES)]))
        for k in range(max(1, n // 5))
    ]
    return docs


def _annotated(doc: Document) -> str:
    """The document with kpt's path and index annotations (both spellings, as kpt v1 sends them)."""
    annotations = (
        f"    config.kubernetes.io/index: '{doc.index}'\n"
        f"    config.kubernetes.io/path: '{doc.path}'\n"
        f"    internal.config.kubernetes.io/index: '{doc.index}'\n"
        f"    internal.config.kubernetes.io/path: '{doc.path}'\n"
    )
    head, sep, rest = doc.text.partition("\n  annotations:\n")
    if sep:
        return head + sep + annotations + rest
    head, sep, rest = doc.text.partition("\nmetadata:\n")
    return head + sep + "  annotations:\n" + annotations + rest


def _as_item(text: str) -> str:
    out: list[str] = []
    first = True
    for line in text.splitlines():
        if first and not line.startswith("#"):
            out.append(f"- {line}")
            first = False
        else:
            out.append(f"  {line}" if line else line)
    return "\n".join(out) + "\n"


def resource_list(n: int) -> str:
    items = "".join(_as_item(_annotated(doc)) for doc in documents(n))
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}"


def kustomize_files(n: int) -> dict[str, str]:
    """Relative path -> content: kustomization.yaml and the resource files it lists."""
    files: dict[str, list[str]] = {}
    for doc in documents(n):
        files.setdefault(doc.path, []).append(doc.text)
    kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
    kustomization += "".join(f"- {path}\n" for path in files)
    out = {"kustomization.yaml": kustomization}
    out |= {path: "---\n".join(texts) for path, texts in files.items()}
    return out


def write(n: int, out: Path) -> tuple[Path, Path]:
    """Write ``out/resourcelist.yaml`` and ``out/kustomize/``; return both paths."""
    out.mkdir(parents=True, exist_ok=True)
    rl = out / "resourcelist.yaml"
    rl.write_text(resource_list(n))
    folder = out / "kustomize"
    for rel, text in kustomize_files(n).items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return rl, folder


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, required=True, help="number of TrainJobs")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    args = parser.parse_args(argv)
    write(args.n, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
