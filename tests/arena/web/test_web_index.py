"""``/api/`` lists the JSON endpoints (the address `serve`'s banner names), and the site has an
icon: both over the real app on a league seeded with recorded matches."""

from __future__ import annotations

from typing import Any


def _concrete(path: str, seeded: dict[str, Any]) -> str:
    """An endpoint's path with a seeded league's ids in its placeholders."""
    return (path.replace("{id}/live", f"{seeded['running']}/live")
            .replace("/matches/{id}", f"/matches/{seeded['matches'][0]}")
            .replace("/competitions/{name}", "/competitions/ladder")
            .replace("{name}", "heuristic").replace("{id}", seeded["tournament"]))


def test_api_lists_every_json_endpoint_and_each_answers(client: Any,
                                                         seeded: dict[str, Any]) -> None:
    r = client.get("/api/")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    listed = r.json()["endpoints"]
    assert all(set(e) == {"path", "method", "returns"} and e["returns"] for e in listed), listed
    paths = {e["path"] for e in listed}
    # every /api route the app has is listed, and nothing else
    app = getattr(client.app, "app", client.app)  # inside the Server-Timing middleware
    routes = {getattr(route, "path", "") for route in app.routes}
    named = {p.replace("{mid}", "{id}").replace("{tid}", "{id}")
             for p in routes if p.startswith("/api")}
    assert paths == named, (paths ^ named)
    for e in listed:
        path = _concrete(e["path"], seeded)
        if path.endswith("/live"):  # a stream: only that it is routed (the match is not on a referee)
            got = client.get(path)
            assert got.status_code == 404 and "no page at" not in got.text, got.text
            continue
        got = client.request(e["method"], path)
        if path.endswith("/logs"):  # an owner's log: refused without the bot's token (the
            assert got.status_code == 403, got.text  # hosted-bots tests read it with one)
            assert got.headers["content-type"] == "application/json", path
            continue
        assert got.status_code == 200, (path, got.status_code, got.text[:200])
        assert got.headers["content-type"] == "application/json", path
    assert client.get("/api", follow_redirects=True).json()["endpoints"] == listed


def test_every_page_links_an_icon_that_is_served(client: Any) -> None:
    page = client.get("/matches").text
    assert '<link rel="icon" href="/favicon.svg" type="image/svg+xml">' in page
    for path in ("/favicon.svg", "/favicon.ico"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-type"] == "image/svg+xml"
        assert r.content.startswith(b"<svg") and r.content.rstrip().endswith(b"</svg>")
    assert client.head("/favicon.ico").status_code == 200
