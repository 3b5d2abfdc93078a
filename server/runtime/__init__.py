"""The asyncio drivers of the core: each room's runner (its lock, store writes, turn timer,
bots), the lobby that holds the rooms, the room directory, connections, the bot workers, the
retries after a store failure, the event loop."""
