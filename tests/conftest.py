"""Shared fixtures: a real server on 127.0.0.1 and real websocket clients; for the scale-out
tests a PostgreSQL schema (``db``) and a Redis key prefix (``prefix``) of the test's own."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from client.net.net import GameClient
from server.app import CastellServer
from server.config import ServerConfig
from tests.support.servers import TEST_CONFIG, server_url, serving
from tests.support.services import fresh_prefix, fresh_schema

ClientFactory = Callable[..., Awaitable[GameClient]]


@pytest.fixture
def server_config() -> ServerConfig:
    """Settings for the test server (override this fixture to change them)."""
    return TEST_CONFIG


@pytest.fixture
async def server(server_config: ServerConfig) -> AsyncIterator[CastellServer]:
    async with serving(config=server_config) as (srv, _url):
        yield srv


@pytest.fixture
def url(server: CastellServer) -> str:
    return server_url(server)


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


@pytest.fixture
async def db() -> AsyncIterator[str]:
    """The store URL of a new, empty PostgreSQL schema, dropped after the test."""
    async with fresh_schema() as url:
        yield url


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    """A new Redis key prefix, its keys deleted after the test."""
    async with fresh_prefix() as made:
        yield made


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path (a Unix socket's path is at most 107 bytes)."""
    made = Path(tempfile.mkdtemp(prefix="cst"))
    yield made
    shutil.rmtree(made, ignore_errors=True)
