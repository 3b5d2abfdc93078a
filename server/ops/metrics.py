"""The server's numbers in the Prometheus text format (``/metrics``), with prometheus-client.

:class:`Metrics` owns one registry per server (several servers may share a process, as in
the tests): counters and histograms the server's parts move as things happen (a push sent,
an action stored, a request refused), and gauges read from the server when scraped
(connections by state, rooms by status, deadlines waiting, the event loop's tasks, leases
held, the collector's frozen objects and thaws). Every name starts with ``castell_``;
docs/operations.md lists them with their meaning.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client import Counter as PCounter
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from server.runtime.collector import THAW_EVERY, THAW_FLOOR
from shared.bots import level_name

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]

#: Seconds: the buckets of the latency histograms (a request, a store commit, a bot).
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Seconds: the buckets of a bot's wait for a worker (a queue may hold it for long).
_WAIT_BUCKETS = (*_BUCKETS, 30.0, 60.0)


class _Live(Collector):
    """The gauges read from the server at each scrape."""

    def __init__(self, sample: Callable[[], dict[str, Any]]) -> None:
        self.sample = sample

    def collect(self) -> Iterable[GaugeMetricFamily | CounterMetricFamily]:
        now = self.sample()
        conns = GaugeMetricFamily("castell_connections", "Open connections, by protocol "
                                  "state", labels=["state"])
        for state, count in sorted(now["connections"].items()):
            conns.add_metric([state], count)
        yield conns
        rooms = GaugeMetricFamily("castell_rooms", "Rooms in this server's memory, by status",
                                  labels=["status"])
        for status, count in sorted(now["rooms"].items()):
            rooms.add_metric([status], count)
        yield rooms
        yield GaugeMetricFamily("castell_ready", "1 when this server takes new players (not "
                                "starting, not draining)", value=1 if now["ready"] else 0)
        yield GaugeMetricFamily("castell_deadlines", "Turn deadlines and challenge expiries "
                                "waiting in this server's one heap of deadlines",
                                value=now["deadlines"])
        yield GaugeMetricFamily("castell_event_loop_tasks", "Tasks in this server's event loop "
                                "(a room waiting for its next action has none)",
                                value=now["tasks"])
        if now.get("collector") is not None:
            frozen, thaws, last = now["collector"]
            yield GaugeMetricFamily("castell_collector_frozen_objects", "Objects the garbage "
                                    "collector no longer walks (frozen after a collection), "
                                    "as last counted: at the start, after a thaw, and at "
                                    f"most once every {THAW_EVERY:.0f} s", value=frozen)
            yield CounterMetricFamily("castell_collector_thaws", "Whole collections of the "
                                      f"frozen objects (at most one every {THAW_EVERY:.0f} s, "
                                      f"once they had grown by {THAW_FLOOR:,})", value=thaws)
            yield GaugeMetricFamily("castell_collector_last_thaw_seconds", "How long the "
                                    "last whole collection paused the server", value=last)
        if now["leases"] is not None:
            yield GaugeMetricFamily("castell_cluster_leases_held", "Room leases this node "
                                    "holds", value=now["leases"])


class _Tallies(Collector):
    """The counters moved on every action and push: kept as plain numbers by
    :class:`Metrics` (a prometheus-client counter takes a lock per increment, and a labelled
    one a lookup too: a dozen of those per action cost more than storing it in memory), and
    read at each scrape."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[CounterMetricFamily]:
        m = self.metrics
        actions = CounterMetricFamily("castell_actions", "Actions stored, by kind (players' "
                                      "and bots')", labels=["kind"])
        for kind, count in sorted(m.stored.items()):
            actions.add_metric([kind], count)
        yield actions
        yield CounterMetricFamily("castell_pushes", "Views pushed to connections (whole or "
                                  "as patches)", value=m.pushed)
        yield CounterMetricFamily("castell_bytes_sent", "Bytes of frames queued to "
                                  "connections", value=m.sent)


class Timings(Collector):
    """A latency histogram moved on every action (a request, a store commit), kept as plain
    numbers: prometheus-client's ``Histogram.observe`` takes a lock for its sum and one for
    its bucket, 1.1% of a saturated server's instructions per action for the two of them
    (BENCHMARKS.md, "Round three"). Read at each scrape; a scrape from the metrics' own
    thread (``--metrics-listen``) may see a sample counted in a bucket but not yet in the
    sum, which the next scrape mends."""

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = buckets
        #: Samples at or below each bound (in no lower one), then those above every bound.
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        """Count one sample of ``seconds``."""
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    def collect(self) -> Iterable[HistogramMetricFamily]:
        running, buckets = 0, []
        for bound, count in zip((*map(str, self.bounds), "+Inf"), self.counts, strict=True):
            running += count
            buckets.append((bound, running))
        yield HistogramMetricFamily(self.name, self.documentation, buckets=buckets,
                                    sum_value=self.sum)


