"""The KRM Functions Specification: a ResourceList read and written, its items, and the results
with ``resourceRef``, ``field`` and ``file`` (``resource_list``).

May import: ``values``, ``yamltext``.
"""
