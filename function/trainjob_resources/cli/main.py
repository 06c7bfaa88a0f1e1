"""The command line: the KRM function (no arguments), ``render``, ``explain``, ``check`` and ``schema``.

Only this layer reads stdin or files, writes stdout or stderr, and picks exit codes:
0 without error results, 1 with any (or when the input cannot be read at all).
"""

from __future__ import annotations

import gc
import os
import sys
import types
from collections.abc import Callable, Sequence
from typing import BinaryIO, TextIO

from ..krm import resource_list as krm
from ..yamltext.yamlnodes import MAX_INPUT_BYTES, YamlInputError

Processor = Callable[[krm.ResourceList], krm.ResourceList]


def as_main(
    processor: Processor,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run ``processor`` as a KRM function: ResourceList on stdin, ResourceList on stdout."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    stderr = stderr or sys.stderr
    data = stdin.read(MAX_INPUT_BYTES + 1)
    try:
        resource_list, output = processed(processor, data)
    except (krm.ResourceListError, YamlInputError) as err:
        failure = krm.ResourceList(items=[], results=[krm.Result(str(err))])
        failure.json_format = data.lstrip().startswith(b"{")
        return _emit(stdout, stderr, krm.write(failure), [f"trainjob-resources: error: {err}"])
    except Exception as err:  # a bug of ours: say so plainly, keep the traceback for debugging only
        if os.environ.get("TRAINJOB_RESOURCES_DEBUG"):
            import traceback

            traceback.print_exc(file=stderr)
        from ..values.text import printable

        message = f"internal error ({type(err).__name__}: {printable(str(err)[:500])}); please report it"
        return _emit(stdout, stderr, _unchanged(data, message), [f"trainjob-resources: {message}"])
    lines = [] if results_are_shown(data) else [r.display() for r in krm.shown_results(resource_list.results)]
    return _emit(
        stdout,
        stderr,
        output,
        [line for line in lines if not line.startswith("info")],
        1 if resource_list.has_errors() else 0,
    )


def processed(processor: Processor, data: bytes) -> tuple[krm.ResourceList, bytes]:
    """``processor``'s ResourceList and its output bytes. A TrainJob whose text turns out not to
    parse on its own (krm.NotSplittable) sends it back to the start, reading the whole document:
    nothing of the first try is kept."""
    try:
        resource_list = processor(krm.read(data))
        return resource_list, krm.write(resource_list)
    except krm.NotSplittable:
        resource_list = processor(krm.read(data, by_items=False))
        return resource_list, krm.write(resource_list)


# kpt marks every item it sends with one of these (render: both; eval: the second), kustomize with neither.
KPT_ANNOTATIONS = (b"internal.config.kubernetes.io/package-path:", b"internal.config.kubernetes.io/seqindent:")


def results_are_shown(data: bytes) -> bool:
    """Whether the orchestrator shows the results itself: kpt prints them, then the function's stderr
    quoted, so the same lines there would be said twice; kustomize shows only stderr."""
    return any(mark in data for mark in KPT_ANNOTATIONS)


def _unchanged(data: bytes, message: str) -> bytes:
    """The input's items as they came, with ``message`` as an error: nothing is lost to our bug."""
    try:
        return processed(_only_result(message), data)[1]
    except Exception:
        failure = krm.ResourceList(items=[], results=[krm.Result(message)])
        failure.json_format = data.lstrip().startswith(b"{")
        return krm.write(failure)


def _only_result(message: str) -> Processor:
    def replace_results(resource_list: krm.ResourceList) -> krm.ResourceList:
        resource_list.results = [krm.Result(message)]
        return resource_list

    return replace_results


def _emit(stdout: BinaryIO, stderr: TextIO, output: bytes, lines: list[str], code: int = 1) -> int:
    try:
        stdout.write(output)
        stdout.flush()
    except BrokenPipeError:
        stderr.write("trainjob-resources: error: stdout was closed before the ResourceList was written\n")
        return 1
    for line in lines:
        stderr.write(line + "\n")
    return code


def run() -> None:
    """The console script and ``python -m trainjob_resources``: ``main``, then exit at once, its
    output flushed: the interpreter's teardown would free every object of the render one by one
    (a few percent of a render of 500 TrainJobs), and nothing of the function runs at exit."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed early: what it held is lost, which is an error
            code = code or 1
    os._exit(code)


PYDANTIC_PLUGIN_LOADER = "pydantic.plugin._loader"


def without_pydantic_plugins() -> None:
    """Run without pydantic plugins, as ``PYDANTIC_DISABLE_PLUGINS=__all__`` does, and without
    looking for them. pydantic looks for plugins the first time it builds a validator: it imports
    ``importlib.metadata`` (about 15 ms, a tenth of a small render) and loads the entry points of
    every installed package, third-party code that has no place inside a render. Its only use of
    the loader module is ``get_plugins()`` (checked by tests/test_cli_plugins.py for the installed
    pydantic); an empty one stands in for it. A loader already imported is left alone."""
    if PYDANTIC_PLUGIN_LOADER not in sys.modules:
        loader = types.ModuleType(PYDANTIC_PLUGIN_LOADER, "No pydantic plugins: see trainjob_resources.cli.")
        loader.get_plugins = tuple  # type: ignore[attr-defined]  # () : no plugins
        sys.modules[PYDANTIC_PLUGIN_LOADER] = loader


def main(argv: Sequence[str] | None = None) -> int:
    gc.disable()  # a short-lived process that builds no cycles: collection would only cost time
    without_pydantic_plugins()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        if _stdin_is_a_terminal():
            sys.stderr.write(f"trainjob-resources: expected a ResourceList on stdin (not a terminal)\n\n{USAGE}")
            return 2
        from ..process import process
        from .fan_out import forked

        return as_main(lambda resource_list: process(resource_list, fan_out=forked))
    if args[0] in SUBCOMMANDS:
        import importlib

        module = importlib.import_module(SUBCOMMANDS[args[0]], __package__)
        run: Callable[[list[str]], int] = module.main
        return run(args[1:])
    if args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] in ("-V", "--version"):
        from .. import __version__

        sys.stdout.write(f"trainjob-resources {__version__}\n")
        return 0
    sys.stderr.write(f"trainjob-resources: unknown command {args[0]!r}\n\n{USAGE}")
    return 2


def _stdin_is_a_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed or replaced
        return False


# Each subcommand lives in its own module, imported only when asked for (start-up time).
SUBCOMMANDS = {"render": ".render", "explain": ".explain", "check": ".check", "schema": ".schema"}

DOCS_URL = "https://github.com/trainjob-resources/trainjob-resources"

# Generated by cli/usage.py from the parsers, cli/formats.py and FunctionConfig: edit those, then
# `make goldens` (tests/test_usage.py) rewrites this text.
# BEGIN USAGE
USAGE = """\
usage: trainjob-resources                     KRM function: ResourceList on stdin, ResourceList on stdout
       trainjob-resources render [PATH ...] [--config FILE] [--config-from-env] [--runtimes PATH] [--root DIR]
                                 [--timeout SECONDS] [--namespace NS] [--output yaml|json] [--allow-empty]
                                 [--verbose] [--results all|summary|problems]
       trainjob-resources explain [PATH ...] [--config FILE] [--config-from-env] [--runtimes PATH]
                                  [--root DIR] [--timeout SECONDS] [--format table|json|markdown]
                                  [--namespace NS] [--against DIR]
       trainjob-resources check [PATH ...] [--config FILE] [--config-from-env] [--runtimes PATH] [--root DIR]
                                [--timeout SECONDS] [--namespace NS] [--kubeconfig FILE] [--context NAME]
                                [--as USER] [--trainer-namespace NS] [--kueue-version VERSION]
                                [--format table|json|markdown] [--request-timeout SECONDS]
       trainjob-resources schema trainjob|config   JSON Schema for editors and kubeconform
       trainjob-resources --help | --version
       (`render --help`, `explain --help`, `check --help` and `schema --help` describe their options in full;
       as a kubectl plugin: `kubectl trainjob-resources check ...`)

Lets a Kubeflow Trainer TrainJob write container `resources` in any spec.runtimePatches[]
ContainerPatch (the Trainer API has no such field) and materializes them into derived runtimes
the API accepts: each TrainJob then points at a runtime sized as its patches ask.

As a KRM function (kustomize transformer, kpt pipeline or `kpt fn eval`) it reads a ResourceList,
YAML or JSON, and writes it back with items rewritten and results; exit 1 when a result is an error.
`render` does the same for files, folders (kustomizations built first) or - (stdin) and prints the
manifests (Argo CD plugins, CI); `explain` prints what every TrainJob's pods request and limit;
`check` reads the live cluster and says what a sync of the render would be refused or break.

functionConfig: none, a v1 ConfigMap (the options under `data`, as strings), or
  apiVersion: fn.trainjob-resources.io/v1alpha1
  kind: TrainJobResources
  metadata: {name: trainjob-resources}
  spec:
    mode: materialize               # materialize (default): derived runtimes the API accepts; native:
                                    # validate only
    derivedRuntimeKind: TrainingRuntime # TrainingRuntime (default) | ClusterTrainingRuntime; the kind of the
                                    # derived runtimes
    trainerVersion: v2.3.0          # v2.2 | v2.2.0 | v2.2.1 | v2.3 | v2.3.0 (default); the Kubeflow Trainer
                                    # release the cluster runs (v2.2 or v2.3; default the newest)
    trainerResources: error         # error (default) | moveToResourcesPerNode; resources on the trainer
                                    # container: an error, or moved to spec.trainer.resourcesPerNode
    namespacePolicy: error          # error (default) | warning | off; how LimitRange and ResourceQuota
                                    # findings are reported
    maxPerContainer: {memory: 128Gi} # the largest request or limit of any one container, per resource name
    maxPerRole: {sidecar: {memory: 64Gi}} # the largest request or limit per role (trainer, initializer,
                                    # container, sidecar, initContainer), per resource name
    allowedResources: [cpu, memory, nvidia.com/gpu] # the only resource names containers may request or limit
    allowGpuInSidecars: true        # true (default) | false; false: no initContainers entry may request or
                                    # limit a GPU
    gpuResources: [nvidia.com/gpu, nvidia.com/mig-*, amd.com/gpu, gpu.intel.com/*] # default; what counts as a
                                    # GPU (an entry ending in * is a prefix)
    derivedRuntimeMetadata: {annotations: {argocd.argoproj.io/sync-options: Prune=false}} # labels and
                                    # annotations every derived runtime gets (annotations, labels)
    results: all                    # all (default) | summary | problems; which results to report

Examples:
  kustomize build --enable-alpha-plugins --enable-exec overlays/prod   # listed under transformers:
  kpt fn eval --exec trainjob-resources .
  trainjob-resources render overlays/prod --config trainjob-resources.yaml > rendered.yaml
  trainjob-resources explain overlays/prod --format markdown
  trainjob-resources check overlays/prod --as system:serviceaccount:argocd:argocd-application-controller

Docs: https://github.com/trainjob-resources/trainjob-resources (README.md and docs/)
"""
# END USAGE
