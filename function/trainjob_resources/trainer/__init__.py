"""The model of upstream Kubeflow Trainer: its API names (``api``) and types (``models``,
``runtime_models``), a runtime's jobs and containers (``runtime_view``), which job is the trainer
and how many pods each has (``topology``), the CRD's limits (``crd_rules``), where a patch lands
(``sites``), the resources a container ends up with (``effective``) and ``resourcesPerNode``
(``per_node``). Each rule cites the kubeflow/trainer file it follows.

May import: ``values``, ``yamltext``, ``kube``.
"""
