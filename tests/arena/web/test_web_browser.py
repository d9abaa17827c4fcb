"""The web pages in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver`` packages, driven by Selenium; nothing is downloaded) against a real
``sueca-arena serve`` whose example bots play the ladder.

Every page is visited at 1280 px and at 390 px (a phone: DevTools' device-metrics override, as
a headless window is at least 500 px wide) and must not scroll sideways: the page is no wider than
the window, and no element reaches past it unless it is inside a box that scrolls itself; what a
person looks for on a page (a match's teams, winner and score; the viewer's buttons) is on
screen, not in a box scrolled sideways. Pages are saved as full-page screenshots under the test's temporary folder (NAME.png at 1280,
NAME-390.png at 390; with ``SUECA_SCREENSHOTS=DIR`` also in DIR: that is how
``docs/screenshots`` is refreshed).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kits.serve import Serve

pytestmark = pytest.mark.slow

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def _need_chromium() -> None:
    """Debian's chromium and chromium-driver, which `make test` installs (.ci/provision)."""
    missing = [p for p in (CHROMIUM, DRIVER) if not os.path.exists(p)]
    if missing:
        pytest.fail(f"headless Chromium is needed ({', '.join(missing)} missing): run "
                    "`make provision` (apt-get install chromium chromium-driver, as root)")


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    tmp = tmp_path_factory.mktemp("serve")
    serve = Serve(tmp / "data", tmp / "serve.log", "--example-bots").wait_up()
    try:
        serve.wait_games(bots=3, games=2)
        yield serve
    finally:
        serve.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _need_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never fetch a driver
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,760"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


PHONE = 390  # px: the width of a common phone's screen
#: what is wider than the window and not inside a box that scrolls (or clips) it
OVERFLOW_JS = """
const W = document.documentElement.clientWidth, bad = [];
if (document.documentElement.scrollWidth > W)
  bad.push('the page: ' + document.documentElement.scrollWidth + ' px wide');
for (const e of document.querySelectorAll('body *')) {
  const r = e.getBoundingClientRect();
  if (r.width === 0 || (r.right <= W + 1 && r.left >= -1)) continue;
  let p = e.parentElement, boxed = false;
  for (; p && p !== document.body; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX;
    if (o === 'auto' || o === 'scroll' || o === 'hidden') { boxed = true; break; }
  }
  if (!boxed) bad.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' +
                       Math.round(r.left) + '..' + Math.round(r.right) + ' px');
}
return [W, bad.slice(0, 8)];
"""


def width(browser: Any, px: int) -> None:
    """Lay pages out ``px`` wide: 1280 is the window itself, narrower is a phone's screen."""
    if px == 1280:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    else:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": px, "height": 844, "deviceScaleFactor": 1, "mobile": True})


def fits(browser: Any, what: str) -> None:
    """The page on screen does not scroll sideways."""
    w, bad = browser.execute_script(OVERFLOW_JS)
    assert not bad, f"{what} at {w} px is wider than the screen: {bad}"


def on_screen(browser: Any, px: int, *selectors: str) -> None:
    """Each selector's first element is shown and wholly inside the window's width (no scrolling
    box hides it) and on the page's height."""
    for css in selectors:
        box = browser.execute_script("""
            const e = document.querySelector(arguments[0]);
            if (!e) return null;
            const r = e.getBoundingClientRect();
            let clipped = false;
            for (let p = e.parentElement; p; p = p.parentElement) {
              const q = p.getBoundingClientRect(), o = getComputedStyle(p).overflowX;
              if ((o === 'auto' || o === 'scroll' || o === 'hidden') &&
                  (r.left < q.left - 1 || r.right > q.right + 1)) clipped = true;
            }
            return {left: r.left, right: r.right, width: r.width, height: r.height,
                    clipped: clipped, shown: e.checkVisibility()};
        """, css)
        assert box is not None, f"no {css} on the page"
        assert box["shown"] and box["width"] > 0 and box["height"] > 0, (css, box)
        assert box["left"] >= 0 and box["right"] <= px + 1 and not box["clipped"], (css, px, box)


