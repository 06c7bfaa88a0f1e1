"""Shared by the hostile-input, property and fuzz suites: a valid bundle, the function run in a real
process under hard limits, and the checks every output must pass whatever the input was."""

from __future__ import annotations

import gc
import json
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.kit import build

HEADER = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
MiB = 1024 * 1024
EXECUTABLE = Path(sys.executable).parent / "trainjob-resources"

# The runtime as text: the hostile suites edit its YAML (flow mappings, a key's indentation) to break it.
RUNTIME = """\
- apiVersion: trainer.kubeflow.org/v1alpha1
  kind: ClusterTrainingRuntime
  metadata:
    name: torch
    labels: {trainer.kubeflow.org/framework: torch}
  spec:
    mlPolicy: {numNodes: 1, torch: {}}
    template:
      spec:
        replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  initContainers:
                  - name: loader
                    image: busybox
                    restartPolicy: Always
                    resources: {limits: {memory: 8Gi}, requests: {memory: 8Gi}}
                  containers:
                  - name: node
                    image: pytorch/pytorch
"""

CONFIG_MAP = """\
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings, annotations: {internal.config.kubernetes.io/path: cm.yaml}}
  data:
    quoted: "true"
    octal: '0755'
    text: |
      kept as written
"""


def trainjob_value(name: str = "tj", memory: Any = "64Gi") -> dict[str, Any]:
    """A TrainJob that sizes the runtime's ``loader`` sidecar."""
    return build.sized_trainjob(name, {"memory": memory}, {"memory": memory})


def trainjob_yaml(value: dict[str, Any]) -> str:
    return yaml.safe_dump([value], sort_keys=False, width=1 << 20)


def bundle(*items: str) -> bytes:
    """A ResourceList of the given items (each a YAML block-sequence entry)."""
    return HEADER + b"items:\n" + "".join(items).encode()


class TolerantLoader(yaml.CSafeLoader):
    """Safe loading that builds a tag it does not know by the node's kind, as Go's YAML libraries
    do, so the tests can read back inputs that carry ``!!python/...`` or custom tags."""


def _by_kind(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _lenient(method: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def construct(loader: Any, node: Any) -> Any:
        try:
            return method(loader, node)
        except (ArithmeticError, LookupError, ValueError, TypeError):
            return loader.construct_scalar(node)

    return construct


TolerantLoader.add_multi_constructor("", _by_kind)
TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", _by_kind)
for _tag in ("int", "float", "bool"):
    _method = getattr(yaml.constructor.SafeConstructor, f"construct_yaml_{_tag}")
    TolerantLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _lenient(_method))


def load(data: bytes | str) -> Any:
    collecting = gc.isenabled()
    gc.disable()  # building millions of objects that form no cycles: collection only costs time
    try:
        return yaml.load(data, Loader=TolerantLoader)
    finally:
        if collecting:
            gc.enable()


@dataclass(frozen=True)
class Run:
    code: int
    stdout: bytes
    stderr: str


def run_limited(data: bytes, memory_mib: int = 1024, cpu_seconds: int = 20, env: dict[str, str] | None = None) -> Run:
    """The installed command in its own process with hard limits: a regression fails, it cannot hang or swap."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mib * MiB, memory_mib * MiB))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    command = [str(EXECUTABLE)] if EXECUTABLE.exists() else [sys.executable, "-m", "trainjob_resources"]
    done = subprocess.run(command, input=data, capture_output=True, preexec_fn=limit, env=env, check=False)
    return Run(done.returncode, done.stdout, done.stderr.decode(errors="replace"))


def parse_output(stdout: bytes) -> dict[str, Any]:
    """The output ResourceList; it must always be one, JSON or YAML."""
    text = stdout.decode()
    value = json.loads(text) if text.startswith("{") else load(text)
    assert isinstance(value, dict), stdout[:200]
    assert value.get("kind") == "ResourceList", stdout[:200]
    assert isinstance(value.get("items"), list), stdout[:200]
    return value


def assert_sane(code: int, stdout: bytes, stderr: str) -> dict[str, Any]:
    """What holds for every input: exit 0 or 1, no traceback, no internal error, a ResourceList out,
    and exit 1 exactly when there is an error (said on stderr too)."""
    assert code in (0, 1), (code, stderr[-2000:])
    assert "Traceback" not in stderr, stderr[-2000:]
    assert "internal error" not in stderr, stderr[-2000:]
    output = parse_output(stdout)
    errors = [r for r in output.get("results") or [] if r.get("severity") == "error"]
    assert (code == 1) == bool(errors), (code, errors[:3])
    if errors:
        assert "error" in stderr
    return output


def input_items(data: bytes) -> list[Any]:
    value = load(data)
    items = value.get("items") if isinstance(value, dict) else None
    return list(items or [])


def assert_items_back(data: bytes, output: dict[str, Any], changed_kinds: tuple[str, ...] = ()) -> None:
    """Every input item is in the output, as it was unless its kind may be rewritten; and nothing
    the function did not derive is added."""
    before = input_items(data)
    after = list(output["items"])
    for item in before:
        if isinstance(item, dict) and item.get("kind") in changed_kinds:
            continue
        assert item in after, f"lost or changed: {str(item)[:300]}"
    assert len(after) >= len(before)
