"""The web front end over HTTP: the real Starlette app, a real Redis, matches really played and
recorded by the league's runner. Pages and ``/api/`` agree with the CLI's data; the replay viewer
shows the recorded cards; hidden information stays hidden; errors are pages, not tracebacks;
nothing a visitor does writes to Redis."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

WIN = re.compile(r'class="card[^"]*\bwin\b[^"]*" data-card="(\w+)"')


def _cards(html: str, element_id: str) -> list[str]:
    """The data-card values inside the element with that id (up to its closing div/span)."""
    m = re.search(rf'id="{element_id}">(.*?)</(?:div|span)>\s*(?:</div>|<span class="order")', html, re.S)
    assert m, f"no #{element_id} in the page"
    return re.findall(r'data-card="(\w+)"', m.group(1))


def test_leaderboard_api_is_the_cli_data(client: Any, seeded: dict[str, Any]) -> None:
    from sueca.arena.leaderboard import DECIMALS, leaderboard
    cli = leaderboard(seeded["store"])  # the CLI's --json rows, by the rating of record
    rows = client.get("/api/leaderboard").json()
    assert [r["bot"] for r in rows] == [r["bot"] for r in cli]
    for r, c in zip(rows, cli):
        for key, value in c.items():  # every field of the CLI's rows, floats rounded
            want = round(value, DECIMALS[key]) if isinstance(value, float) else value
            assert r[key] == want, (r["bot"], key)
        assert r["matches"] > 0 and r["rating_pm"] > 0 and r["provisional"] is True
        assert r["won"] + r["drawn"] + r["lost"] == r["logged"] >= r["matches"]
    by_elo = client.get("/api/leaderboard?sort=elo").json()
    cli_elo = leaderboard(seeded["store"], by="elo")
    assert [r["bot"] for r in by_elo] == [r["bot"] for r in cli_elo]


def test_leaderboard_page_shows_every_bot_with_its_ratings(client: Any,
                                                           seeded: dict[str, Any]) -> None:
    from sueca.arena.leaderboard import leaderboard
    # the page rounds the full-precision values (the API's are rounded already)
    rows: list[Any] = leaderboard(seeded["store"])
    assert [r["bot"] for r in rows] == [r["bot"] for r in client.get("/api/leaderboard").json()]
    html = client.get("/").text
    assert "rating ± 95%" in html and "live Elo" in html and "Elo ± 95%" not in html
    assert [unescape(b) for b in re.findall(r'<tr data-bot="([^"]+)"[^>]*>', html)] == [
        r["bot"] for r in rows]  # in the rating of record's order
    for r in rows:
        row = re.search(rf'<tr data-bot="{r["bot"]}"[^>]*>(.*?)</tr>', html, re.S)
        assert row, r["bot"]
        rating = re.search(r'class="num rating">([^<]*)<', row.group(1)).group(1)
        assert rating == f"{r['rating']:.0f} ± {r['rating_pm']:.0f}"
        assert ('class="provisional"' in row.group(1)) == r["provisional"]
        assert f"{r['elo']:.0f} ± {r['elo_pm']:.0f}" in row.group(1)
        assert f"{r['mu']:.1f} ± {r['mu_pm']:.1f}" in row.group(1)
    rows = client.get("/api/leaderboard").json()
    by_os = client.get("/api/leaderboard?sort=openskill").json()
    assert [r["ordinal"] for r in by_os] == sorted((r["ordinal"] for r in rows), reverse=True)
    assert client.get("/api/leaderboard?sort=rating").json() == rows
    page2 = client.get("/api/leaderboard?per=2&page=2").json()
    assert [r["bot"] for r in page2] == [r["bot"] for r in rows[2:4]]


def test_the_leaderboard_reads_the_cached_rating_of_record(client: Any, seeded: dict[str, Any],
                                                          monkeypatch: Any) -> None:
    """The page views do not refit: the rating of record is the one the league cached (or, when
    that lags the log, this process's own refit, at most once per RECORD_TTL)."""
    import sueca.arena.league.view as data
    from sueca.arena.store.ratings import fit_of_record
    fits: list[int] = []
    real_fit = data.fit_record

    def counted(*args: Any, **kw: Any) -> Any:
        fits.append(1)
        return real_fit(*args, **kw)
    monkeypatch.setattr(data, "fit_record", counted)
    cached = fit_of_record(seeded["store"])  # what the scheduler and the exporter cache
    for path in ("/", "/?sort=elo", "/api/leaderboard", "/api/bots/random", "/bots/heuristic"):
        assert client.get(path).status_code == 200
    assert fits == []
    rows = client.get("/api/leaderboard").json()
    assert {r["bot"]: r["rating"] for r in rows} == {
        b: round(cached.rating[b], 1) for b in (r["bot"] for r in rows)}


def test_replay_viewer_shows_the_recorded_cards(client: Any, seeded: dict[str, Any]) -> None:
    # a match of at least 3 deals (the seeds are random: a match may end after 2)
    mid, rec = next((m, r) for m in seeded["matches"]
                    if len((r := seeded["store"].replay(m))["deals"]) >= 3)
    deal = rec["deals"][1]
    trick = deal["tricks"][4]
    before = {c for t in deal["tricks"][:4] for c in t["cards"]}
    points = [0, 0]
    for t in deal["tricks"][:4]:
        points[t["winner"] & 1] += t["points"]
    for n in range(1, 5):  # card by card through the 5th trick of the 2nd deal
        html = client.get(f"/matches/{mid}?deal=2&trick=5&card={n}").text
        assert "Deal 2 of" in html and f"trick 5 of 10, card {n} of 4" in html
        for i, card in enumerate(trick["cards"]):
            seat = (trick["leader"] + i) & 3
            assert _cards(html, f"table-{seat}") == ([card] if i < n else [])
        gone = before | set(trick["cards"][:n])
        for seat in range(4):  # the hands shrink as the cards are played
            assert sorted(_cards(html, f"hand-{seat}")) == sorted(set(deal["hands"][seat]) - gone)
        if n < 4:  # the trick is being played: nobody has taken it yet
            assert 'id="trick-winner"' not in html and not WIN.search(html)
            assert f'id="to-play">{(trick["leader"] + n) & 3}<' in html
            assert f'id="points">{points[0]}–{points[1]}<' in html
    assert re.search(r'id="trick-winner">(\d)<', html).group(1) == str(trick["winner"])
    assert [m.group(1) for m in WIN.finditer(html)] == [trick["cards"][
        (trick["winner"] - trick["leader"]) & 3]]  # the winner's card is marked, only it
    points[trick["winner"] & 1] += trick["points"]
    assert f'id="points">{points[0]}–{points[1]}<' in html
    assert re.search(r'id="trump"><span[^>]*data-card="(\w+)"', html).group(1) == deal["trump"]
    # a URL without a card is the trick complete
    assert client.get(f"/matches/{mid}?deal=2&trick=5").text == html
    # steps are links to the neighbouring positions: card, trick, deal
    assert 'id="prev" data-keys="ArrowLeft"' in html
    assert 'href="?deal=2&amp;trick=5&amp;card=3"' in html
    assert 'href="?deal=2&amp;trick=6&amp;card=1"' in html  # next card
    assert 'href="?deal=2&amp;trick=6&amp;card=4"' in html  # next trick, complete
    assert 'href="?deal=3&amp;trick=0"' in html  # next deal
    first = client.get(f"/matches/{mid}?deal=2&trick=5&card=1").text
    assert 'href="?deal=2&amp;trick=4&amp;card=4"' in first  # previous card: the last trick's
    dealt = client.get(f"/matches/{mid}?deal=2&trick=0").text
    for seat in range(4):
        assert sorted(_cards(dealt, f"hand-{seat}")) == sorted(deal["hands"][seat])
    assert 'href="?deal=2&amp;trick=1&amp;card=1"' in dealt
    assert 'href="?deal=1&amp;trick=10&amp;card=4"' in dealt  # back: the deal before, at its end
    # the last card of a deal adds its game points
    end = client.get(f"/matches/{mid}?deal=1&trick=10&card=4").text
    gp = rec["deals"][0]["game_points"]
    assert f"0–0 → {gp[0]}–{gp[1]}" in end and 'id="deal-end"' in end
    assert "→" not in client.get(f"/matches/{mid}?deal=1&trick=10&card=3").text.split(
        'id="cross">')[1].split("</span>")[0]
    assert 'href="?deal=2&amp;trick=0"' in end


def test_match_api_has_the_replay_once_finished(client: Any, seeded: dict[str, Any]) -> None:
    mid = seeded["matches"][1]
    doc = client.get(f"/api/matches/{mid}").json()
    assert doc["replay"] == seeded["store"].replay(mid)
    assert doc["result"] == seeded["store"].result_of(mid)
    assert doc["hidden"] is None and doc["match"]["spec"]["seed"]


def test_a_running_match_shows_no_hands_nor_seed(client: Any, seeded: dict[str, Any]) -> None:
    mid = seeded["running"]
    doc = client.get(f"/api/matches/{mid}").json()
    assert doc["match"]["status"] == "running" and doc["replay"] is None
    assert "seed" not in doc["match"]["spec"] and "12345" not in client.get(f"/api/matches/{mid}").text
    html = client.get(f"/matches/{mid}").text
    assert 'data-card="' not in html and "12345" not in html and "shown once the match is finished" in html
    assert html.count("once the match is") == 1  # said once, above the live table
    r = client.get(f"/matches/{mid}?deal=1&trick=1")
    assert r.status_code == 400 and "no replay to show yet" in r.text


def test_a_half_played_duplicate_pair_hides_the_decks_until_the_twin_is_done(
        client: Any, seeded: dict[str, Any]) -> None:
    from sueca.arena.match_job import play_and_record
    done, pending = seeded["half_done"], seeded["half_pending"]
    seed = seeded["store"].match(done)["spec"]["seed"]
    doc = client.get(f"/api/matches/{done}").json()
    assert doc["match"]["status"] == "done" and doc["replay"] is None and "twin" in doc["hidden"]
    assert seed not in client.get(f"/api/matches/{done}").text
    assert seed not in client.get(f"/api/matches/{pending}").text
    assert 'data-card="' not in client.get(f"/matches/{done}").text
    # a failed twin is no finished one: re-running its tournament plays it on the same seed
    seeded["store"].record_failure(pending, "referee gone")
    assert client.get(f"/api/matches/{done}").json()["replay"] is None
    play_and_record(seeded["store"], pending, mode="local")
    doc = client.get(f"/api/matches/{done}").json()
    assert doc["hidden"] is None and doc["replay"]["deals"]


@pytest.mark.parametrize("path, status, quoted", [
    ("/matches/no-such-match", 404, "'no-such-match'"),
    ("/bots/nobody", 404, "'nobody'"),
    ("/tournaments/none-here", 404, "'none-here'"),
    ("/matches?tournament=none-here", 404, "'none-here'"),
    ("/no/such/page", 404, "'/no/such/page'"),
    ("/?page=zero", 400, "'zero'"),
    ("/?sort=height", 400, "'height'"),
    ("/matches?per=5000", 400, "'5000'"),
    ("/matches?end=bogus", 400, "'bogus'"),
    ("/matches?end=Normal&bot=random", 400, "'Normal'"),
    ("/matches?page=0", 400, "'0'"),
    ("/matches?page=99999999999999999999999", 400, "'99999999999999999999999'"),
    ("/matches/{mid}?deal=99", 400, "deal 99"),
    ("/matches/{mid}?deal=1&trick=11", 400, "trick 11"),
    ("/matches/{mid}?trick=x1", 400, "'x1'"),
    ("/matches/{mid}?deal=1&trick=1&card=5", 400, "card 5"),
    ("/matches/{mid}?deal=1&trick=1&card=0", 400, "card 0"),
    ("/matches/{mid}?deal=1&trick=0&card=1", 400, "card 1"),
    ("/matches/{mid}?deal=1&trick=1&card=one", 400, "'one'"),
])
def test_bad_requests_get_a_clear_page(client: Any, seeded: dict[str, Any], path: str,
                                       status: int, quoted: str) -> None:
    path = path.format(mid=seeded["matches"][0])
    r = client.get(path)
    assert r.status_code == status
    assert quoted in unescape(r.text) and f"{status} " in r.text and "Traceback" not in r.text
    assert r.headers["content-type"].startswith("text/html")
    if "deal=" in path or "trick=" in path or "card=" in path:
        return  # positions are the viewer's: the API gives the whole replay
    api = client.get("/api" + path if not path.startswith("/?") else "/api/leaderboard" + path[1:])
    assert api.status_code == status and api.json()["status"] == status


def test_matches_filters_and_pages(client: Any, seeded: dict[str, Any]) -> None:
    everything = client.get("/api/matches?per=200").json()
    assert everything["total"] == len(everything["matches"]) >= len(seeded["matches"]) + 3
    by_bot = client.get("/api/matches?bot=reckless&per=200").json()["matches"]
    assert by_bot and all("reckless" in m["seats"] for m in by_bot)
    assert {m["id"] for m in by_bot} == {m["id"] for m in everything["matches"]
                                          if m["status"] == "done" and "reckless" in m["seats"]}
    tour = client.get(f"/api/matches?tournament={seeded['tournament']}&per=5&page=2").json()
    assert tour["total"] == len(seeded["matches"]) and tour["pages"] == -(-tour["total"] // 5)
    assert [m["id"] for m in tour["matches"]] == seeded["matches"][5:10]
    ends = {m["end"] for m in everything["matches"] if m["end"]}
    bad = client.get("/api/matches?end=bogus")  # a typo is not "no such matches"
    assert bad.status_code == 400 and "'bogus'" in bad.json()["error"]
    assert all(e in bad.json()["error"] for e in ("normal", "renuncia", "timeout", "disconnect"))
    for end in ends:
        got = client.get(f"/api/matches?end={end}&per=200").json()["matches"]
        assert got and all(m["end"] == end for m in got)
    ladder = client.get("/api/matches?tournament=ladder").json()["matches"]
    assert [m["id"] for m in ladder] == [seeded["running"]]
    assert "reckless" in client.get("/matches?bot=reckless").text


def test_tournament_page_has_standings_cross_table_and_progress(client: Any,
                                                                seeded: dict[str, Any]) -> None:
    tid = seeded["tournament"]
    doc = client.get(f"/api/tournaments/{tid}").json()
    assert "secret" not in doc["spec"] and "secret" not in client.get(f"/tournaments/{tid}").text
    assert doc["progress"]["done"] == doc["progress"]["total"] == len(seeded["matches"])
    for row in doc["standings"]:
        crossed = [sum(c[i] for c in doc["cross"][row["bot"]].values()) for i in (0, 2)]
        assert crossed[0] + crossed[1] == row["matches"]
    html = client.get(f"/tournaments/{tid}").text
    assert 'id="cross"' in html and f"{len(seeded['matches'])} of {len(seeded['matches'])} matches done" in html


def test_bot_page(client: Any, seeded: dict[str, Any]) -> None:
    doc = client.get("/api/bots/heuristic").json()
    assert doc["rating"]["games"] > 0 and doc["matches"] == doc["won"] + doc["drawn"] + doc["lost"]
    assert {h["opponent"] for h in doc["head_to_head"]} == {"random", "reckless"}
    assert doc["connected"] == []  # no referee has announced it
    assert all("heuristic" in m["seats"] for m in doc["recent_matches"])
    html = client.get("/bots/heuristic").text
    assert 'id="head-to-head"' in html and doc["recent_matches"][0]["id"] in html


def test_bot_rating_history_is_the_leagues_own_fold(client: Any, seeded: dict[str, Any]) -> None:
    from sueca.arena.store.ratings import load
    live = load(seeded["store"])
    for bot in ("random", "heuristic", "reckless"):
        doc = client.get(f"/api/bots/{bot}").json()
        history = doc["history"]
        assert len(history) == doc["rating"]["games"] == live[bot].games
        # the web's fold of the log ends exactly where the live ratings are
        assert (history[-1]["elo"], history[-1]["mu"], history[-1]["sigma"]) == (
            live[bot].elo, live[bot].mu, live[bot].sigma)
        assert all(h["time"] for h in history)
    page = client.get("/bots/heuristic").text
    points = re.search(r'<polyline[^>]*points="([^"]+)"', page).group(1).split()
    assert len(points) == len(client.get("/api/bots/heuristic").json()["history"])


def test_text_from_the_league_is_escaped(client: Any, seeded: dict[str, Any]) -> None:
    store = seeded["store"]
    store.create_match("evil-1", {"bots": ["random"] * 4}, tournament="ladder")
    store.record_failure("evil-1", "<script>alert(1)</script>")
    page = client.get("/matches/evil-1").text
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_nothing_a_visitor_does_writes_to_redis(client: Any, seeded: dict[str, Any]) -> None:
    store = seeded["store"]
    prefix = store.keys.prefix

    def snapshot() -> dict[bytes, bytes]:
        keys = sorted(store.r.scan_iter(match=prefix + "*", count=1000))
        return {k: store.r.dump(k) for k in keys}

    before = snapshot()
    mid = seeded["matches"][0]
    for path in ("/", "/?sort=openskill", "/matches", "/matches?bot=random", f"/matches/{mid}",
                 f"/matches/{mid}?deal=1&trick=2", f"/matches/{seeded['running']}", "/bots/random",
                 f"/tournaments/{seeded['tournament']}", "/tournaments", "/matches/nope",
                 "/api/leaderboard", "/api/matches", f"/api/matches/{mid}", "/api/bots/random",
                 f"/api/tournaments/{seeded['tournament']}", "/api/health", "/api/featured",
                 f"/api/featured?skip={mid}", "/matches?bot=reckless&end=renuncia"):
        assert client.get(path).status_code in (200, 404)
    for method in ("post", "put", "delete"):
        assert getattr(client, method)("/api/matches").status_code == 405
    assert snapshot() == before


def test_redis_gone_is_a_503_page(tmp_path: Any) -> None:
    from starlette.testclient import TestClient

    from sueca.arena.keys import Keys
    from sueca.arena.redisproc import RedisServer
    from sueca.arena.store import Store, connect
    from sueca.arena.web.app import create_app
    server = RedisServer().start()
    store = Store(connect(server.url, timeout=0.5), Keys("gone:"))
    client = TestClient(create_app(store), raise_server_exceptions=False)
    assert client.get("/").status_code == 200
    server.stop()
    r = client.get("/")
    assert r.status_code == 503 and "not answering" in r.text and "Traceback" not in r.text
    assert client.get("/api/matches").json()["status"] == 503


def test_the_leaderboard_follows_new_results_and_registrations(client: Any,
                                                              seeded: dict[str, Any],
                                                              monkeypatch: Any) -> None:
    from sueca.arena.match_job import play_and_record
    from sueca.arena.schedule import match_spec
    store = seeded["store"]
    before = {r["bot"]: r for r in client.get("/api/leaderboard").json()}
    mid = "ladder-after-1"
    store.create_match(mid, match_spec(mid, ["random", "reckless"] * 2, seed="99", first_dealer=1, variant={}),
                       tournament="ladder")
    play_and_record(store, mid, mode="local")
    after = {r["bot"]: r for r in client.get("/api/leaderboard").json()}
    assert after["random"]["games"] == before["random"]["games"] + 1
    assert after["reckless"]["logged"] == before["reckless"]["logged"] + 1
    # the rating of record follows once RECORD_TTL has passed with no newer fit cached
    monkeypatch.setattr("sueca.arena.league.view.RECORD_TTL", 0.0)
    after = {r["bot"]: r for r in client.get("/api/leaderboard").json()}
    assert after["reckless"]["matches"] == before["reckless"]["matches"] + 1
    assert after["reckless"]["rating"] != before["reckless"]["rating"]
    assert after["heuristic"]["games"] == before["heuristic"]["games"]
    assert client.get("/api/bots/random").json()["rating"]["games"] == after["random"]["games"]
    store.bots.remove("reckless")  # removed bots leave the leaderboard
    assert "reckless" not in {r["bot"] for r in client.get("/api/leaderboard").json()}
    store.bots.add("reckless")
    assert "reckless" in {r["bot"] for r in client.get("/api/leaderboard").json()}


def _outcome(m: dict[str, Any], bot: str) -> str:
    team = m["seats"].index(bot) & 1
    return "drawn" if m["winner"] is None else "won" if m["winner"] == team else "lost"


def test_a_bots_matches_say_whether_it_won(client: Any, seeded: dict[str, Any]) -> None:
    for bot in ("heuristic", "reckless"):
        doc = client.get(f"/api/bots/{bot}").json()
        assert doc["recent_matches"]
        for m in doc["recent_matches"]:
            assert m["outcome"] == _outcome(m, bot), m
        html = client.get(f"/bots/{bot}").text
        cells = re.findall(r'<td class="outcome ?(\w*)">(\w*)</td>', html)
        assert cells == [(m["outcome"], m["outcome"]) for m in doc["recent_matches"]]
        assert "winner" not in html.split('class="matches"')[1]  # no "team 0/1" column
        assert f'<span class="won">{doc["won"]} won</span>' in html
        listed = client.get(f"/api/matches?bot={bot}").json()["matches"]
        assert [m["outcome"] for m in listed] == [_outcome(m, bot) for m in listed]
    assert "outcome" not in client.get("/api/matches").json()["matches"][0]


def test_a_bots_faults_link_to_its_matches_that_ended_so(client: Any,
                                                         seeded: dict[str, Any]) -> None:
    doc = client.get("/api/bots/reckless").json()
    n = doc["ends"]["renuncia"]
    assert n >= 1 and doc["fault_ends"]["renuncia"] >= 1
    html = client.get("/bots/reckless").text
    row = re.search(r'<tr data-kind="renuncia">(.*?)</tr>', html, re.S).group(1)
    assert f'<a href="/matches?bot=reckless&amp;end=renuncia">{n}</a>' in row
    listed = client.get("/api/matches?bot=reckless&end=renuncia&per=200").json()
    assert listed["total"] == n and all(
        m["end"] == "renuncia" and "reckless" in m["seats"] for m in listed["matches"])
    # its fault lines: the matches its renúncias ended, newest first, linked
    lines = doc["fault_lines"]
    ended = [m["id"] for m in doc["recent_matches"] if m["fault_bot"] == "reckless"]
    assert [f["match"] for f in lines if f["ended"]] == ended and ended
    assert all(f["counts"].get("renuncia", 0) >= 1 for f in lines if f["end"] == "renuncia")
    assert all(f'href="/matches/{f["match"]}"' in html for f in lines)
    assert client.get("/api/bots/heuristic").json()["fault_lines"] == []
    assert "No faults in its last matches" in client.get("/bots/heuristic").text


def test_a_faults_detail_is_shown_escaped_and_capped(redis_url: str) -> None:
    import time
    import uuid

    from starlette.testclient import TestClient

    from sueca.arena.keys import Keys
    from sueca.arena.league.limits import MAX_DETAIL
    from sueca.arena.store import Store, connect
    from sueca.arena.web.app import create_app
    store = Store(connect(redis_url), Keys(f"wf{uuid.uuid4().hex[:8]}:"))
    seats = ["crashy", "random", "crashy", "random"]
    detail = "<script>alert(1)</script> ValueError: " + "x" * 1000
    for i, d in enumerate((detail, None)):
        store.create_match(f"f{i}", {"bots": seats}, tournament="ladder")
        store.record_result(f"f{i}", {
            "match_id": f"f{i}", "tournament": "", "pair": "", "seats": seats,
            "end": "bot_error", "winner": 1, "game_points": [0, 4], "fault_seat": 0,
            "fault_bot": "crashy", "deals": 1, "referee": "r", "replicas": 1, "variant": {},
            "time": time.time(), "rated": True, "fault_detail": d})
    with TestClient(create_app(store), raise_server_exceptions=False) as c:
        doc = c.get("/api/bots/crashy").json()
        assert [f["match"] for f in doc["fault_lines"]] == ["f1", "f0"]
        assert doc["fault_lines"][1]["detail"] == detail[:MAX_DETAIL]
        assert doc["fault_lines"][0]["detail"] is None and doc["ends"] == {"bot_error": 2}
        html = c.get("/bots/crashy").text
        assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "x" * (MAX_DETAIL - 40) in html and "x" * MAX_DETAIL not in html
        assert "the match ended: bot_error" in html
        assert [m["outcome"] for m in doc["recent_matches"]] == ["lost", "lost"]
        # the match's own page says it too, escaped and capped (and "1 deal", not "1 deals")
        page = c.get("/matches/f0").text
        assert 'id="fault-detail">crashy said:' in page and "<script>alert(1)" not in page
        assert "x" * (MAX_DETAIL - 50) in page and "x" * MAX_DETAIL not in page
        assert " · 1 deal · " in page
        # the result in the CLI's words: a fault's win says so, the end in prose
        assert "team 1 wins 0–4 on a bot error by crashy</strong>" in page
        assert "· end: bot error by crashy" in page
        assert 'id="fault-detail"' not in c.get("/matches/f1").text


def test_the_leaderboard_api_speaks_iso_times_and_rounded_numbers(client: Any) -> None:
    from sueca.arena.leaderboard import DECIMALS
    rows = client.get("/api/leaderboard").json()
    assert rows
    for r in rows:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["last_seen"]), r["last_seen"]
        for key, digits in DECIMALS.items():
            if isinstance(r[key], float):
                assert round(r[key], digits) == r[key], (key, r[key])
    assert client.get("/api/bots/random").json()["last_seen"].endswith("Z")


def test_provisional_bots_rank_after_the_established_ones(client: Any) -> None:
    from sueca.arena.leaderboard import rank

    def row(bot: str, rating: float, provisional: bool) -> Any:
        return {"bot": bot, "rating": rating, "elo": rating, "ordinal": rating, "games": 1,
                "provisional": provisional}
    rows = [row("lucky", 1900, True), row("solid", 1600, False), row("new", 1500, True),
            row("weak", 1400, False)]
    for by in ("rating", "elo", "openskill"):
        ranked = rank([dict(r) for r in rows], by)  # type: ignore[misc]
        assert [r["bot"] for r in ranked] == ["solid", "weak", "lucky", "new"]
        assert [r["rank"] for r in ranked] == [1, 2, 3, 4]
    # the seeded bots are all provisional: one group, headed as such
    html = client.get("/").text
    assert html.count('id="provisional-group"') == 1
    assert html.index('id="provisional-group"') < html.index('<tr data-bot=')


def test_the_featured_match_is_a_public_replay(client: Any, seeded: dict[str, Any]) -> None:
    from sueca.arena.match_job import play_and_record
    from sueca.arena.tournaments import new_spec, prepare_tournament
    store = seeded["store"]
    # the newest recorded match: a duplicate half whose twin is unplayed, never shown
    tid, _ = prepare_tournament(store, new_spec(["random", "heuristic"], 2, duplicate=True),
                                tid="tfeatured")
    half = store.tournament_matches(tid)[0]
    play_and_record(store, half, mode="local")
    assert client.get(f"/api/matches/{half}").json()["hidden"]
    shown = []
    skip = None
    for _ in range(3):
        doc = client.get("/api/featured" + (f"?skip={skip}" if skip else "")).json()
        assert doc["replay"] is not None and doc["hidden"] is None
        assert doc["match"]["status"] == "done" and doc["match"]["id"] not in (skip, half)
        shown.append(skip := doc["match"]["id"])
    assert len(set(shown[:2])) == 2
    html = client.get("/").text
    assert 'id="featured"' in html and 'id="tv-board"' in html and "/api/featured" in html


def test_the_board_puts_partners_opposite(client: Any, seeded: dict[str, Any]) -> None:
    from sueca.arena.web.viewer import places
    assert places("counterclockwise") == ("south", "east", "north", "west")
    assert places("clockwise") == ("south", "west", "north", "east")
    assert places(None) == places("counterclockwise")
    mid = seeded["matches"][0]
    rec = seeded["store"].replay(mid)
    html = client.get(f"/matches/{mid}?deal=1&trick=0").text
    sides = dict(re.findall(r'class="seat pos-(\w+)[^"]*" id="seat-(\d)"', html))
    assert {v: k for k, v in sides.items()} == {"0": "south", "1": "east", "2": "north",
                                                 "3": "west"}
    # as dealt, the seat that leads the first trick is the one to play
    leader = rec["deals"][0]["tricks"][0]["leader"]
    assert re.findall(r'class="seat pos-\w+ \w+ to-play" id="seat-(\d)"', html) == [str(leader)]
    live = client.get(f"/matches/{seeded['running']}").text
    assert live.count(">live<") == 0 and "<h2>Live</h2>" not in live
    assert 'id="board"' in live and "toPlay" in live


def test_the_rating_plot_has_labelled_axes() -> None:
    from sueca.arena.web.plot import nice_ticks, rating_plot
    assert nice_ticks(1487.3, 1533.1) == [1480, 1500, 1520, 1540]
    start = 1_780_000_000.0  # 2026-05-28 20:26:40 UTC
    history = [{"time": start + i * 3600, "elo": 1500 + 10 * i} for i in range(30)]
    svg = str(rating_plot(history))
    ys = [float(v) for v in re.findall(r'class="ytick"[^>]*>([^<]+)<', svg)]
    assert ys == sorted(ys) and ys[0] <= 1500 and ys[-1] >= 1790 and len(ys) >= 3
    xs = re.findall(r'class="xtick"[^>]*>([^<]+)<', svg)
    assert len(xs) >= 3 and all(re.fullmatch(r"\d\d [A-Z][a-z]{2}( \d\d:\d\d)?", x) for x in xs), xs
    assert "date (UTC)" in svg and "live Elo" in svg
    # within a few minutes: the x axis counts the rated games
    quick = [{"time": start + i, "elo": 1500.0 + i} for i in range(7)]
    svg = str(rating_plot(quick))
    assert "rated game" in svg and re.findall(r'class="xtick"[^>]*>([^<]+)<', svg) == [
        "2", "4", "6"]
    assert rating_plot(history[:1]) is None


def test_a_duplicate_halfs_fault_detail_waits_for_its_twin(redis_url: str) -> None:
    """A bot's own words can tell its cards: on a duplicate half they would tell the cards of
    the twin match (same decks, teams swapped) while it is played, so the bot page holds them
    back until the twin is finished, as the match page holds back the hands."""
    import time
    import uuid

    from starlette.testclient import TestClient

    from sueca.arena.keys import Keys
    from sueca.arena.store import Store, connect
    from sueca.arena.tournaments import new_spec, prepare_tournament
    from sueca.arena.web.app import create_app
    store = Store(connect(redis_url), Keys(f"wp{uuid.uuid4().hex[:8]}:"))
    for b in ("crashy", "random"):
        store.bots.add(b)
    tid, _ = prepare_tournament(store, new_spec(["crashy", "random"], 2, duplicate=True),
                                tid="tpair")
    first, twin = store.tournament_matches(tid)
    assert store.match(first)["pair"] and store.match(first)["pair"] == store.match(twin)["pair"]

    def record(mid: str, detail: str) -> None:
        m = store.match(mid)
        seats = m["spec"]["bots"]
        store.record_result(mid, {
            "match_id": mid, "tournament": tid, "pair": m["pair"], "seats": seats,
            "end": "bot_error", "winner": 1 - seats.index("crashy") % 2, "game_points": [0, 0],
            "fault_seat": seats.index("crashy"), "fault_bot": "crashy", "deals": 1,
            "referee": "r", "replicas": 1, "variant": {}, "time": time.time(), "rated": True,
            "fault_detail": detail})

    record(first, "ValueError: my hand is AS 7S KS")
    with TestClient(create_app(store), raise_server_exceptions=False) as c:
        [line] = c.get("/api/bots/crashy").json()["fault_lines"]
        assert line["match"] == first and line["detail"] is None
        assert "my hand is" not in c.get("/bots/crashy").text
        assert "my hand is" not in c.get(f"/api/matches/{first}").text
        record(twin, "ValueError: again")
        lines = c.get("/api/bots/crashy").json()["fault_lines"]
        assert [x["detail"] for x in lines] == ["ValueError: again",
                                                "ValueError: my hand is AS 7S KS"]
