"""``trainjob-resources render``: manifests in from files, folders or stdin; rendered manifests out.

For pipelines that are not KRM orchestrators (an Argo CD plugin, CI, a terminal). Inputs are
read into a ResourceList (each object annotated with its file, so that messages name it), the
function runs on it, and the items are written back as a multi-document YAML stream without
those annotations. A folder with a kustomization is built by kustomize first. On any error
nothing goes to stdout: the messages go to stderr and the exit code is 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..repo.sources import RenderError, shown

if TYPE_CHECKING:
    import argparse

    from yaml.nodes import Node

    from ..krm.resource_list import ResourceList
    from ..repo.collected import Inputs

__all__ = ["RenderError", "add_input_options", "env_name", "load_for"]

ENV_PREFIX = "ARGOCD_ENV_"

DESCRIPTION = """\
Render TrainJobs for `kubectl apply` or Argo CD: read manifests, materialize the container
resources in their runtimePatches into derived runtimes, and print the result as YAML.

PATH is a YAML or JSON file (several documents allowed), a folder (read recursively: *.yaml,
*.yml, *.json in name order; hidden entries skipped) or - for stdin; default: the current folder.
A folder with a kustomization is built with a plain `kustomize build` (or `kubectl kustomize`):
no plugin, KRM function or Helm chart runs; this function's own config, found under the
kustomization's transformers:, is taken out of the build and applied by render, once. Objects
annotated config.kubernetes.io/local-config: "true" are read but not printed, and so is a
TrainJobResources (or a ConfigMap naming this function) among the inputs: it is the functionConfig.

