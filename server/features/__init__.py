"""Store-backed services a request or a room calls on: accounts, ratings, quick match,
moderation, rematches, registration limits, matched-seat reservations, the server's
identity."""
