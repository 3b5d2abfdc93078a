"""Shared fixtures: a real server on 127.0.0.1 and real websocket clients."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs
import pytest

from client.net import GameClient
from server.app import CastellServer
from server.config import ServerConfig

ClientFactory = Callable[..., Awaitable[GameClient]]


@pytest.fixture
def server_config() -> ServerConfig:
    """Settings for the test server: a free port, bots without delay."""
    return ServerConfig(host="127.0.0.1", port=0, bot_delay=0.0, ping_interval=None,
                        rate=1000.0, burst=1000.0)


@pytest.fixture
async def server(server_config: ServerConfig) -> AsyncIterator[CastellServer]:
    srv = CastellServer(server_config)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.close()


@pytest.fixture
def url(server: CastellServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


@pytest.fixture
async def connect(url: str) -> AsyncIterator[ClientFactory]:
    """Open clients (optionally saying hello); all are closed at the end of the test."""
    clients: list[GameClient] = []

    async def factory(name: str | None = None, **kwargs: object) -> GameClient:
        client = await GameClient.connect(url, **kwargs)
        clients.append(client)
        if name is not None:
            await client.hello(name)
        return client

    yield factory
    for client in clients:
        with contextlib.suppress(Exception):
            await client.close()


def with_config(**changes: object) -> Callable[[ServerConfig], ServerConfig]:
    return lambda cfg: attrs.evolve(cfg, **changes)
