"""Values every layer builds on: value classes without dataclasses (``records``), field paths as
results carry them (``fieldpath``) and the one finding every check reports (``violations``).

The lowest layer: imports nothing of the package.
"""
