"""The web front end: a Starlette (ASGI) app over the league's read model
(:class:`~sueca.arena.league.view.LeagueView`).

Pages: ``/`` (a featured match replayed at a person's pace, and the leaderboard),
``/bots/{name}``, ``/matches``, ``/matches/{id}`` (the replay viewer, or the live board),
``/tournaments``, ``/tournaments/{id}``, ``/competitions``, ``/competitions/{name}``. JSON: the
same under ``/api/`` (``/api/leaderboard``, ``/api/matches``, ``/api/matches/{id}``,
``/api/bots/{name}``, ``/api/tournaments/{id}``, ``/api/competitions/{name}``), and
``/api/featured`` (the front page's next match). Times for people are ISO 8601 UTC, and the
leaderboard's floats are rounded (:func:`sueca.arena.leaderboard.json_row`); numbers and missing
values read as the CLI writes them (:mod:`sueca.arena.format`).
A hosted bot's owner reads its log at ``/bots/{name}/logs`` (a form that POSTs the token, so
it never sits in a URL or an access log) or ``/api/bots/{name}/logs`` (``Authorization: Bearer
TOKEN``); nothing else shows it. Otherwise only GET and HEAD exist, and no handler writes to
Redis. An unknown id is a 404 and a bad query
parameter a 400, each as a page (or a JSON ``{"error"}`` under ``/api/``) quoting the bad value;
Redis out of reach is a 503; anything else a bare 500 — never a traceback.

Run it with ``uvicorn --factory sueca.arena.web.app:from_env`` (``SUECA_REDIS_URL``), or as part
of ``sueca-arena serve``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sueca.arena.format import MISSING, clean, end_word, fmt, iso_time, ms, outcome_words, when
from sueca.arena.hosted.logs import OwnerLog, Refused, owner_log
from sueca.arena.leaderboard import json_row
from sueca.arena.league.limits import MATCH_ENDS
from sueca.arena.league.rows import BadQuery, NotFound, check_page
from sueca.arena.league.view import LeagueView
from sueca.arena.match_job import replicas
from sueca.arena.ratings.fit import PROVISIONAL_GAMES
from sueca.arena.records import MatchStatus
from sueca.arena.redisproc import default_url
from sueca.arena.retention import schedule_status
from sueca.arena.store import TRANSIENT_REDIS_ERRORS, Store
from sueca.arena.web.endpoints import ENDPOINTS, FAVICON
from sueca.arena.web.live import NotLive, Slots, TooMany, open_watch, sse
from sueca.arena.web.plot import rating_plot
from sueca.arena.web.viewer import parse_position, places, position, query
from sueca.engine.game import FAULT_ENDS
from sueca.sdk.logs import setup

log = logging.getLogger("sueca.arena.web")
TEMPLATES = Path(__file__).parent / "templates"
MAX_ID = 200  # longer ids are no id of ours: 404 without asking Redis
TOKEN_FORM_BYTES = 4096  # the owner's log form: a token is a few dozen bytes
FEATURED_MS = 1000  # the front page's featured match: milliseconds a card (a person's pace)


def _q(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    return None if value is None or value == "" else value


def create_app(store: Store, referees: Sequence[str] = ()) -> ServerTiming:
    """The app over ``store``; live spectating asks ``referees`` first, then every replica
    :func:`sueca.arena.match_job.replicas` knows."""
    view = LeagueView(store)
    slots = Slots()
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
    env.filters.update(when=when, fmt=fmt, ms=ms, end_word=end_word)
    env.globals.update(outcome_words=outcome_words, missing=MISSING)  # one wording with the CLI
    env.globals["provisional_games"] = PROVISIONAL_GAMES  # the leaderboard's ? mark

    def page(request: Request, name: str, status: int = 200,
             **context: Any) -> HTMLResponse:  # Any: a template's context, any value
        def url(**changes: object) -> str:
            params = dict(request.query_params)
            params.update({k: str(v) for k, v in changes.items() if v is not None})
            return request.url.path + "?" + urlencode(params)
        html = env.get_template(name).render(request=request, url=url, **context)
        return HTMLResponse(html, status_code=status)

    def api(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def answer(request: Request, data: object, template: str,
               **context: Any) -> Response:  # Any: a template's context, any value
        if api(request):
            return JSONResponse(clean(data))
        return page(request, template, data=data, **context)

    def ident(request: Request, name: str) -> str:
        value = request.path_params[name]
        if len(value) > MAX_ID:
            raise NotFound(f"no {name} {value[:60]!r}…")
        return str(value)

    # -- handlers (sync: Starlette runs them in its thread pool, redis-py is blocking) --------
    def leaderboard(request: Request) -> Response:
        rows = view.leaderboard(_q(request, "sort") or "rating")
        p, per = check_page(_q(request, "page") or 1, _q(request, "per") or 50)
        total = len(rows)
        if api(request):
            return JSONResponse(clean([json_row(r) for r in rows[(p - 1) * per: p * per]]))
        return page(request, "leaderboard.html", rows=rows[(p - 1) * per: p * per],
                    places=places(None), featured_ms=FEATURED_MS,
                    page_no=p, pages=max(1, -(-total // per)), total=total,
                    sort=_q(request, "sort") or "rating", trimmed=view.trimmed())

    def bot(request: Request) -> Response:
        data = view.bot(ident(request, "name"))
        if api(request):
            return JSONResponse(clean({**data, "last_seen": iso_time(data["last_seen"])}))
        kinds = list(dict.fromkeys([*data["faults"], *(str(e) for e in FAULT_ENDS)]))
        return page(request, "bot.html", data=data, plot=rating_plot(data["history"]),
                    fault_kinds=kinds)

    async def bot_logs(request: Request) -> Response:
        """``/bots/{name}/logs``: the owner's log behind the bot's token (POSTed by the form;
        a GET shows the form alone), or under ``/api/`` with ``Authorization: Bearer``."""
        name = ident(request, "name")
        if api(request):
            token = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        elif request.method == "POST":
            body = (await request.body())[:TOKEN_FORM_BYTES].decode("utf-8", "replace")
            token = (parse_qs(body).get("token") or [""])[0].strip()
        else:
            return page(request, "bot_logs.html", bot=name, log=None, message=None)
        try:
            got: OwnerLog = await run_in_threadpool(owner_log, store, name, token, last=500)
        except Refused as err:
            if api(request):
                return JSONResponse({"error": str(err), "status": 403}, status_code=403)
            return page(request, "bot_logs.html", 403, bot=name, log=None, message=str(err))
        response: Response = (JSONResponse(clean(got)) if api(request) else page(
            request, "bot_logs.html", bot=name, log=got, message=None))
        response.headers["Cache-Control"] = "no-store"
        return response

    def matches(request: Request) -> Response:
        data = view.matches(_q(request, "page") or 1, _q(request, "per") or 50,
                            tournament=_q(request, "tournament"), bot=_q(request, "bot"),
                            end=_q(request, "end"))
        return answer(request, data, "matches.html", ends=MATCH_ENDS,
                      filters={k: _q(request, k) or "" for k in ("tournament", "bot", "end")})

    def match(request: Request) -> Response:
        data = view.match(ident(request, "mid"))
        if api(request):
            return JSONResponse(clean(data))
        pos = None
        if data["replay"] is not None:
            pos = position(data["replay"], *parse_position(
                _q(request, "deal"), _q(request, "trick"), _q(request, "card")))
        elif _q(request, "deal") or _q(request, "trick") or _q(request, "card"):
            raise BadQuery(f"match {data['match']['id']!r} has no replay to show yet "
                           f"({data['hidden'] or 'no replay recorded'})")
        status = data["match"].get("status")
        watchable = status not in (MatchStatus.DONE, MatchStatus.FAILED) and not data["match"].get("pair")
        variant = data["match"]["spec"].get("variant") or {}
        return page(request, "match.html", data=data, pos=pos, watchable=watchable, query=query,
                    seats=data["match"]["spec"].get("bots") or ["?"] * 4,
                    places=places(variant.get("direction")))

    async def live(request: Request) -> Response:
        """``/api/matches/{id}/live``: the match's public events as server-sent events."""
        mid = ident(request, "mid")
        await run_in_threadpool(view.live, mid)
        known = list(referees) + [a for a in await run_in_threadpool(replicas, store)
                                  if a not in referees]
        events = open_watch(slots, known, mid)
        try:
            first = await events.__anext__()
        except NotLive as err:
            raise NotFound(str(err)) from None
        except StopAsyncIteration:
            raise NotFound(f"match {mid!r} ended before it could be watched") from None

        async def body() -> AsyncIterator[bytes]:
            try:
                yield sse(first)
                async for event in events:
                    yield sse(event)
                yield b"event: end\ndata: {}\n\n"
            finally:
                await events.aclose()

        return StreamingResponse(body(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    def featured(request: Request) -> Response:
        """``/api/featured?skip=ID``: the match the front page replays next (not ``skip``)."""
        skip = _q(request, "skip")
        return JSONResponse(clean(view.featured(None if skip is None else skip[:MAX_ID])))

    def tournaments(request: Request) -> Response:
        return answer(request, view.tournaments(), "tournaments.html")

    def tournament(request: Request) -> Response:
        return answer(request, view.tournament(ident(request, "tid")), "tournament.html")

    def competitions(request: Request) -> Response:
        return answer(request, view.competitions(), "competitions.html")

    def competition(request: Request) -> Response:
        return answer(request, view.competition(ident(request, "name"), _q(request, "page") or 1),
                      "competition.html")

    def health(request: Request) -> Response:
        store.ping()  # retention: serve's hourly policy and last run (None: not scheduled)
        return JSONResponse({"ok": True, "retention": schedule_status(store)})

    def api_index(request: Request) -> Response:
        """``/api/``: the JSON endpoints, each with its method and what it returns."""
        return JSONResponse({"endpoints": list(ENDPOINTS)})

    def favicon(request: Request) -> Response:
        return Response(FAVICON, media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})

    # -- errors -----------------------------------------------------------------------------
    def error(request: Request, status: int, message: str) -> Response:
        if api(request):
            return JSONResponse({"error": message, "status": status}, status_code=status)
        title = {400: "Bad request", 404: "Not found", 405: "Method not allowed",
                 503: "Unavailable"}.get(status, "Error")
        return page(request, "error.html", status, title=title, message=message, code=status)

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(request, 404, str(exc))

    async def bad_query(request: Request, exc: Exception) -> Response:
        return error(request, 400, str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        msg = f"no page at {request.url.path[:200]!r}" if exc.status_code == 404 else str(exc.detail)
        return error(request, exc.status_code, msg)

    async def busy(request: Request, exc: Exception) -> Response:
        return error(request, 503, str(exc))

    async def unavailable(request: Request, exc: Exception) -> Response:
        return error(request, 503, "the league's Redis is not answering; try again shortly")

    async def internal(request: Request, exc: Exception) -> Response:
        log.exception("error serving %s", request.url.path[:200])
        return error(request, 500, "internal error (logged on the server)")

    handlers: dict[Any, Any] = {NotFound: not_found, BadQuery: bad_query, TooMany: busy,
                                HTTPException: http_error, 500: internal}
    for err in TRANSIENT_REDIS_ERRORS:
        handlers[err] = unavailable
    routes = []
    for path, fn in (("/", leaderboard), ("/bots/{name}", bot), ("/matches", matches),
                     ("/matches/{mid}", match), ("/tournaments", tournaments),
                     ("/tournaments/{tid}", tournament), ("/competitions", competitions),
                     ("/competitions/{name}", competition)):
        routes.append(Route(path, fn, methods=["GET", "HEAD"]))
        api_path = "/api/leaderboard" if path == "/" else "/api" + path
        routes.append(Route(api_path, fn, methods=["GET", "HEAD"]))
    routes.append(Route("/bots/{name}/logs", bot_logs, methods=["GET", "POST"]))
    routes.append(Route("/api/bots/{name}/logs", bot_logs, methods=["GET"]))
    routes.append(Route("/api/health", health, methods=["GET", "HEAD"]))
    routes.append(Route("/api/featured", featured, methods=["GET", "HEAD"]))
    routes.append(Route("/api/matches/{mid}/live", live, methods=["GET"]))
    routes.append(Route("/api/", api_index, methods=["GET", "HEAD"]))
    for icon in ("/favicon.svg", "/favicon.ico"):
        routes.append(Route(icon, favicon, methods=["GET", "HEAD"]))
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # fold the results log now, not in the first visitor's request (5 s at 100,000 matches)
        threading.Thread(target=_warm, args=(view,), name="web-warm-up", daemon=True).start()
        yield

    return ServerTiming(Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan))


def _warm(view: LeagueView) -> None:
    try:
        view.refresh()
    except Exception as err:  # Redis away at start: the first request folds it instead
        log.warning("could not read the results log at start: %s", err)


class ServerTiming:
    """ASGI middleware: every response says how long the app took, ``Server-Timing: app;dur=MS``
    (browsers' developer tools show it; ``sueca-arena bench web`` reads it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - t0) * 1000.0
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"server-timing", f"app;dur={ms:.2f}".encode())]}
            await send(message)

        await self.app(scope, receive, timed)


def from_env() -> ServerTiming:
    """The app over ``SUECA_REDIS_URL`` and ``SUECA_KEY_PREFIX`` (uvicorn's ``--factory``);
    spectators are served from ``SUECA_REFEREES`` and the replicas' heartbeats."""
    setup()  # SUECA_LOG_FORMAT: uvicorn's own loggers go through the same handler
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    return create_app(Store.from_url(default_url()))


__all__ = ["create_app", "from_env"]
