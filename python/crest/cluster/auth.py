"""Ray token authentication for cluster mode: the token local:N's nodes share (a file only the user can read),
the token crest presents to an existing cluster (from Ray's own sources, as Ray reads them), and whether a
cluster demands one at all (one gRPC call without a token to its head).

Writes only local:N's token file, and sets only this process's environment (which the Ray processes it
starts inherit). Never prints, logs, stores or puts a token in a message: messages name where a token came
from, never what it is.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from crest.errors import ConfigError

MODE_ENV = "RAY_AUTH_MODE"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
ALLOW_OPTION = "--allow-unauthenticated-cluster"
# One round trip to a head that answers TCP: a gRPC call needs no more.
PROBE_TIMEOUT_S = 5.0

_allow_unauthenticated = False


def allow_unauthenticated_clusters(allow: bool = True) -> None:
    """The user's --allow-unauthenticated-cluster, for every session this process opens."""
    global _allow_unauthenticated
    _allow_unauthenticated = allow


def ray_default_token_path() -> Path:
    """Where Ray looks for a token when neither RAY_AUTH_TOKEN nor RAY_AUTH_TOKEN_PATH is set."""
    return Path.home() / ".ray" / "auth_token"


def local_token_path() -> Path:
    """local:N's token: $XDG_STATE_HOME/crest/ray-auth-token (~/.local/state/crest/ray-auth-token)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "crest" / "ray-auth-token"


def ensure_local_token(path: Path | None = None) -> Path:
    """The token file local:N's nodes share, made on first use: 256 random bits, mode 0600 in a 0700
    directory. One that others could read (or an empty one) is replaced, since it may have been read."""
    path = path or local_token_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        info = path.stat()
        if info.st_size > 0 and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) and info.st_uid == os.getuid():
            return path
    except FileNotFoundError:
        pass
    fresh = path.with_name(f".{path.name}.{os.getpid()}")
    fresh.unlink(missing_ok=True)  # left by a process of this pid that was killed here
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode())
    finally:
        os.close(fd)
    os.replace(fresh, path)  # atomic: a node starting meanwhile reads the old token or the new, never half
    return path


def use_local_token(path: Path) -> None:
    """Make every Ray process this one starts (local:N's nodes and their workers) and this driver require
    and present the token in `path`, whatever token the user's environment names."""
    os.environ[MODE_ENV] = "token"
    os.environ[TOKEN_PATH_ENV] = str(path)
    os.environ.pop(TOKEN_ENV, None)  # Ray prefers it to the file
    refresh_ray()


def user_token() -> tuple[str, str] | None:
    """The user's token and where it came from ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH=…", "~/.ray/auth_token"),
    looked up in Ray's order; None when there is none."""
    value = os.environ.get(TOKEN_ENV, "").strip()
    if value:
        return value, TOKEN_ENV
    named = os.environ.get(TOKEN_PATH_ENV)
    # Ray reads no further once RAY_AUTH_TOKEN_PATH is set, even when the file is missing or empty.
    path, source = (
        (named, f"{TOKEN_PATH_ENV}={named}") if named else (str(ray_default_token_path()), "~/.ray/auth_token")
    )
    try:
        value = Path(path).read_text().strip()
    except OSError:
        return None
    return (value, source) if value else None


def present_user_token() -> None:
    """Have this driver present the user's token (Ray only does so by itself for `auto`, or with RAY_AUTH_MODE)."""
    if MODE_ENV not in os.environ and user_token() is not None:
        os.environ[MODE_ENV] = "token"
        refresh_ray()


def refresh_ray() -> None:
    """Have an already imported Ray read the authentication environment again (it caches both the mode and
    the token); without Ray's native module there is nothing cached."""
    try:
        raylet = _untyped("ray._raylet")  # its stub leaves these two out
    except ImportError:
        return
    raylet.Config.initialize("")  # the mode first: a token dropped under token mode is fatal to Ray
    raylet.AuthenticationTokenLoader.instance().reset_cache()


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 in brackets or not) is this machine's loopback."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def requires_token(kind: str, host: str, port: int, token: str | None = None) -> bool | None:
    """Whether the cluster at host:port refuses a call without (or with this) token: its head's GCS for
    `gcs`, its Ray client server for `client`. True when refused as unauthenticated, False when answered
    (any answer but that one: it ran the call), None when nothing conclusive answered (TLS, a timeout)."""
    grpc = _untyped("grpc")
    target = f"{host}:{port}"
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    channel = _channel(grpc, target)
    try:
        if kind == "client":
            ray_client_pb2 = _untyped("ray.core.generated.ray_client_pb2")
            _untyped("ray.core.generated.ray_client_pb2_grpc").RayletDriverStub(channel).ClusterInfo(
                ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING),
                timeout=PROBE_TIMEOUT_S, metadata=metadata,
            )  # fmt: skip
        else:
            gcs_service_pb2 = _untyped("ray.core.generated.gcs_service_pb2")
            _untyped("ray.core.generated.gcs_service_pb2_grpc").NodeInfoGcsServiceStub(channel).GetAllNodeInfo(
                gcs_service_pb2.GetAllNodeInfoRequest(limit=1), timeout=PROBE_TIMEOUT_S, metadata=metadata
            )
    except grpc.RpcError as exc:
        code = exc.code()
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return True
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return None
        return False
    finally:
        channel.close()
    return False


def _channel(grpc: Any, target: str) -> Any:
    """A channel as Ray's own clients open it: TLS when RAY_USE_TLS says so, and no token of Ray's own."""
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        chain, key, ca = _untyped("ray._common.tls_utils").load_certs_from_env()
        credentials = grpc.ssl_channel_credentials(certificate_chain=chain, private_key=key, root_certificates=ca)
        return grpc.secure_channel(target, credentials)
    return grpc.insecure_channel(target)


def _untyped(name: str) -> Any:
    """gRPC, Ray's generated gRPC modules and its native one, which carry no types (or not these)."""
    return importlib.import_module(name)


def check_authentication(text: str, host: str, required: bool | None, token: tuple[str, str] | None,
                         token_refused: bool = False) -> None:  # fmt: skip
    """Decide whether crest may use the cluster `text` at `host`, given what the probe found.

    Raises:
        ConfigError: the cluster asks a token and this machine has none, or not the one it was started
            with; or it asks none and listens beyond loopback, without --allow-unauthenticated-cluster.
    """
    if required:
        if os.environ.get(MODE_ENV) == "disabled":
            raise ConfigError(
                f"--cluster {text}: the cluster requires a Ray authentication token and {MODE_ENV}=disabled here"
                f" sends none: unset {MODE_ENV}"
            )
        if token is None:
            raise ConfigError(
                f"--cluster {text}: the cluster requires a Ray authentication token and none was found:"
                f" set {TOKEN_PATH_ENV} to a file holding the token its nodes were started with"
                f" (or {TOKEN_ENV}, or put it in ~/.ray/auth_token)"
            )
        if token_refused:
            raise ConfigError(
                f"--cluster {text}: the cluster refused the Ray token from {token[1]}:"
                " use the token its nodes were started with"
            )
        return
    if required is False and not is_loopback(host) and not _allow_unauthenticated:
        raise ConfigError(
            f"--cluster {text}: the cluster does not require authentication, so anyone who reaches it can run"
            f" code on its nodes: start its nodes with {MODE_ENV}=token and a shared token (docs/cluster.md),"
            f" or pass {ALLOW_OPTION}"
        )
