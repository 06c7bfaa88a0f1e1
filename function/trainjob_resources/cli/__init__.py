"""The command line: arguments, stdin and stdout, exit codes and printing. ``main`` is the KRM
function and the entry point, ``render``, ``explain`` and ``check`` its subcommands
(``check`` is the only one that talks to a cluster), ``schema`` the JSON Schemas it reads by; how
a subcommand ends (``guard``) and a large bundle processed on two CPUs (``fan_out``).

May import: every other layer. The only layer that touches stdin, stdout and exit codes.
"""
