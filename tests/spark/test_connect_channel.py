"""The Connect token goes to the local server's address and nowhere else.

A stand-in gRPC server on 127.0.0.1 plays the Connect server (no JVM needed: what is checked is
where the client's channel goes and what it sends), and a plain socket on ``[::1]`` at the same
port plays another local user waiting for the token.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from flinkstate.errors import InvalidParameterError, SparkStartError
from flinkstate.spark import connect_server
from flinkstate.spark.connect_channel import LoopbackChannelBuilder
from flinkstate.spark.settings import LOOPBACK_V6, loopback_addresses

TOKEN = "the-token-of-this-user"
HAS_IPV6 = (socket.AF_INET6, LOOPBACK_V6) in loopback_addresses()
needs_ipv6 = pytest.mark.skipif(not HAS_IPV6, reason="this machine has no ::1")


class _Recording(grpc.GenericRpcHandler):
    """Answers every call and keeps its metadata."""

    def __init__(self) -> None:
        self.calls: list[dict[str, str]] = []

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        self.calls.append(dict(details.invocation_metadata))
        return grpc.unary_unary_rpc_method_handler(lambda request, context: b"answer")


@pytest.fixture
def real_server() -> Iterator[tuple[int, _Recording]]:
    """A gRPC server on 127.0.0.1 only, as the Connect server listens."""
    handler = _Recording()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port, handler
    server.stop(grace=None)


class Thief:
    """Another user's listener on ``[::1]:port``, keeping whatever reaches it."""

    def __init__(self, port: int) -> None:
        self.socket = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.socket.bind((LOOPBACK_V6, port))
        self.socket.listen()
        self.socket.settimeout(0.2)
        self.received = b""
        self.connections = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._take, daemon=True)
        self._thread.start()

    def _take(self) -> None:
        while not self._done.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with connection:
                connection.settimeout(0.5)
                try:
                    while chunk := connection.recv(65536):
                        self.received += chunk
                except OSError:
                    pass

    def close(self) -> None:
        self._done.set()
        self._thread.join()
        self.socket.close()


def _call(url: str) -> bytes:
    channel = LoopbackChannelBuilder(url).toChannel()
    try:
        answer: bytes = channel.unary_unary("/spark.connect.SparkConnectService/Config")(
            b"", timeout=10
        )
        return answer
    finally:
        channel.close()


def _server_url(port: int) -> str:
    state = connect_server.ServerState(
        pid=1, port=port, token=TOKEN, log="", python="", package="", spark_version="",
        session="a-session",
    )  # fmt: skip
    return state.remote


def test_the_token_reaches_the_server_on_every_call(real_server: tuple[int, _Recording]) -> None:
    port, handler = real_server
    assert _call(_server_url(port)) == b"answer"
    assert _call(_server_url(port)) == b"answer"
    assert [call["authorization"] for call in handler.calls] == [f"Bearer {TOKEN}"] * 2


@needs_ipv6
def test_a_listener_on_the_ipv6_loopback_gets_nothing(real_server: tuple[int, _Recording]) -> None:
    port, handler = real_server
    thief = Thief(port)
    try:
        for _ in range(3):
            assert _call(_server_url(port)) == b"answer"
    finally:
        thief.close()
    assert (thief.connections, thief.received) == (0, b"")
    assert len(handler.calls) == 3


def test_the_server_state_names_its_address_not_localhost() -> None:
    url = _server_url(15002)
    assert url.startswith("sc://127.0.0.1:15002/;")
    assert LoopbackChannelBuilder(url).endpoint == "127.0.0.1:15002"


@pytest.mark.parametrize("host", ["localhost", "[::1]", "example.com", "10.0.0.1"])
def test_a_token_is_never_sent_to_another_host(host: str) -> None:
    with pytest.raises(InvalidParameterError, match=r"sent only to 127\.0\.0\.1, not to "):
        LoopbackChannelBuilder(f"sc://{host}:15002/;token={TOKEN}")


@needs_ipv6
def test_a_port_held_on_the_ipv6_loopback_is_refused_before_spark_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(connect_server.STATE_DIR_ENV, str(tmp_path))
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as squatter:
        squatter.bind((LOOPBACK_V6, 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        with pytest.raises(SparkStartError, match=rf"^port {port} on ::1 is taken \(.*--port$"):
            connect_server.start(port, timeout=5)
    assert connect_server.read_state() is None
