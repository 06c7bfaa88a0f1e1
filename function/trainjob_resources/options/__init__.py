"""The function's options: what the platform and the tenant tell it. The options the checks read,
as a protocol, and their defaults without pydantic (``options``); the functionConfig validated
(``config``: pydantic, imported only when there is one); the platform's and the tenant's layers
combined into one (``config_layers``); a ResourceList's functionConfig read, its errors as
results (``function_config``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``.
"""
