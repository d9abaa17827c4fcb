"""The report of a load test: the machine it ran on, and the run as one self-contained HTML
page (``sueca-arena loadtest --report FILE.html``).

One file, nothing fetched: the charts are inline SVG drawn here (no script, no external URL),
so it opens anywhere, offline, and can be attached to a CI run as it is.
"""

from __future__ import annotations

import html
import math
import os
import platform
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from sueca.arena.loadtest.generator import Stats
from sueca.arena.quantiles import nearest_rank


def machine() -> dict[str, Any]:  # Any: JSON values (str, int, a list of loads)
    """The machine the run was measured on (for the report)."""
    info: dict[str, Any] = {"host": platform.node(), "system": platform.platform(),
                            "python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        info["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    try:
        info["sueca_arena"] = version("sueca-arena")
    except PackageNotFoundError:
        pass
    return info


_W, _H, _PAD_L, _PAD_B, _PAD_T, _PAD_R = 760, 240, 60, 34, 14, 16
_MIN_W = 560  # px: the narrowest a chart is drawn (its 13-unit labels at 9.6 px)
COLORS = {"p50": "#2b7bb9", "p95": "#e69f00", "p99": "#d55e00", "max": "#999999",
          "moves/s": "#2b7bb9", "target moves/s": "#009e73", "in flight": "#cc79a7",
          "timeouts": "#d55e00", "faults": "#7f3fbf"}


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * mag:
            return m * mag
    return 10 * mag


def _chart(series: Sequence[tuple[str, Sequence[tuple[float, ...]]]], xmax: float,
           ylabel: str, log: bool = False, bars: bool = False,
           xtick: Callable[[float], str] | None = None) -> str:
    """An SVG line chart of ``(name, [(x, y)])`` series, x in seconds; or with ``bars`` one
    series of ``(x0, x1, y)`` bars, x ticks labelled by ``xtick(x)``."""
    w, h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B
    ys = [p[-1] for _, pts in series for p in pts
          if p[-1] is not None and (p[-1] > 0 or not log)]
    xmax = max(xmax, 1.0)
    if log:
        lo = 10 ** math.floor(math.log10(min(ys))) if ys else 0.1
        hi = 10 ** math.ceil(math.log10(max(ys))) if ys else 10.0
        hi = max(hi, lo * 10)

        def fy(y: float) -> float:
            y = min(max(y, lo), hi)
            return _PAD_T + h - h * (math.log10(y) - math.log10(lo)) / (
                math.log10(hi) - math.log10(lo))
        ticks = [lo * 10 ** k for k in range(round(math.log10(hi / lo)) + 1)]
    else:
        hi = _nice_max(max(ys) if ys else 1.0)

        def fy(y: float) -> float:
            return _PAD_T + h - h * min(y, hi) / hi
        ticks = [hi * k / 4 for k in range(5)]

    def fx(x: float) -> float:
        return _PAD_L + w * x / xmax

    out = [f'<svg viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
           f'aria-label="{_esc(ylabel)}">',
           f'<rect x="{_PAD_L}" y="{_PAD_T}" width="{w}" height="{h}" fill="#fafafa" '
           'stroke="#ccc"/>']
    for t in ticks:
        y = fy(t)
        out.append(f'<line x1="{_PAD_L}" x2="{_PAD_L + w}" y1="{y:.1f}" y2="{y:.1f}" '
                   'stroke="#e4e4e4"/>')
        out.append(f'<text x="{_PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end" '
                   f'font-size="13">{t:g}</text>')
    step = _nice_max(xmax / 8)
    x = 0.0
    while x <= xmax + 1e-9:
        out.append(f'<text x="{fx(x):.1f}" y="{_PAD_T + h + 16}" text-anchor="middle" '
                   f'font-size="13">{xtick(x) if xtick else f"{x:g}"}</text>')
        x += step
    out.append(f'<text x="{_PAD_L + w / 2}" y="{_H - 2}" text-anchor="middle" '
               f'font-size="13">{"ms" if bars else "seconds"}</text>')
    out.append(f'<text x="12" y="{_PAD_T + h / 2}" font-size="13" text-anchor="middle" '
               f'transform="rotate(-90 12 {_PAD_T + h / 2})">{_esc(ylabel)}</text>')
    for k, (name, pts) in enumerate(series):
        color = COLORS.get(name, "#333")
        if bars:
            for x0, x1, y in pts:
                top = fy(y)
                out.append(f'<rect x="{fx(x0):.1f}" y="{top:.1f}" width="'
                           f'{max(1.0, fx(x1) - fx(x0) - 1):.1f}" height="'
                           f'{_PAD_T + h - top:.1f}" fill="{color}"><title>'
                           f'{xtick(x0) if xtick else x0}-{xtick(x1) if xtick else x1} ms: '
                           f'{y:g}</title></rect>')
            continue
        good = [(px, py) for px, py in pts if py is not None and (py > 0 or not log)]
        if good:
            path = " ".join(f"{fx(px):.1f},{fy(py):.1f}" for px, py in good)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                       'stroke-width="1.6"/>')
        out.append(f'<rect x="{_PAD_L + 8 + 120 * k}" y="{_PAD_T + 6}" width="10" height="10" '
                   f'fill="{color}"/><text x="{_PAD_L + 22 + 120 * k}" y="{_PAD_T + 15}" '
                   f'font-size="13">{_esc(name)}</text>')
    out.append("</svg>")
    return "".join(out)


