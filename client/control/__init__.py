"""What a typed line does: the controller between a session and a screen, lobby and game
commands, completion, hints."""
