"""The host's tools: the admin console and its command line, metrics, logs, game export, the
LAN address, TLS."""
