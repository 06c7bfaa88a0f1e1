"""The command line: the KRM function (no arguments), ``render`` and ``explain``.

Only this layer reads stdin or files, writes stdout or stderr, and picks exit codes:
0 without error results, 1 with any (or when the input cannot be read at all).
"""

from __future__ import annotations

import gc
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import BinaryIO, TextIO

from . import krm
from .yamlnodes import YamlInputError

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
    data = stdin.read()
    try:
        resource_list = processor(krm.read(data))
    except (krm.ResourceListError, YamlInputError) as err:
        failure = krm.ResourceList(items=[], results=[krm.Result(str(err))])
        failure.json_format = data.lstrip().startswith(b"{")
        stdout.write(krm.write(failure))
        stderr.write(f"trainjob-resources: error: {err}\n")
        return 1
    except Exception as err:  # a bug of ours: say so plainly, keep the traceback for debugging only
        if os.environ.get("TRAINJOB_RESOURCES_DEBUG"):
            traceback.print_exc(file=stderr)
        stderr.write(f"trainjob-resources: internal error ({type(err).__name__}: {err}); please report it\n")
        return 1
    stdout.write(krm.write(resource_list))
    for result in resource_list.results:
        if result.severity != "info":
            stderr.write(result.display() + "\n")
    return 1 if resource_list.has_errors() else 0


def main(argv: Sequence[str] | None = None) -> int:
    gc.disable()  # a short-lived process that builds no cycles: collection would only cost time
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
       trainjob-resources render [PATH ...] [--config FILE]
       trainjob-resources explain [PATH ...] [--format table|json|markdown] [--config FILE]
       trainjob-resources --version

Lets TrainJob runtimePatches carry container `resources` and materializes them into derived
runtimes that Kubeflow Trainer accepts. See README.md.
"""
