"""Shared fixtures: a real server on 127.0.0.1 and real websocket clients; for the scale-out
tests a PostgreSQL schema (``db``) and a Redis key prefix (``prefix``) of the test's own."""

from __future__ import annotations

import asyncio
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
from tests.support.services import drop_spare_schemas, fresh_prefix, store_schema

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
    """The store URL of a PostgreSQL schema of the test's own, with no rows
    (:func:`~tests.support.services.store_schema`)."""
    async with store_schema() as url:
        yield url


@pytest.fixture(scope="session", autouse=True)
def _spare_schemas() -> Iterator[None]:
    """At the end, drop the PostgreSQL schemas kept for the next test."""
    yield
    asyncio.run(drop_spare_schemas())


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



#: Set on a test whose xdist group was lost (below): it fails at its setup, saying why.
_UNGROUPED = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Fail the grouped tests when ``--dist loadgroup`` has silently stopped grouping.

    pytest-xdist marks a test of an ``xdist_group`` by a suffix on its node id, on the worker,
    in this same hook; the scheduler then keeps the group on one worker, so that the group's
    module fixture (a reviewed game, a certificate, a fuzzed server) is made once. Where the
    pytest in use ignores that suffix (pytest 9.2 with pytest-xdist 3.8: pytest-xdist issue
    1386), every worker would make each fixture again and the suite would only be slower:
    those tests fail instead, so that the pin in pyproject.toml is not lifted by accident."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid:
            item.stash[_UNGROUPED] = (
                "--dist loadgroup does not group with this pytest and pytest-xdist: this test's "
                "node id carries no group, so its module fixture would be made in every worker "
                "(see the pin of pytest in pyproject.toml)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _UNGROUPED in item.stash:
        pytest.fail(item.stash[_UNGROUPED], pytrace=False)
