"""The function's rules, one module each, registered once in ``registry`` (after upstream Trainer's
``pkg/runtime/framework``: ``interface.go`` and ``plugins/registry.go``).

A rule declares the stage it runs in, what it runs over (its ``scope``), what it reads
(``reads.py``) and what it reports; the pipeline (``process.py``) runs a stage's rules in registry
order, and remembers a stage's findings under the key of what its rules declare they read.
Adding a rule: a module here, one line in ``registry.RULES``, a golden case (CONTRIBUTING.md).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer`` and the rest of ``checks``.
"""
