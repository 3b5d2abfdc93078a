"""The old import path of :mod:`tests.support.services`, kept for the store tests."""

from tests.support.services import POSTGRES_URL, REDIS_URL, fresh_prefix, fresh_schema, with_schema

__all__ = ["POSTGRES_URL", "REDIS_URL", "fresh_prefix", "fresh_schema", "with_schema"]
