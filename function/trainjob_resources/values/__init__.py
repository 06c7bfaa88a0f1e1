"""Values every layer builds on: value classes without dataclasses (``records``), field paths as
results carry them (``fieldpath``), the one finding every check reports (``violations``), the keys
the package reads and writes (``keys``) and text fit for one line of a message (``text``).

The lowest layer: imports nothing of the package.
"""
