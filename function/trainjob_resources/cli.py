"""The command line: the KRM function (no arguments), ``render`` and ``explain``.

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

from . import krm
from .yamlnodes import MAX_INPUT_BYTES, YamlInputError

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
        resource_list = processor(krm.read(data))
        output = krm.write(resource_list)
    except (krm.ResourceListError, YamlInputError) as err:
        failure = krm.ResourceList(items=[], results=[krm.Result(str(err))])
        failure.json_format = data.lstrip().startswith(b"{")
        return _emit(stdout, stderr, krm.write(failure), [f"trainjob-resources: error: {err}"])
    except Exception as err:  # a bug of ours: say so plainly, keep the traceback for debugging only
        if os.environ.get("TRAINJOB_RESOURCES_DEBUG"):
            import traceback

            traceback.print_exc(file=stderr)
        message = f"internal error ({type(err).__name__}: {str(err)[:500]}); please report it"
        return _emit(stdout, stderr, _unchanged(data, message), [f"trainjob-resources: {message}"])
    lines = [r.display() for r in krm.shown_results(resource_list.results) if r.severity != "info"]
    return _emit(stdout, stderr, output, lines, 1 if resource_list.has_errors() else 0)


def _unchanged(data: bytes, message: str) -> bytes:
    """The input's items as they came, with ``message`` as an error: nothing is lost to our bug."""
    try:
        resource_list = krm.read(data)
        resource_list.results = [krm.Result(message)]
        return krm.write(resource_list)
    except Exception:
        failure = krm.ResourceList(items=[], results=[krm.Result(message)])
        failure.json_format = data.lstrip().startswith(b"{")
        return krm.write(failure)


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
    """The console script and ``python -m trainjob_resources``: ``main``, then exit. Everything is
    frozen first, so that the interpreter's last collection at exit skips it (about 30 ms, a sixth
    of a small render)."""
    code = main()
    gc.freeze()
    sys.exit(code)


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
        from .process import process

        return as_main(process)
    if args[0] in SUBCOMMANDS:
        import importlib

        module = importlib.import_module(SUBCOMMANDS[args[0]], __package__)
        run: Callable[[list[str]], int] = module.main
        return run(args[1:])
    if args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] in ("-V", "--version"):
        from . import __version__

        sys.stdout.write(f"trainjob-resources {__version__}\n")
        return 0
    sys.stderr.write(f"trainjob-resources: unknown command {args[0]!r}\n\n{USAGE}")
    return 2


# Each subcommand lives in its own module, imported only when asked for (start-up time).
SUBCOMMANDS = {"render": ".render_cli", "explain": ".explain_cli"}

USAGE = """\
usage: trainjob-resources                 KRM function: ResourceList on stdin, ResourceList on stdout
       trainjob-resources render [PATH ...] [--config FILE] [--config-from-env] [--runtimes PATH]
                                 [--namespace NS] [--output yaml|json] [--allow-empty] [-v]
       trainjob-resources explain [PATH ...] [--format table|json|markdown] [--config FILE]
                                  [--config-from-env] [--runtimes PATH] [--namespace NS]
       trainjob-resources --version

Lets TrainJob runtimePatches carry container `resources` and materializes them into derived
runtimes that Kubeflow Trainer accepts. See README.md.
"""
