"""The KRM Functions Specification: a ResourceList read and written, its items, and the results
with ``resourceRef``, ``field`` and ``file`` (``resource_list``); and the trust model, which input
may carry which mark (``trust``).

May import: ``values``, ``yamltext``.
"""
