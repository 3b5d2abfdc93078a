"""What the client keeps on this computer: account keys, seat tokens, settings."""