Reads stay inside --root (links that lead out are refused), each file is read once, and one render
reads at most 64 MiB, 100,000 files and folders and 100,000 objects. Skipped entries are listed on
stderr.
"""

EPILOG = f"""\
Argo CD (config management plugin): with --config-from-env, every {ENV_PREFIX}<OPTION> variable
sets that functionConfig option, e.g. {ENV_PREFIX}MODE=native or
{ENV_PREFIX}DERIVED_RUNTIME_KIND=ClusterTrainingRuntime (an empty value is ignored, an unknown
option is an error), ARGOCD_APP_NAMESPACE is the default for --namespace, ARGOCD_APP_NAME names the
application in error messages, and the repository root (from ARGOCD_APP_SOURCE_PATH) is the root.
Options of --config are the platform's: the repository's config and {ENV_PREFIX}* may not change
mode, derivedRuntimeKind or trainerVersion (the platform's value, or the default where it sets none),
may only tighten maxPerContainer, maxPerRole, allowedResources, allowGpuInSidecars, gpuResources,
namespacePolicy, trainerResources and derivedRuntimeMetadata, and may set results freely.

Exit status: 0 when rendered, 1 on any error or when there is nothing to print (unless
--allow-empty; nothing is printed to stdout then), 2 on bad usage.
"""


def env_name(option: str) -> str:
    """``derivedRuntimeKind`` -> ``ARGOCD_ENV_DERIVED_RUNTIME_KIND``."""
    from ..options import config_layers

    return config_layers.env_name(option)


MAX_STDERR_LINES = 2000  # lines of notes, warnings and errors, before the closing lines
MAX_LINE = 8000  # characters of one stderr line


class _Stderr:
    """render's stderr: at most MAX_STDERR_LINES lines of at most MAX_LINE characters, and a line
    saying how many more there were; closing lines (the summary) always printed."""

    def __init__(self) -> None:
        self.lines = 0
        self.more = 0

    def line(self, text: str) -> None:
        if self.lines >= MAX_STDERR_LINES:
            self.more += 1
            return
        self.lines += 1
        if len(text) > MAX_LINE:
            text = f"{text[:MAX_LINE]}… ({len(text) - MAX_LINE} more characters)"
        sys.stderr.write(text + "\n")

    def finish(self) -> None:
        if self.more:
            sys.stderr.write(f"trainjob-resources render: {self.more} more lines not shown\n")
            self.more = 0

    def close(self, text: str) -> None:
        self.finish()
        sys.stderr.write(text + "\n")


_stderr = _Stderr()


def main(args: list[str]) -> int:
    from .guard import guarded

    global _stderr
    _stderr = _Stderr()
    options = _parser().parse_args(args)
    prefix = _application(options, os.environ)
    return guarded(
        "trainjob-resources render",
        lambda: _rendered(options),
        ((RenderError, 1),),
        lambda line: _stderr.close(prefix + line),
        lambda err: _cut(str(err)),
    )


def _rendered(options: argparse.Namespace) -> int:
    code = _render(options)
    _stderr.finish()
    return code


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """The options ``render`` and ``explain`` share: what to read and from where."""
    parser.add_argument("paths", nargs="*", metavar="PATH", help="file, folder or - (default: .)")
    parser.add_argument("--config", metavar="FILE", help="functionConfig: a v1 ConfigMap or a TrainJobResources")
    parser.add_argument(
        "--config-from-env",
        action="store_true",
        help=f"read options from {ENV_PREFIX}* variables and the namespace from ARGOCD_APP_NAMESPACE",
    )
    parser.add_argument(
        "--runtimes",
        metavar="PATH",
        action="append",
        default=[],
        help="reference runtimes (file or folder, repeatable): read to resolve runtimeRefs, never printed",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="the folder reads must stay inside (default: the current folder; with --config-from-env, "
        "the repository root from ARGOCD_APP_SOURCE_PATH)",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=60.0,
        help="time limit of all the render's kustomize builds together (default: 60, inside Argo CD's own "
        "90 s exec timeout, ARGOCD_EXEC_TIMEOUT)",
    )


def input_parser(command: str, description: str, epilog: str, namespace: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (``render``, ``check``) with the input options and ``--namespace``, which
    names the namespace of TrainJobs and TrainingRuntimes that name none (``namespace`` says which)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=f"trainjob-resources {command}",
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser)
    said = f"namespace of TrainJobs and TrainingRuntimes that name none ({namespace})"
    parser.add_argument("--namespace", metavar="NS", help=said)
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = input_parser("render", DESCRIPTION, EPILOG, "they are printed with it")
    from .formats import choices

    parser.add_argument("--output", "-o", choices=choices("render"), default="yaml", help="output format")
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="exit 0 when there is nothing to print (by default an empty render is an error)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="also print what was changed, to stderr")
    from ..report.reporting import RESULTS_HELP, RESULTS_OPTIONS

    parser.add_argument(
        "--results",
        choices=RESULTS_OPTIONS,
        help=f"{RESULTS_HELP}; overrides the functionConfig's; the infos it keeps go to stderr (as with -v)",
    )
    return parser


def _render(options: argparse.Namespace) -> int:
    from ..process import process
    from ..repo.printing import printed

    environ = os.environ
    resource_list, inputs = load_for(options, environ)
    for line in inputs.notes:
        _stderr.line(line)
    if inputs.errors:
        return _fail(inputs.errors, options, environ)
    from ..report.reporting import with_results_option

    resource_list.function_config = with_results_option(resource_list.function_config, options.results)
    result = process(resource_list, inputs.platform_ids)
    errors = [r.display() for r in result.results if r.severity == "error"]
    for line in (r.display() for r in result.results if r.severity == "warning"):
        _stderr.line(line)
    if errors:
        return _fail(errors, options, environ)
    if options.verbose or options.results is not None:  # the infos --results keeps: asked for, so printed
        for line in (r.display() for r in result.results if r.severity == "info"):
            _stderr.line(line)
    from .formats import renderer

    objects = list(printed(result, inputs, texts=options.output == "yaml"))
    if not objects and not options.allow_empty:
        where = ", ".join(shown(p) for p in options.paths or ["."])
        message = (
            f"error: {where}: no objects to print; an empty render makes Argo CD prune the application "
            "(unless its sync policy sets allowEmpty: false). Pass --allow-empty if nothing is what you mean"
        )
        return _fail([message], options, environ)
    sys.stdout.buffer.write(renderer("render", options.output)(objects).encode())
    sys.stdout.flush()
    return 0


def load_for(options: argparse.Namespace, environ: Mapping[str, str]) -> tuple[ResourceList, Inputs]:
    """``load`` as the command-line options of ``render`` or ``explain`` ask."""
    from ..repo.inputs import ReadRequest, load

    namespace = options.namespace
    if namespace is None and options.config_from_env:
        namespace = environ.get("ARGOCD_APP_NAMESPACE") or None
    request = ReadRequest(
        options.paths or ["."],
        options.config,
        namespace,
        options.runtimes,
        options.root,
        options.timeout,
    )
    request.left_to_platform = getattr(options, "left_to_platform", ())  # explain --against's base
    return load(request, environ if options.config_from_env else None)


def _application(options: argparse.Namespace, environ: Mapping[str, str]) -> str:
    """``application NAME: `` under Argo CD (ARGOCD_APP_NAME): Argo CD shows the plugin's stderr as
    one message, and the sidecar's log mixes every application's, so each line names its own."""
    app = environ.get("ARGOCD_APP_NAME") if options.config_from_env else None
    return f"application {shown(app)}: " if app else ""


def _fail(errors: list[str], options: argparse.Namespace, environ: Mapping[str, str]) -> int:
    where = _application(options, environ)
    for line in errors:
        _stderr.line(where + line)
    plural = "s" if len(errors) != 1 else ""
    _stderr.close(f"{where}trainjob-resources render: {len(errors)} error{plural}; nothing rendered")
    return 1


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE else f"{text[:MAX_LINE]}… ({len(text) - MAX_LINE} more characters)"


def yaml_stream(objects: Sequence[Node | str]) -> str:
    """``--output yaml``: the objects as a multi-document YAML stream (each one's text where it kept it)."""
    from ..yamltext import yamlnodes as yn

    return "---\n".join(node if isinstance(node, str) else yn.serialize(node) for node in objects)


def json_list(objects: Sequence[Node | str]) -> str:
    """``--output json``: a v1 List of the objects, as ``kubectl get -o json`` prints several."""
    import json

    from ..yamltext import yamlnodes as yn

    values = [yn.to_python(node) for node in objects if not isinstance(node, str)]
    assert len(values) == len(objects), "asked for nodes"
    document = {"apiVersion": "v1", "kind": "List", "items": values}
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"
