"""How a Spark Connect client reaches the local server: at the address the server listens on,
never at a name.

pyspark sends a Connect token without TLS only to a host called ``localhost`` (gRPC's local
credentials); it opens a TLS channel to any other host. But ``localhost`` is a name, and gRPC
resolves it to every address the machine gives it, ``::1`` first where the hosts file lists
both. The local server listens on 127.0.0.1 only, so any other user of the machine who holds
``[::1]`` on the same port would receive the token (in clear, in every call's ``authorization``
header) and, with it, run their code as the server's user.

:class:`LoopbackChannelBuilder` keeps pyspark's behaviour (gRPC's local credentials, the token
on every call, the URL's parameters) and changes only where it goes: the IPv4 loopback literal,
with no name to resolve. gRPC's local credentials check at connection time that the peer is a
loopback address, so the token never leaves the machine either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql.connect.client import DefaultChannelBuilder

from flinkstate.errors import InvalidParameterError
from flinkstate.spark.settings import LOOPBACK

if TYPE_CHECKING:
    import grpc


class LoopbackChannelBuilder(DefaultChannelBuilder):
    """The channel of a Connect session on this machine's local server (``sc://127.0.0.1:PORT``,
    with its ``token`` and ``session_id`` parameters); any other host is refused, because the
    token travels unencrypted.

    Examples
    --------
    >>> LoopbackChannelBuilder("sc://127.0.0.1:15002/;token=secret").endpoint
    '127.0.0.1:15002'
    >>> try:
    ...     LoopbackChannelBuilder("sc://localhost:15002/;token=secret")
    ... except InvalidParameterError as refused:
    ...     print(refused)
    a Spark Connect token is sent only to 127.0.0.1, not to localhost
    """

    def __init__(self, url: str, channelOptions: list[tuple[str, Any]] | None = None) -> None:
        super().__init__(url, channelOptions)
        if self.host != LOOPBACK:
            raise InvalidParameterError(
                f"a Spark Connect token is sent only to {LOOPBACK}, not to {self.host}"
            )

    def toChannel(self) -> grpc.Channel:
        """A channel to 127.0.0.1 with gRPC's local credentials and the token on every call,
        as pyspark builds one for ``localhost``."""
        import grpc

        credentials = grpc.local_channel_credentials(grpc.LocalConnectionType.LOCAL_TCP)
        if self.token is not None:
            credentials = grpc.composite_channel_credentials(
                credentials, grpc.access_token_call_credentials(self.token)
            )
        channel: grpc.Channel = self._secure_channel(self.endpoint, credentials)
        return channel
