"""The client's connection: the websocket client, the session that reconnects and takes the
seat back, addresses as typed, TLS."""
