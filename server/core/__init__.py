"""The server's pure core: a room's rules of change (seats, the game and its versions, shown
views and patches, extras), names as they compare, a game's history, the fair share of bot
workers, record pages. No asyncio, no sockets, no store backend, no clock of its own: inputs
in, store writes and effects out (checked by the import contracts in ``pyproject.toml``)."""
