"""Imported once by the fork server of :mod:`tests.support.forked`, never by a test: the
server's modules (what ``python -m server`` imports on its way to serving), then the collector
told that what they built is settled (``gc.freeze``), so a forked server does not copy those
pages to scan them."""

import gc

import server.app
import server.cli
import server.ops.lan
import server.ops.logs
import server.runtime.loop
import server.store.sqlite  # noqa: F401  (each line imports what it names)

gc.freeze()