@pytest.fixture
def shoot(browser: Any, tmp_path: Path):
    """``shoot(name)`` saves the whole page as NAME.png in tmp_path (and in $SUECA_SCREENSHOTS)."""
    def save(name: str) -> Path:
        path = tmp_path / f"{name}.png"
        # a window as tall as the page (Chromium's captureBeyondViewport leaves the inside of
        # scrolling boxes below the window blank), then the window as it was
        px = browser.execute_script("return window.innerWidth")
        tall = browser.execute_script("return document.documentElement.scrollHeight")
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": px, "height": min(tall, 6000), "deviceScaleFactor": 1, "mobile": px < 1280})
        try:
            shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
        finally:
            width(browser, px)
        path.write_bytes(base64.b64decode(shot["data"]))
        assert path.stat().st_size > 1000
        extra = os.environ.get("SUECA_SCREENSHOTS")
        if extra:
            shutil.copy(path, Path(extra) / path.name)
        return path
    return save


def _cards(browser: Any, css: str) -> list[str]:
    from selenium.webdriver.common.by import By
    return [e.get_attribute("data-card") for e in browser.find_elements(By.CSS_SELECTOR, css)]


def test_leaderboard_shows_the_bots_with_their_ratings(arena: Serve, browser: Any,
                                                       shoot: Any) -> None:
    from selenium.webdriver.common.by import By
    rows = {r["bot"]: r for r in arena.get("/api/leaderboard")}
    browser.get(arena.web + "/")  # after the API: the ladder plays on, the page is newer
    shown = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tr[data-bot]")
    assert {e.get_attribute("data-bot") for e in shown} == {"random", "heuristic", "reckless"}
    for e in shown:
        bot = e.get_attribute("data-bot")
        elo = e.find_element(By.CSS_SELECTOR, ".elo").text
        games = int(e.find_element(By.CSS_SELECTOR, ".games").text)
        assert games >= rows[bot]["games"] >= 2
        assert " ± " in elo and float(elo.split(" ± ")[0]) > 0
        # faults by kind from the per-bot totals; the reckless bot's renúncias among them
        renuncias = int(e.find_element(By.CSS_SELECTOR, ".renuncias").text)
        assert renuncias >= rows[bot]["faults"]["renuncia"]
    assert rows["reckless"]["faults"]["renuncia"] >= 1
    e = browser.find_element(By.LINK_TEXT, "heuristic")
    e.click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "heuristic"
    assert browser.find_elements(By.CSS_SELECTOR, "#head-to-head tbody tr")
    # connected to serve's referee right now (free seats from the referee's heartbeat in
    # Redis, sessions from its ListBots); the referee timed its moves
    connected = browser.find_element(By.ID, "connected").text
    assert "free seat" in connected and "1 session" in connected, connected
    assert "timed turns" in browser.find_element(By.ID, "latency").text
    assert browser.find_element(By.CSS_SELECTOR, "#rating-plot svg .ytick")