class Metrics:
    """One server's metrics (see the module docstring). The counters of every action and
    push are plain attributes, moved with ``+=`` (:attr:`stored`, :attr:`pushed`,
    :attr:`sent`), and its two latencies plain histograms (:class:`Timings`); the rest are
    prometheus-client metrics."""

    def __init__(self, sample: Callable[[], dict[str, Any]]) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.registry.register(_Live(sample))
        self.games_started = PCounter("castell_games_started", "Games started", registry=r)
        self.games_finished = PCounter("castell_games_finished", "Games finished",
                                       registry=r)
        self.rooms_closed = PCounter("castell_rooms_closed_by_host",
                                     "Rooms the host closed (admin close)", registry=r)
        #: Actions stored, by kind; views pushed; bytes of frames queued (see _Tallies).
        self.stored: Counter[str] = Counter()
        self.pushed = 0
        self.sent = 0
        self.registry.register(_Tallies(self))
        self.refusals = PCounter("castell_refusals", "Requests answered with an error, by "
                                 "code", ["code"], registry=r)
        self.rate_limited = PCounter("castell_rate_limited", "Requests refused for a rate "
                                     "limit (answered rate_limited)",
                                     registry=r)
        self.request_seconds = Timings("castell_request_seconds", "From a frame received "
                                       "to its reply queued", _BUCKETS)
        self.commit_seconds = Timings("castell_store_commit_seconds", "Storing one change "
                                      "of a room (its writes, before the ok)", _BUCKETS)
        r.register(self.request_seconds)
        r.register(self.commit_seconds)
        self.slow_closed = PCounter("castell_slow_readers_closed", "Connections closed for "
                                    "reading too slowly", registry=r)
        self.bot_seconds = Histogram("castell_bot_decision_seconds", "A bot's decision, by "
                                     "level", ["level"], buckets=_BUCKETS, registry=r)
        self.bot_wait_seconds = Histogram("castell_bot_wait_seconds", "How long a bot's "
                                          "decision waited for a worker process before it "
                                          "ran, by level", ["level"], buckets=_WAIT_BUCKETS,
                                          registry=r)
        self.reviews = PCounter("castell_reviews", "Game reviews answered, by where they "
                                "came from: computed, joined (being computed for another "
                                "asker) or stored", ["source"], registry=r)
        self.takeovers = PCounter("castell_cluster_takeovers", "Rooms this node took over "
                                  "from a node that stopped serving them", registry=r)
        self.moved = PCounter("castell_cluster_moved", "Requests answered moved (the room "
                              "is served by another node)", registry=r)
        self.web_pages = PCounter("castell_web_pages", "Web pages answered (server.web), by "
                                  "HTTP status", ["status"], registry=r)
        self.web_seconds = Histogram("castell_web_page_seconds", "Making one web page, from "
                                     "its request to its answer", buckets=_BUCKETS,
                                     registry=r)

    def bot_waited(self, level: str, seconds: float) -> None:
        """A bot's decision of ``level`` (or a turn of a game's review: ``review``) waited
        ``seconds`` for a worker."""
        name = level if level == "review" else level_name(level)
        self.bot_wait_seconds.labels(level=name).observe(seconds)

    def reviewed(self, source: str) -> None:
        """A ``review`` answered: ``computed`` (here, now), ``joined`` (a computation under
        way for another asker) or ``stored`` (read from the store)."""
        self.reviews.labels(source=source).inc()

    def page(self, status: int, seconds: float) -> None:
        """A web page answered with ``status`` after ``seconds``."""
        self.web_pages.labels(status=str(status)).inc()
        self.web_seconds.observe(seconds)

    def refused(self, code: str) -> None:
        self.refusals.labels(code=code).inc()
        if code == "rate_limited":
            self.rate_limited.inc()
        elif code == "moved":
            self.moved.inc()

    def scrape(self) -> bytes:
        """The metrics in the Prometheus text format."""
        return generate_latest(self.registry)
