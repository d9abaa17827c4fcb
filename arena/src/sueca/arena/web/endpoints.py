"""What the web app serves besides its pages: the index of its JSON endpoints (``/api/``, so the
address the ``serve`` banner names answers with the list of the others) and the site's icon."""

from __future__ import annotations

from typing import TypedDict


class Endpoint(TypedDict):
    path: str
    method: str
    returns: str


#: every JSON endpoint of the app, as ``/api/`` lists it (docs/web.md describes each)
ENDPOINTS: tuple[Endpoint, ...] = (
    {"path": "/api/", "method": "GET",
     "returns": "this list: each endpoint, its method and what it returns"},
    {"path": "/api/leaderboard", "method": "GET",
     "returns": "the leaderboard's rows, as `sueca-arena leaderboard --json` "
                "(?sort=rating|elo|openskill|games|bot, ?page=N, ?per=M)"},
    {"path": "/api/matches", "method": "GET",
     "returns": "{page, per, total, pages, matches}, newest first "
                "(?tournament=ID, ?bot=NAME, ?end=KIND, ?page=N, ?per=M)"},
    {"path": "/api/matches/{id}", "method": "GET",
     "returns": "{match, result, replay, hidden}, as `sueca-arena matches show ID --json`"},
    {"path": "/api/matches/{id}/live", "method": "GET",
     "returns": "a running match's public play as server-sent events (text/event-stream)"},
    {"path": "/api/featured", "method": "GET",
     "returns": "the front page's next featured match, as /api/matches/{id} (?skip=ID)"},
    {"path": "/api/bots/{name}", "method": "GET",
     "returns": "a bot's record, ratings, versions (each with its own rating of record), "
                "faults, rating history, recent matches and head-to-head"},
    {"path": "/api/bots/{name}/logs", "method": "GET",
     "returns": "a hosted bot's owner's log {bot, version, lines}, only with the header "
                "`Authorization: Bearer TOKEN` (the bot's token; 403 otherwise)"},
    {"path": "/api/tournaments", "method": "GET", "returns": "the tournaments"},
    {"path": "/api/tournaments/{id}", "method": "GET",
     "returns": "a tournament's progress, standings and cross table"},
    {"path": "/api/competitions", "method": "GET",
     "returns": "the competitions, each with its state, entrants and final's format"},
    {"path": "/api/competitions/{name}", "method": "GET",
     "returns": "a competition's state, times, transitions, entrants with version, division "
                "and rating of record, final, standings once closed, matches (?page=N), seed "
                "hash and, once closed, seed key"},
    {"path": "/api/health", "method": "GET",
     "returns": "{ok, retention} after one Redis round trip"},
)

#: the site's icon, a spade on a card (an SVG, linked from every page and also answered at
#: /favicon.ico, which browsers ask for unlinked)
FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    b'<rect width="32" height="32" rx="6" fill="#14532d"/>'
    b'<rect x="8" y="5" width="16" height="22" rx="2" fill="#fff"/>'
    b'<path d="M16 9c-2 3-5 5-5 8a3 3 0 0 0 4.5 2.6L14 24h4l-1.5-4.4A3 3 0 0 0 21 17c0-3-3-5-5-8z" '
    b'fill="#1d2327"/></svg>\n')

__all__ = ["ENDPOINTS", "FAVICON", "Endpoint"]
