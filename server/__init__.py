"""Castell game server: asyncio + websockets, the only holder of true game state."""
