"""The listening socket every server of the project is served on (``bind_listener``: the simulator, the webhook
receiver, the daemon's API) hands out connections with ``TCP_NODELAY``: without it, an answer written in two parts
(uvicorn writes the head, then the body) waits for the client's delayed ACK, 40 ms on every keep-alive request."""

from __future__ import annotations

import asyncio
import socket

from fabric.serving import bind_listener


def test_connections_accepted_from_the_listener_do_not_wait_for_acks() -> None:
    async def accepted_nodelay() -> int:
        listener = bind_listener("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(connected, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            result = await asyncio.wait_for(seen, 10)
            writer.close()
            return result

    assert asyncio.run(accepted_nodelay()) != 0
