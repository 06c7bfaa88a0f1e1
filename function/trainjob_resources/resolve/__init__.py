"""The index and resolve stages' making, and the one TrainJob every later stage reads: the bundle's
runtimes indexed once and what a TrainJob's runtimeRef resolves to (``bundle``), one TrainJob as the
pipeline and its rules see it, upstream's ``runtime.Info`` (``context``), and what moving its
trainer patches to resourcesPerNode would write, which the context holds (``moving``).

The stages themselves (their rules, the runtimeRef resolved) run in ``pipeline/``.

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``.
"""
