"""What the tests share, each part in the module named for it.

- ``games``: seeded games, precise changes to a state, and games played out step by step.
- ``rooms``: the ``RoomInfo`` a view is built from.
- ``sample_views``: hand-built protocol views and events for the client tests.
- ``screens``: the full-screen renderer's output as plain text.
- ``servers``: a real server to test against, in this process or as a subprocess.
- ``wire``: seated clients playing legal actions over a real websocket.
- ``hostile``: raw websockets, stalled readers, a game played beside the hardening tests.
- ``services``: the real PostgreSQL and Redis, a fresh corner of them per test.
- ``terminal``: the real client in a pseudo-terminal, its screen emulated.
- ``wire_strategies``: hypothesis strategies for messages and MessagePack values.
"""