def histogram(latencies: Sequence[float], bins: int = 40) -> list[tuple[float, float, int]]:
    """Log-spaced bins of latencies in ms: ``(low_ms, high_ms, count)``."""
    ms = [x * 1000 for x in latencies if x > 0]
    if not ms:
        return []
    lo, hi = min(ms), max(ms)
    if hi <= lo * 1.0001:
        return [(lo, hi, len(ms))]
    a, b = math.log10(lo), math.log10(hi)
    counts = [0] * bins
    for v in ms:
        counts[min(bins - 1, int((math.log10(v) - a) / (b - a) * bins))] += 1
    edges = [10 ** (a + (b - a) * k / bins) for k in range(bins + 1)]
    return [(round(edges[k], 3), round(edges[k + 1], 3), counts[k]) for k in range(bins)]


def text(value: object) -> str:
    """A value as a person reads it: no Python syntax (``None``, quotes, brackets, braces).
    None is "—"; a list is its items joined by commas; a dict its "key value" pairs."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(text(v) for v in value) or "—"
    if isinstance(value, dict):
        return ", ".join(f"{k} {text(v)}" for k, v in sorted(value.items())) or "—"
    return str(value)


def limits_text(slo: dict[str, Any]) -> str:  # Any: the result's "slo", as JSON
    """The limits a run was held to (``result["slo"]``), in words; "none" when none."""
    said = []
    if slo.get("p99_ms") is not None:
        said.append(f"p99 at most {slo['p99_ms']:g} ms")
    for key, what in (("max_timeouts", "timeouts"), ("max_faults", "faults")):
        if slo.get(key) is not None:
            said.append(f"no {what}" if slo[key] == 0 else f"at most {slo[key]} {what}")
    return ", ".join(said) or "none (--allow-faults and no --slo-p99-ms)"


def verdict(result: dict[str, Any]) -> str:  # Any: the run's result (summary), as JSON
    """The report's first line: what failed, or which limits held (never a claim about
    limits that were not set)."""
    broken = result.get("slo_broken") or []
    if broken:
        return "<p class=bad>failed: " + "; ".join(_esc(b) for b in broken) + "</p>"
    slo = result.get("slo") or {}
    if all(v is None for v in slo.values()):
        return "<p>no limits were set: the run cannot fail (--allow-faults)</p>"
    return f"<p class=good>passed: {_esc(limits_text(slo))}</p>"


def html_report(result: dict[str, Any], stats: Stats) -> str:  # Any: summary's JSON
    """The run as one self-contained HTML page: charts, faults, settings and the machine."""
    secs = stats.seconds
    xmax = max(len(secs), 1)
    per_q: dict[str, list[tuple[float, float]]] = {"p50": [], "p95": [], "p99": [], "max": []}
    for k, s in enumerate(secs):
        lat = sorted(s.latencies)
        if not lat:
            continue
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)):
            value = nearest_rank(lat, q)
            if value is not None:
                per_q[name].append((k + 0.5, value * 1000))
    lat_chart = _chart(list(per_q.items()), xmax, "target latency, ms (log)", log=True)
    hist = histogram(stats.latencies())
    edges = [lo for lo, _, _ in hist] + [hist[-1][1]] if hist else [0.0, 1.0]

    def edge(x: float) -> str:  # bars are evenly spaced; their edges are log-spaced ms
        return f"{edges[min(len(edges) - 1, max(0, round(x)))]:.3g}"
    hist_chart = _chart([("p50", [(k, k + 1, n) for k, (_, _, n) in enumerate(hist)])],
                        max(len(hist), 1), "target moves", bars=True, xtick=edge)
    thr_chart = _chart([("moves/s", [(k + 0.5, s.moves) for k, s in enumerate(secs)]),
                        ("target moves/s", [(k + 0.5, s.target_moves)
                                            for k, s in enumerate(secs)])], xmax, "moves per s")
    flight_chart = _chart([("in flight", [(k + 0.5, s.in_flight) for k, s in enumerate(secs)])],
                          xmax, "matches in flight")
    fault_chart = _chart([("timeouts", [(k + 0.5, s.timeouts) for k, s in enumerate(secs)]),
                          ("faults", [(k + 0.5, s.faults) for k, s in enumerate(secs)])],
                         xmax, "per second")

    def table(rows: Sequence[tuple[str, object]]) -> str:
        return "<table>" + "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(text(v))}"
                                   "</td></tr>" for k, v in rows) + "</table>"

    r = result
    ms = " / ".join(text(r[k]) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))
    headline = table([("moves/s (all seats)", r["moves_per_s"]),
                      ("target moves/s", r["target_moves_per_s"]),
                      ("target latency p50 / p95 / p99 / max (ms)", ms),
                      ("matches started / finished", f"{r['matches_started']} / "
                                                     f"{r['matches_finished']}"),
                      ("match duration p50 / max (s)", f"{text(r['match_s_p50'])} / "
                                                       f"{text(r['match_s_max'])}"),
                      ("ends", r["ends"])])
    faults_t = table([(k.replace("_", " "), r.get(k)) for k in (
        "timeouts", "disconnects", "bot_errors", "first_bot_error", "renuncias",
        "protocol_faults", "late_answers", "failed", "cut", "faults", "reconnects",
        "stopped_early", "target_exited", "first_error")])
    settings = table([(k.replace("_", " "), r.get(k)) for k in (
        "target", "mode", "referee", "house", "games", "duration_s", "ramp_s", "rate",
        "variant", "move_ms", "bank_ms", "bot_processes", "net_rtt_ms", "net_jitter_ms",
        "seconds", "latency_source")] + [("limits", limits_text(r.get("slo") or {}))])
    machine_t = table(sorted((r.get("machine") or {}).items()))
    split = r.get("by_referee") or {}
    referees_t = ("<h2>By referee</h2>" + table([
        (addr, f"{n['matches_finished']} matches, p50 / p99 {text(n['p50_ms'])} / "
               f"{text(n['p99_ms'])} ms, {n['timeouts']} timeouts, {n['faults']} faults")
        for addr, n in split.items()])) if len(split) > 1 else ""
    # on a phone the page is one column: the tables wrap their words, and a chart keeps a width
    # its labels can be read at, scrolling sideways inside its own box
    style = ("*{box-sizing:border-box}"
             "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:820px}"
             "h1{font-size:26px}h1,p{overflow-wrap:anywhere}"
             "table{border-collapse:collapse;margin:8px 0 18px}th,td{border:1px solid #ddd;"
             "padding:3px 8px;text-align:left;font-size:13px;overflow-wrap:anywhere}"
             "th{background:#f4f4f4;font-weight:600}.bad{color:#b00;font-weight:600}"
             ".good{color:#070}h2{font-size:17px;margin-top:26px}"
             ".chart{max-width:100%;overflow-x:auto}"
             f".chart svg{{display:block;width:100%;max-width:{_W}px;min-width:{_MIN_W}px;"
             "height:auto}"
             "@media (max-width:600px){body{margin:12px}th{width:40%}}")

    def chart(svg: str) -> str:
        return f"<div class=chart>{svg}</div>"
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><title>Load "
            f"test of {_esc(r['target'])}</title><style>{style}</style></head><body>"
            f"<h1>Load test of {_esc(r['target'])}</h1>{verdict(r)}{headline}"
            f"<h2>Target latency over time (per second: p50, p95, p99, max)</h2>"
            f"{chart(lat_chart)}"
            f"<h2>Target latency histogram ({r['samples']} moves)</h2>{chart(hist_chart)}"
            f"<h2>Throughput over time</h2>{chart(thr_chart)}{chart(flight_chart)}"
            f"<h2>Faults</h2>{chart(fault_chart)}{faults_t}{referees_t}"
            f"<h2>Settings</h2>{settings}<h2>Machine</h2>{machine_t}"
            f"<p style='font-size:12px;color:#666'>Latency: {_esc(r['latency_source'])}; see "
            "docs/load-testing.md in the Sueca Arena repository.</p></body></html>")