def test_replay_viewer_steps_card_by_card(arena: Serve, browser: Any, shoot: Any) -> None:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
    done = [m for m in arena.get("/api/matches?end=normal&per=50")["matches"]]
    replays = [arena.get(f"/api/matches/{m['id']}")["replay"] for m in done[:10]]
    mid, rec = next((r["match_id"], r) for r in replays
                    if any(len(d["tricks"]) == 10 for d in r["deals"]))
    # a deal played to its end (a renúncia can end one after a trick or two)
    deal = next(d for d in rec["deals"] if len(d["tricks"]) == 10)
    k = rec["deals"].index(deal) + 1
    browser.get(f"{arena.web}/matches/{mid}?deal={k}&trick=0")
    mark = "window.stepMarker = 'this page'"  # a reload would lose it
    browser.execute_script(mark)
    for seat in range(4):
        assert sorted(_cards(browser, f"#hand-{seat} .card")) == sorted(deal["hands"][seat])
        # at 1280 px each hand of ten is one row of cards
        tops = browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.offsetTop)",
            f"#hand-{seat} .card")
        assert len(tops) == 10 and len(set(tops)) == 1, (seat, tops)
    # the seat that leads is marked; partners sit opposite, seat 0 at the bottom
    assert [e.get_attribute("id") for e in browser.find_elements(
        By.CSS_SELECTOR, "#board .seat.to-play")] == [f"seat-{deal['tricks'][0]['leader']}"]
    box = {seat: browser.find_element(By.ID, f"seat-{seat}").rect for seat in range(4)}
    assert box[0]["y"] > box[1]["y"] > box[2]["y"] and box[0]["y"] > box[3]["y"] > box[2]["y"]
    assert box[1]["x"] > box[0]["x"] > box[3]["x"] and box[1]["x"] > box[2]["x"] > box[3]["x"]
    assert _cards(browser, "#trump .card") == [deal["trump"]]

    def press(key: str) -> None:
        browser.find_element(By.TAG_NAME, "body").send_keys(key)

    def check(trick_no: int, n: int) -> None:
        """The page shows trick ``trick_no`` (1-based) with its first ``n`` cards down."""
        want = f"?deal={k}&trick={trick_no}&card={n}"
        try:  # a key press starts a navigation: wait for it to land
            WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith(want))
        except TimeoutException:
            raise AssertionError(f"at {browser.current_url}, not {want}") from None
        # stepped by the page's script: the same page, not a reload
        assert browser.execute_script("return window.stepMarker") == "this page"
        trick = deal["tricks"][trick_no - 1]
        for i, card in enumerate(trick["cards"]):
            seat = (trick["leader"] + i) & 3
            assert _cards(browser, f"#table-{seat} .card") == ([card] if i < n else [])
        gone = {c for t in deal["tricks"][:trick_no - 1] for c in t["cards"]}
        gone |= set(trick["cards"][:n])
        for seat in range(4):  # each hand holds exactly the cards it has not played yet
            assert sorted(_cards(browser, f"#hand-{seat} .card")) == \
                sorted(set(deal["hands"][seat]) - gone)
        winner = browser.find_elements(By.ID, "trick-winner")
        if n == 4:  # the trick's winner is highlighted once its last card is down
            assert winner and winner[0].text == str(trick["winner"])
            won = trick["cards"][(trick["winner"] - trick["leader"]) & 3]
            assert _cards(browser, ".card.win") == [won]
        else:
            assert not winner and not _cards(browser, ".card.win")

    sizes = []
    for step in range(6):  # card by card: → on the keyboard, and once the button
        if step == 2:
            browser.find_element(By.ID, "next").click()
        else:
            press(Keys.ARROW_RIGHT)
        trick_no, n = 1 + step // 4, 1 + step % 4
        check(trick_no, n)
        sizes.append(sum(len(_cards(browser, f"#hand-{s} .card")) for s in range(4)))
    assert sizes == [39, 38, 37, 36, 35, 34]  # one card fewer in the hands at every step
    press(Keys.ARROW_LEFT)  # back a card, and back into the trick before
    check(2, 1)
    press(Keys.ARROW_LEFT)
    check(1, 4)
    press(Keys.SHIFT + Keys.ARROW_RIGHT)  # a trick at a time: to the next trick, complete
    check(2, 4)
    press(Keys.ARROW_DOWN)
    check(3, 4)
    press(Keys.ARROW_UP)
    check(2, 4)
    # a shared URL opens the same position, and steps on from it
    browser.get(f"{arena.web}/matches/{mid}?deal={k}&trick=5&card=3")
    browser.execute_script(mark)
    assert "trick 5 of 10, card 3 of 4" in browser.find_element(By.ID, "position").text
    check(5, 3)
    press(Keys.ARROW_RIGHT)
    check(5, 4)
    # a URL without a card: the trick complete
    browser.get(f"{arena.web}/matches/{mid}?deal={k}&trick=7")
    browser.execute_script(mark)
    assert "trick 7 of 10, card 4 of 4" in browser.find_element(By.ID, "position").text
    press(Keys.ARROW_RIGHT)
    check(8, 1)
    # on a phone, scrolled down to the buttons: a step keeps the page where it was
    width(browser, PHONE)
    try:
        browser.get(f"{arena.web}/matches/{mid}?deal={k}&trick=2&card=1")
        browser.execute_script(mark)
        browser.execute_script("window.scrollTo(0, document.getElementById('next')"
                               ".getBoundingClientRect().top + window.scrollY - 8)")
        y = browser.execute_script("return window.scrollY")
        assert y > 100, y  # the buttons are below the page's top
        top = "return document.getElementById('next').getBoundingClientRect().top"
        at = browser.execute_script(top)
        for n in (2, 3):
            browser.find_element(By.ID, "next").click()
            check(2, n)
            # the page where it was, the button under the finger
            assert browser.execute_script("return window.scrollY") == y
            assert browser.execute_script(top) == at
            on_screen(browser, PHONE, "#next", "#prev")
        fits(browser, "the replay, stepped")
        # without JavaScript the buttons are plain links to their step's page
        href = browser.find_element(By.ID, "next").get_attribute("href")
        with urllib.request.urlopen(href, timeout=5) as r:
            html = r.read().decode()
        assert "trick 2 of 10, card 4 of 4" in html, href
    finally:
        width(browser, 1280)


