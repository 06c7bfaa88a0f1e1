"""The KRM Functions Specification: a ResourceList read and written (``resource_list``), its items
(``item``), the results with ``resourceRef``, ``field`` and ``file`` (``results``), the objects the
function decides by, which must read alike in PyYAML and go-yaml (``policy_inputs``); and the trust
model, which input may carry which mark (``trust``).

May import: ``values``, ``yamltext``.
"""
