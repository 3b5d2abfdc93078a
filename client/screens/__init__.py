"""What the player sees: the full-screen terminal, the plain line-by-line screen, the board's
rendering and descriptions, the rules pages, text made safe for a terminal."""