def test_lists_and_a_missing_match(arena: Serve, browser: Any, shoot: Any) -> None:
    from selenium.webdriver.common.by import By
    browser.get(arena.web + "/matches?bot=reckless")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.matches tbody tr")
    assert rows and all("reckless" in r.text for r in rows)
    outcomes = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "table.matches td.outcome")]
    assert len(outcomes) == len(rows) and set(outcomes) <= {"won", "lost", "drawn"}, outcomes
    browser.get(arena.web + "/matches/no-such-match")
    assert browser.find_element(By.ID, "error-title").text == "404 Not found"
    assert "no-such-match" in browser.find_element(By.ID, "error-message").text


def test_tournament_page_has_the_cross_table(arena: Serve, browser: Any, shoot: Any) -> None:

    from selenium.webdriver.common.by import By
    url = arena.url()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    env["SUECA_REDIS_URL"] = url
    from kits.arena import SUECA_ARENA
    run = subprocess.run([SUECA_ARENA, "tournament", "run", "--bots", "random,heuristic,reckless",
                          "-k", "2", "--duplicate", "--id", "browser-cup", "--timeout", "90",
                          "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    browser.get(arena.web + "/tournaments/browser-cup")
    assert "6 of 6 matches done" in browser.find_element(By.ID, "progress").text
    cells = browser.find_elements(By.CSS_SELECTOR, "#cross tbody td")
    assert len(cells) == 9 and sum(c.text.count("–") == 2 for c in cells) == 6
    assert len(browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")) == 3


def test_a_closed_competitions_page_shows_its_final_and_key(arena: Serve, browser: Any) -> None:
    """A season of the example bots with a knockout final, closed: its page at both widths
    (the page-fits test below visits it) shows the final's table, every match and the key."""
    from kits.arena import competition_final
    from selenium.webdriver.common.by import By

    from sueca.arena.lifecycle import State, new_spec
    from sueca.arena.store import Store
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    env["SUECA_REDIS_URL"] = arena.url()
    store = Store.from_url(arena.url())
    store.competitions.create(new_spec("fall", final={
        "format": "knockout", "top": None, "best_of": 1}), by="browser-test")
    for bot in ("random", "heuristic", "reckless"):
        store.competitions.enter("fall", bot, by="browser-test")
    for to in (State.OPEN, State.FROZEN, State.FINAL):
        store.competitions.move("fall", to, by="browser-test")
    competition_final("start", "fall", env)
    assert competition_final("wait", "fall", env)["done"]
    store.competitions.move("fall", State.CLOSED, by="browser-test")
    browser.get(arena.web + "/competitions/fall")
    places = browser.find_elements(By.CSS_SELECTOR, "#bracket-standings tbody tr")
    champion = browser.find_element(By.ID, "champion").text
    assert len(places) == 3 and places[0].text.split()[1] in champion  # the champion first
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bracket .tie")) >= 2
    assert len(browser.find_elements(By.CSS_SELECTOR, "#entrants tbody tr")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#transitions tbody tr")) == 5
    played = store.tournament_matches("fall-final")
    links = browser.find_elements(By.CSS_SELECTOR, "#matches li a")
    assert sorted(a.text for a in links) == sorted(played) and len(played) >= 4
    key = store.competitions.get("fall")["seed_key"]
    assert key and key in browser.find_element(By.ID, "seed-key").text
    browser.get(arena.web + "/competitions")
    row = browser.find_element(By.CSS_SELECTOR, "#competitions tbody tr:last-child").text
    assert "fall" in row and "closed" in row


def test_a_knockout_bracket_reads_on_a_desktop_and_a_phone(arena: Serve, browser: Any,
                                                           shoot: Any) -> None:
    """A knockout of the three example bots (seed 1 has a bye) played through serve's worker:
    its page shows the bracket, rounds side by side at 1280 px and stacked at 390 px, nothing
    wider than the screen, the champion and the final on screen."""
    from selenium.webdriver.common.by import By
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    env["SUECA_REDIS_URL"] = arena.url()
    from kits.arena import SUECA_ARENA
    run = subprocess.run([SUECA_ARENA, "tournament", "run", "--bots", "heuristic,random,reckless",
                          "--format", "knockout", "--id", "browser-ko", "--timeout", "90",
                          "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    champion = json.loads(run.stdout)["bracket"]["champion"]
    try:
        for px in (1280, PHONE):
            width(browser, px)
            browser.get(arena.web + "/tournaments/browser-ko")
            assert browser.find_element(By.ID, "champion").text == f"Champion: {champion}"
            fits(browser, "the knockout's page")
            on_screen(browser, px, "#champion", "#tie-W1-1", "#tie-W2-1 .side.won .bot",
                      "#bracket-standings td", "#bracket-standings td:last-child")
            lefts = [e.rect["x"] for e in browser.find_elements(By.CSS_SELECTOR,
                                                                ".bracket-round")]
            assert len(lefts) == 2
            assert (lefts[0] == lefts[1]) == (px == PHONE), (px, lefts)  # stacked on a phone
            shoot("knockout" if px == 1280 else f"knockout-{px}")
    finally:
        width(browser, 1280)


def test_a_live_match_receives_cards_while_it_is_played(arena: Serve, browser: Any,
                                                        shoot: Any, tmp_path: Path) -> None:
    """The slow bot's matches are held live (``kits.bots.ponder.PonderBot`` takes 1.5 s a card
    while the hold file exists) for as long as the checks take, then let go to finish: the page
    must be live for them."""
    from kits.arena import SUECA_ARENA, TESTS
    from kits.wait import wait_for
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    url = arena.url()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    added = subprocess.run([SUECA_ARENA, "bots", "add", "ponder", "--redis", url],
                           env=env, capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    here = str(TESTS)
    hold = tmp_path / "hold"
    hold.touch()
    log = open(tmp_path / "ponder.log", "wb")
    bot = subprocess.Popen(
        [str(Path(SUECA_ARENA).parent / "sueca-bot"), "run", "kits.bots.ponder:PonderBot",
         "--server", f"127.0.0.1:{arena.port}", "--name", "ponder", "--capacity", "4"],
        env={**env, "SUECA_TOKEN": added.stdout.strip(), "PONDER_HOLD": str(hold),
             "PYTHONPATH": os.pathsep.join([here, env.get("PYTHONPATH", "")])},
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def count() -> int | None:
            """Cards the live board has shown; None once the page is the replay."""
            try:
                found = browser.find_elements(By.ID, "live-count")
                return int(found[0].text) if found else None
            except StaleElementReferenceException:  # the page is being replaced
                return None

        def ponder_playing() -> dict[str, Any] | None:
            """A running match of the slow bot's (not against the reckless bot, whose first
            renúncia would end it at once)."""
            rows = arena.get("/api/matches?tournament=ladder&per=30")["matches"]
            return next((m for m in rows if m["status"] == "running"
                         and "ponder" in m["seats"] and "reckless" not in m["seats"]), None)

        running = wait_for(ponder_playing, 60, "the ladder playing the slow bot", interval=0.3)
        browser.get(f"{arena.web}/matches/{running['id']}")
        wait = WebDriverWait(browser, 30, poll_frequency=0.1)
        wait.until(lambda d: (count() or 0) > 0)
        first = count()
        assert first is not None
        wait.until(lambda d, seen=first: (count() or 0) > seen)  # cards arrive while it is open
        assert browser.find_element(By.ID, "live-status").text == "live"
        assert browser.find_element(By.CSS_SELECTOR, "#live-trump .card").get_attribute(
            "data-card")
        seats = running["seats"]
        for px in (1280, PHONE):
            width(browser, px)
            try:
                # the seat to play is marked: held, it is one of the slow bot's
                def ponder_to_play(d: Any) -> list[Any]:
                    marked = d.find_elements(By.CSS_SELECTOR, "#board .seat.to-play")
                    return [m for m in marked if seats[int(m.get_attribute("data-seat"))]
                            == "ponder"]
                WebDriverWait(browser, 10, poll_frequency=0.05).until(ponder_to_play)
                assert len(browser.find_elements(By.CSS_SELECTOR, "#board .seat.to-play")) == 1
                fits(browser, "the live page")
                on_screen(browser, px, "#live-status", "#live-trump .card", "#board .seat.to-play")
                shoot("live" if px == 1280 else f"live-{px}")
                assert browser.find_element(By.ID, "live-status").text == "live"
            finally:
                width(browser, 1280)
        hold.unlink()  # let it finish: when it ends, the page turns into the replay
        WebDriverWait(browser, 90, poll_frequency=0.5).until(
            lambda d: d.find_elements(By.ID, "position"))
        assert len(_cards(browser, "#hand-0 .card")) == 10
    finally:
        hold.unlink(missing_ok=True)
        bot.terminate()
        try:
            bot.wait(20)  # it drains: a game in hand is finished first
        except subprocess.TimeoutExpired:
            bot.kill()
            bot.wait(5)
        log.close()


def test_the_front_page_replays_a_match_at_a_persons_pace(arena: Serve, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(arena.web + "/")

    def shown() -> int:
        return int(browser.find_element(By.ID, "tv-count").get_attribute("textContent"))

    WebDriverWait(browser, 15, poll_frequency=0.1).until(lambda d: shown() > 0)
    mid = browser.find_element(By.ID, "tv-link").text
    assert arena.get(f"/api/matches/{mid}")["replay"]  # a recorded match with a public replay
    first, t0 = shown(), time.monotonic()
    WebDriverWait(browser, 10, poll_frequency=0.1).until(lambda d: shown() >= first + 2)
    assert time.monotonic() - t0 > 1.2  # about a card a second: a person can follow it
    names = [browser.find_element(By.ID, f"tv-name-{s}").text for s in range(4)]
    assert names == arena.get(f"/api/matches/{mid}")["match"]["spec"]["bots"]
    # the turned trump in the middle of the table is labelled, not a card among the trick's
    trump = browser.find_element(By.ID, "tv-felt-info")
    assert trump.text.startswith("trump") and trump.find_elements(By.CSS_SELECTOR, ".card")
    marked = WebDriverWait(browser, 10, poll_frequency=0.05).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#tv-board .seat.to-play"))
    assert len(marked) == 1
    # nothing to show (here the API is blocked, as when the arena does not answer; an empty
    # arena is alike): the status line alone, no empty table under a "Now showing" heading
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/featured*"]})
    try:
        browser.get(arena.web + "/")
        WebDriverWait(browser, 10, poll_frequency=0.1).until(
            lambda d: "not answering" in d.find_element(By.ID, "tv-status").text)
        assert not browser.find_element(By.ID, "tv-board").is_displayed()
        assert not browser.find_element(By.ID, "tv-link").is_displayed()
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        browser.execute_cdp_cmd("Network.disable", {})


#: a finished match's row: a running one has no winner, score or time yet, and a phone hides
#: its empty cells
DONE = 'tr[data-status="done"]'
#: what a person looks for on a page, each on screen at both widths (the first of each)
WANTED = {
    "matches": tuple(f"table.matches {DONE} {c}" for c in (
        ".m-id a", ".team-0", ".team-1", ".m-winner", ".m-score", ".m-time")),
    "bot": ("#record", *(f"table.matches {DONE} {c}" for c in (
        ".m-id a", ".outcome", ".team-1", ".m-score", ".m-time")),
        *(f"#versions tr.current {c}" for c in (".v-rating", ".v-matches", ".v-created",
                                                  ".v-note"))),
    "replay": ("#position", "#next", "#prev", "#trump .card", "#board .seat.to-play"),
}


def test_every_page_fits_a_desktop_and_a_phone(arena: Serve, browser: Any, shoot: Any) -> None:
    """Runs after the tournament and competition tests (their cup and season are on the
    tournament's and the competition's pages)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    done = arena.get("/api/matches?end=normal&per=20")["matches"]
    mid = next(m["id"] for m in done if arena.get(f"/api/matches/{m['id']}")["replay"])
    # the bot page's versions: a second one, with a note as long as a note can be
    from kits.arena import SUECA_ARENA
    bumped = subprocess.run([SUECA_ARENA, "bots", "version", "reckless", "--redis", arena.url(),
                             "--note", "tries the long suits first " * 7],
                            env={k: v for k, v in os.environ.items() if not k.startswith("SUECA_")},
                            capture_output=True, text=True, timeout=60)
    assert bumped.returncode == 0, bumped.stderr
    pages = {"leaderboard": "/", "bot": "/bots/reckless", "matches": "/matches",
             "replay": f"/matches/{mid}?deal=1&trick=5&card=3",
             "tournaments": "/tournaments", "tournament": "/tournaments/browser-cup",
             "competitions": "/competitions", "competition": "/competitions/fall",
             "not-found": "/matches/no-such-match"}
    try:
        for px in (1280, PHONE):
            width(browser, px)
            for name, path in pages.items():
                browser.get(arena.web + path)
                if name == "leaderboard":  # the featured match has begun
                    WebDriverWait(browser, 15, poll_frequency=0.1).until(
                        lambda d: d.find_elements(By.CSS_SELECTOR, "#tv-board .felt .card"))
                assert browser.execute_script("return window.innerWidth") == px
                fits(browser, path)
                on_screen(browser, px, *WANTED.get(name, ()))
                if name in ("matches", "bot"):  # every column of the rows, none scrolled away
                    for table in ("table.matches", "#versions")[:1 if name == "matches" else 2]:
                        assert browser.execute_script(
                            f"const b = document.querySelector('{table}').parentElement;"
                            "return b.scrollWidth <= b.clientWidth"), (name, table, px)
                shoot(name if px == 1280 else f"{name}-{px}")
            # the menu wraps rather than being cut: every link is on screen
            for link in browser.find_elements(By.CSS_SELECTOR, "header a"):
                r = link.rect
                assert r["x"] >= 0 and r["x"] + r["width"] <= px, (link.text, r)
    finally:
        width(browser, 1280)


def test_the_load_test_report_fits_a_phone(browser: Any, shoot: Any, tmp_path: Path) -> None:
    """A real short load test's HTML report, opened as a file at 1280 and 390 px."""
    from kits.arena import SUECA_ARENA
    from selenium.webdriver.common.by import By
    report = tmp_path / "load.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUECA_")}
    run = subprocess.run([SUECA_ARENA, "loadtest", "random", "--games", "4", "--duration", "2",
                          "--house", "random,heuristic", "--allow-faults", "--report",
                          str(report)], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    try:
        for px in (1280, PHONE):
            width(browser, px)
            browser.get(report.as_uri())
            assert browser.execute_script("return window.innerWidth") == px
            fits(browser, "the load-test report")
            on_screen(browser, px, "h1", ".chart", "table th", "table td")
            # labels a person can read: every chart's drawn at least 9 px high
            heights = browser.execute_script(
                "return [...document.querySelectorAll('svg text')]"
                ".map(t => t.getBoundingClientRect().height)")
            assert len(browser.find_elements(By.TAG_NAME, "svg")) == 5
            assert heights and min(heights) >= 9, min(heights)
            shoot("loadtest-report" if px == 1280 else f"loadtest-report-{px}")
    finally:
        width(browser, 1280)
