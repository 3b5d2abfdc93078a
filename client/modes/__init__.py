"""Ways to use the client besides joining a server: ``castell play`` (an embedded server with
bots) and ``castell replay`` (a finished game, step by step)."""
