"""The command line: arguments, stdin and stdout, exit codes and printing. ``main`` is the KRM
function and the entry point, ``render``, ``explain`` and ``check`` its subcommands
(``check`` is the only one that talks to a cluster).

May import: every other layer. The only layer that touches stdin, stdout and exit codes.
"""
