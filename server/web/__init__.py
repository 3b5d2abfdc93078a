"""The server's web pages: a window on it in any browser, plain HTML and CSS, no JavaScript.

``castell-server`` answers a browser's GET on the game's own port (``--web off``: it does
not): the lobby (``/``), a game in play as a spectator sees it (``/rooms/ID``), a finished
game with its replay and record (``/games/ID``), players (``/players/NAME``), the leaderboard
and the tournaments. The parts:

* :mod:`server.web.router` — a path to a page: the per-address rate limit, 404s for what is
  not served, the error boundary (what failed is logged with its cause; the browser is told
  only that something failed), the HTTP headers every page carries;
* :mod:`server.web.pages` — what each page shows, gathered from the parts that own it (the
  rooms in memory, the store, ratings, tournaments, presence), never more than a spectator
  sees and never a private room, each page cached (a room's by its version);
* :mod:`server.web.board` — a view (:mod:`shared.view`) and its events as the page's board,
  in the words the terminal uses (:mod:`shared.describe`);
* :mod:`server.web.svg` — the charts, drawn on the server as SVG;
* :mod:`server.web.cache` — the bounded cache of pages and replays;
* :mod:`server.web.render` — the Jinja2 templates (``templates/``, autoescaped) and the one
  stylesheet (``static/style.css``).

It reads and never writes: no page changes a room, a rating or an account (an import
contract in ``pyproject.toml`` keeps it from the protocol edge and the store backends).
``docs/operations.md`` ("Web pages") says what each page shows and what it never does.
"""
