"""The Kubernetes API, read with the ``kubernetes`` client: the only module that imports it, and only
``check`` imports this module, so no other command loads the client.

Reads are list calls, one per kind and namespace (paged, 500 objects a page), never a GET per object;
the JSON is kept as the API server sent it (no model classes). Access is asked with
SelfSubjectAccessReviews, impersonating ``--as`` when given (the ``Impersonate-User`` header, as
``kubectl --as`` sends it); everything else is read as the kubeconfig's own identity.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

from ..values.text import one_line, printable

T = TypeVar("T")
R = TypeVar("R")

PAGE: Final = 500
TIMEOUT: Final = 30.0  # seconds, per request
WORKERS: Final = 8  # requests in flight at once (the client's connection pool holds 5 per CPU)
SERVICE_ACCOUNT_NAMESPACE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class Unreachable(Exception):
    """The cluster cannot be reached or read: ``check`` exits 2 with this one line."""


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class Cluster:
    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        as_user: str | None = None,
        timeout: float = TIMEOUT,
    ) -> None:
        from kubernetes import client, config

        configuration = client.Configuration()
        self.default_namespace = "default"
        path = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        in_cluster = (
            kubeconfig is None
            and not os.environ.get("KUBECONFIG")
            and not os.path.exists(path)
            and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        )
        try:
            if in_cluster:
                config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
                self.default_namespace = _read(SERVICE_ACCOUNT_NAMESPACE) or "default"
                self.source = "the pod's service account"
            else:
                path = path.split(os.pathsep)[0]
                if not os.path.exists(path):
                    raise Unreachable(f"no kubeconfig at {path} (pass --kubeconfig FILE, or set KUBECONFIG)")
                config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=path, context=context, client_configuration=configuration, persist_config=False
                )
                contexts, active = config.list_kube_config_contexts(config_file=path)  # type: ignore[no-untyped-call]
                chosen = next((c for c in contexts if c.get("name") == context), active) if context else active
                namespace = (chosen or {}).get("context", {}).get("namespace")
                self.default_namespace = namespace if isinstance(namespace, str) and namespace else "default"
                self.source = f"kubeconfig {path}" + (f", context {context}" if context else "")
        except Unreachable:
            raise
        except Exception as err:  # the loader's ConfigException, a bad file, a missing context
            raise Unreachable(f"cannot load the cluster's configuration: {one_line(err)}") from None
        configuration.retries = 1
        self.server: str = configuration.host
        self.as_user = as_user
        self.timeout = timeout
        self._client = client.ApiClient(configuration)

    def close(self) -> None:
        self._client.close()  # type: ignore[no-untyped-call]

    # requests -------------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Mapping[str, Any] | None = None,
        impersonate: bool = False,
    ) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if impersonate and self.as_user:
            headers["Impersonate-User"] = self.as_user
        try:
            serialized = self._client.param_serialize(
                method, path, query_params=query or [], header_params=headers, body=body, auth_settings=["BearerToken"]
            )
            response = self._client.call_api(*serialized, _request_timeout=self.timeout)
            response.read()  # type: ignore[no-untyped-call]
            status, data = response.status, response.data
        except Exception as err:
            status = getattr(err, "status", None)
            if isinstance(status, int) and status:
                raise ApiError(status, _message(getattr(err, "body", None) or str(err))) from None
            raise Unreachable(f"cannot reach the cluster at {self.server}: {_reason(err)}") from None
        if status >= 400:
            raise ApiError(status, _message(data))
        return json.loads(data) if data else None

    def get(self, path: str) -> Any | None:
        """The object at ``path``, or None when there is none (404)."""
        try:
            return self.request("GET", path)
        except ApiError as err:
            if err.status == 404:
                return None
            raise self._refused("get", path, err) from None

    def try_get(self, path: str) -> tuple[Any | None, str]:
        """The object at ``path``, or None and why (absent, or not readable by this identity)."""
        try:
            return self.request("GET", path), ""
        except ApiError as err:
            return None, "not found" if err.status == 404 else f"not readable ({err})"

    def list_objects(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        """Every object of a list call, page by page; none when the kind is not served (404)."""
        return list(self._pages(path, label_selector))

    def try_list(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]] | None:
        """``list_objects``, or None where this identity may not list there (401, 403)."""
        try:
            return list(self._pages(path, label_selector, refusal=False))
        except ApiError as err:
            if err.status in (401, 403):
                return None
            raise self._refused("list", path, err) from None

    def lists(self, paths: Sequence[str]) -> list[list[dict[str, Any]]]:
        """``list`` of each path, several at a time, in the order given."""
        return self._at_once(self.list_objects, paths)

    def reviews(self, asked: Sequence[tuple[str, str, str, str]]) -> list[tuple[bool, str]]:
        """``may`` of each (verb, group, resource, namespace), several at a time, in the order given."""
        return self._at_once(lambda args: self.may(*args), asked)

    def _at_once(self, call: Callable[[T], R], args: Sequence[T]) -> list[R]:
        if len(args) < 2:
            return [call(a) for a in args]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(WORKERS, len(args))) as pool:
            return list(pool.map(call, args))

    def _pages(self, path: str, label_selector: str | None, refusal: bool = True) -> Iterator[dict[str, Any]]:
        token = ""
        while True:
            query = [("limit", str(PAGE))]
            if token:
                query.append(("continue", token))
            if label_selector:
                query.append(("labelSelector", label_selector))
            try:
                page = self.request("GET", path, query)
            except ApiError as err:
                if err.status == 404:
                    return
                if not refusal:
                    raise
                raise self._refused("list", path, err) from None
            kind = str(page.get("kind", "")).removesuffix("List")
            version = page.get("apiVersion")
            for item in page.get("items") or []:
                item.setdefault("kind", kind)  # a list's items carry no kind and apiVersion
                item.setdefault("apiVersion", version)
                yield item
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return

    def _refused(self, verb: str, path: str, err: ApiError) -> Unreachable:
        path = printable(path)  # it holds the render's namespace and object names
        if err.status in (401, 403):
            return Unreachable(
                f"the cluster refused to {verb} {path} ({err}): check reads with the kubeconfig's identity and "
                "needs the read-only rights docs/check.md lists"
            )
        return Unreachable(f"the cluster could not {verb} {path}: {err}")

    def resources(self, api_version: str) -> dict[str, tuple[str, bool]]:
        """Discovery of one group version: kind -> (resource, namespaced). Empty when not served."""
        path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        found = self.get(path)
        out: dict[str, tuple[str, bool]] = {}
        for entry in (found or {}).get("resources") or []:
            name = entry.get("name", "")
            if "/" not in name and entry.get("kind"):
                out.setdefault(entry["kind"], (name, bool(entry.get("namespaced"))))
        return out

    def may(self, verb: str, group: str, resource: str, namespace: str) -> tuple[bool, str]:
        """A SelfSubjectAccessReview (authorization.k8s.io/v1), as ``--as`` when given."""
        attributes = {"verb": verb, "group": group, "resource": resource}
        if namespace:
            attributes["namespace"] = namespace
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        try:
            answer = self.request(
                "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review, impersonate=True
            )
        except ApiError as err:
            who = f"impersonate {self.as_user} and " if self.as_user else ""
            raise Unreachable(f"the cluster refused to {who}review access ({err})") from None
        status = answer.get("status") or {}
        reason = status.get("reason") or status.get("evaluationError") or ""
        return bool(status.get("allowed")) and not status.get("denied"), str(reason)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _message(data: Any) -> str:
    """The Status message the API server sent, else the body's start."""
    text = data.decode(errors="replace") if isinstance(data, bytes) else str(data)
    try:
        status = json.loads(text)
    except ValueError:
        return one_line(text)
    return one_line(status.get("message") if isinstance(status, dict) and status.get("message") else text)


def _reason(err: object) -> str:
    """A connection error's own reason (urllib3 wraps it in a retry error that repeats the URL)."""
    text = one_line(err)
    found = re.search(r"\[Errno -?\d+\] [^'\")]+|certificate verify failed[^'\")]*|timed out", text)
    return found.group(0).strip() if found else text
