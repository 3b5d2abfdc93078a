"""The metrics kept as plain numbers (server.ops.metrics) read exactly as prometheus-client's
own would: a :class:`~server.ops.metrics.Timings` histogram scrapes line for line as a
prometheus-client ``Histogram`` given the same samples (its ``_created`` aside)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from server.ops.metrics import _BUCKETS, Timings


def _lines(registry: CollectorRegistry) -> list[str]:
    return [line for line in generate_latest(registry).decode().splitlines()
            if not line.startswith("#") and "_created" not in line]


@given(st.lists(st.floats(min_value=0.0, max_value=60.0) | st.sampled_from(_BUCKETS),
                max_size=40))
def test_a_timings_histogram_scrapes_as_prometheus_clients_own(samples):
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    timings = Timings("castell_x_seconds", "A latency", _BUCKETS)
    ours.register(timings)
    histogram = Histogram("castell_x_seconds", "A latency", buckets=_BUCKETS,
                          registry=theirs)
    for seconds in samples:  # a bound itself counts in its own bucket (le: at or below)
        timings.observe(seconds)
        histogram.observe(seconds)
    assert _lines(ours) == _lines(theirs)
