"""The command line: arguments, stdin and stdout, exit codes and printing. ``main`` is the KRM
function and the entry point, ``render``, ``explain`` and ``check`` its subcommands
(``check`` is the only one that talks to a cluster; ``check_copies`` renders it again with the installed
runtimes where the render read differing copies), ``schema`` the JSON Schemas; ``formats`` declares every
command's output formats and their renderers, ``usage`` generates ``main``'s help text, ``guard`` says how
a subcommand ends, ``fan_out`` forks for large bundles.

May import: every other layer. The only layer that touches stdin, stdout and exit codes.
"""
