"""How a subcommand ends: the exit status and the one line on stderr for each way it can stop."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence


def say_on_stderr(line: str) -> None:
    sys.stderr.write(f"{line}\n")


def guarded(
    prog: str,
    call: Callable[[], int],
    errors: Sequence[tuple[type[Exception], int]] = (),
    say: Callable[[str], None] = say_on_stderr,
    describe: Callable[[Exception], str] = str,
) -> int:
    """``call``'s exit status; an error of ``errors`` (the user's: bad input, an unreachable
    cluster) said as ``PROG: error: `` and ``describe(error)``, with its status, a signal as ``stopped by signal N``
    (128 + N), and anything else as an internal error of ours (1), never a traceback unless
    TRAINJOB_RESOURCES_DEBUG is set."""
    from ..repo.sandbox import Interrupted

    try:
        return call()
    except Interrupted as stop:
        say(f"{prog}: stopped by signal {stop.signum}")
        return 128 + stop.signum
    except Exception as err:
        for kind, code in errors:
            if isinstance(err, kind):
                say(f"{prog}: error: {describe(err)}")
                return code
        if os.environ.get("TRAINJOB_RESOURCES_DEBUG"):
            import traceback

            traceback.print_exc()
        from ..values.text import printable

        say_on_stderr(f"{prog}: internal error ({type(err).__name__}: {printable(err)}); please report it")
        return 1
