"""Names the package reads and writes in Kubernetes objects, each spelled once: annotation and
label keys, their prefixes, and the pod spec's container lists."""

from __future__ import annotations

from typing import Final

# A pod spec's container lists, in the order a pod starts them (k8s.io/api/core/v1/types.go PodSpec).
CONTAINER_LISTS: Final = ("initContainers", "containers")

# kustomize's mark of an object it reads but never emits (api/konfig/builtinpluginconsts, kyaml
# kioutil): the function reads a runtime so marked as a reference copy.
LOCAL_CONFIG: Final = "config.kubernetes.io/local-config"

# The KRM Functions Specification's ResourceList versions, and the annotations kpt and kustomize
# put on each item (kyaml kioutil: the internal spelling first, the legacy one second).
RESOURCE_LIST_VERSIONS: Final = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")
PATH_ANNOTATIONS: Final = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS: Final = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
# kustomize's record of an object's earlier names and kinds (api/resource/resource.go).
PREVIOUS_NAMES: Final = ("internal.config.kubernetes.io/previousNames", "config.kubernetes.io/previousNames")
PREVIOUS_KINDS: Final = ("internal.config.kubernetes.io/previousKinds", "config.kubernetes.io/previousKinds")
# The name prefixes and suffixes kustomize's namePrefix and nameSuffix added, outermost last (same file).
NAME_PREFIXES: Final = ("internal.config.kubernetes.io/prefixes", "config.kubernetes.io/prefixes")
NAME_SUFFIXES: Final = ("internal.config.kubernetes.io/suffixes", "config.kubernetes.io/suffixes")
# Where kustomize's buildMetadata [originAnnotations] says an object came from.
ORIGIN: Final = "config.kubernetes.io/origin"
# The annotation that makes an object a function's config (kyaml runfn; its legacy spelling second).
FUNCTION_ANNOTATIONS: Final = ("config.kubernetes.io/function", "config.k8s.io/function")
# kpt live apply's ordering (cli-utils), and Argo CD's.
DEPENDS_ON: Final = "config.kubernetes.io/depends-on"
SYNC_WAVE: Final = "argocd.argoproj.io/sync-wave"

# The function's own: the records on what it writes, their earlier spelling, and render's private
# marks (never taken from input: krm/trust.py).
PREFIX: Final = "fn.trainjob-resources.io/"
OLD_PREFIX: Final = "trainjob-resources.kubeflow.org/"
INTERNAL_PREFIX: Final = "internal.trainjob-resources.io/"

# Annotation and label keys that describe an object's source or identity to an orchestrator (file,
# index, kustomize's resource id, build metadata: kyaml kioutil, kustomize api/konfig).
ORCHESTRATOR_PREFIXES: Final = (
    "internal.config.kubernetes.io/",
    "config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
    "alpha.config.kubernetes.io/",
)
# Key spaces that say who owns an object or how a deployer treats it: Helm's release and hooks
# (helm pkg/release, pkg/action), Argo CD's hooks, sync options, waves and tracking id (argo-cd
# common/common.go), kpt live's (cli-utils) deletion and ownership (cli-utils pkg/common), and the
# function's own records.
OWNERSHIP_PREFIXES: Final = (
    "meta.helm.sh/",
    "helm.sh/",
    "argocd.argoproj.io/",
    "cli-utils.sigs.k8s.io/",
    "client.lifecycle.config.k8s.io/",
    PREFIX,
    OLD_PREFIX,
    INTERNAL_PREFIX,
)
# Single keys of the same kind: kubectl's last applied configuration, Argo CD's default tracking
# label, upstream Trainer's installer label and webhook switch (charts/kubeflow-trainer/templates/
# runtimes/installer-job.yaml; docs/operator-guides/runtime.md, "Skipping Webhook Validation").
OWNERSHIP_KEYS: Final = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        "app.kubernetes.io/instance",
        "trainer.kubeflow.org/managed-by",
        "trainer.kubeflow.org/webhook-validation",
    }
)
# Key spaces on a derived runtime that only the platform's metadata may hold: all of the above and
# the whole of Trainer's own (its controllers read labels there).
PLATFORM_PREFIXES: Final = (*ORCHESTRATOR_PREFIXES, *OWNERSHIP_PREFIXES, "trainer.kubeflow.org/")


def is_ownership_key(key: str) -> bool:
    """Whether ``key`` says who owns an object or how a deployer treats it (never kept from a base)."""
    return key in OWNERSHIP_KEYS or key.startswith(OWNERSHIP_PREFIXES)


def is_platform_key(key: str) -> bool:
    """Whether ``key`` is in a key space only the platform may set on a derived runtime."""
    return key in OWNERSHIP_KEYS or key.startswith(PLATFORM_PREFIXES)
