"""Castell core, sans-I/O: board data, rules engine, towers, messages and codec."""
