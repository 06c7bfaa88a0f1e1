"""The model of upstream Kubeflow Trainer: its API names (``api``) and types (``models``,
``runtime_models``), a runtime's jobs and containers (``runtime_view``), which job is the trainer
and how many pods each has (``topology``), where a patch lands (``sites``), the resources a
container ends up with (``effective``) and a move of a trainer container's resources to
``resourcesPerNode`` (``per_node``); a TrainJob read without pydantic (``trainjob_view``) and the
releases the function supports (``releases``); the structural schemas of each release's CRDs,
shipped as package data (``crd_schema``), and an object checked against them as the API server
checks a create (``crd_validate``), their CEL rules evaluated by ``crd_cel``. Each model cites the
kubeflow/trainer file it follows; what
Trainer refuses is said by the rules (``rules/``).

May import: ``values``, ``yamltext``, ``kube``.
"""
