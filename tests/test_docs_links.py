"""The documents stay inside the repository and every rules citation points at a real section.

The rules are ``docs/rules.md``, part of every clone, and code and tests cite them as
``docs/rules.md § Section name``. These tests fail when a citation names a section the page does
not have (a heading was renamed), when a rules file outside the repository is cited, when a link
in any page (the README, the distributions' READMEs, ``docs/``, the runbook) leaves the
repository or points at a file or heading that does not exist, or when a page of ``docs/``
cannot be reached from the README.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
CODE_DIRS = ("sdk/src", "referee", "arena", "tests", "deploy", "proto")
DOCS = [ROOT / "README.md", ROOT / "sdk" / "README.md", ROOT / "referee" / "README.md",
        ROOT / "arena" / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "deploy" / "RUNBOOK.md"]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def headings(path: Path) -> list[str]:
    """The Markdown headings of a file, outside fenced code blocks."""
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+?)\s*#*$", line)):
            out.append(m.group(1).strip())
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def source_files() -> list[Path]:
    files = [p for d in CODE_DIRS for p in (ROOT / d).rglob("*")
             if p.suffix in (".py", ".proto", ".md", ".toml", ".yaml", ".yml") and p.is_file()]
    this = Path(__file__).resolve()  # its own examples of bad citations are not citations
    return [p for p in files if "__pycache__" not in p.parts and p != this] + DOCS


def citations(text: str, names: list[str]) -> list[tuple[str, str | None]]:
    """Each ``§ X`` that follows ``docs/rules.md``, chains such as ``§ A, § B and § C`` too, as
    (the text after the ``§``, the heading of ``names`` it names or None). Comment markers and
    line breaks inside a citation are read as spaces. A chain stops at an unknown section."""
    flat = re.sub(r"\s+", " ", re.sub(r"\n\s*#+ ?", " ", text))
    found: list[tuple[str, str | None]] = []
    for m in re.finditer(r"docs/rules\.md", flat):
        rest = flat[m.end():]
        while (c := re.match(r"\s*(?:[,;]\s*)?(?:and\s+)?§ ", rest)):
            rest = rest[c.end():]
            heading = matching_heading(rest, names)
            found.append((rest[:60], heading))
            if heading is None:
                break
            rest = rest[len(heading):]
    return found


def matching_heading(cited: str, names: list[str]) -> str | None:
    """The longest heading ``cited`` starts with, as a whole phrase (not ``Cards`` in
    ``Cardsharp``)."""
    fits = [h for h in names if cited.startswith(h) and not re.match(r"\w", cited[len(h):len(h) + 1])]
    return max(fits, key=len) if fits else None


def test_every_rules_citation_names_a_heading_of_the_page():
    names = headings(RULES)
    bad, seen = [], 0
    for path in source_files():
        for cited, heading in citations(path.read_text(encoding="utf-8"), names):
            seen += 1
            if heading is None:
                bad.append(f"{path.relative_to(ROOT)}: docs/rules.md § {cited[:40]!r}...")
    assert not bad, "citations of sections docs/rules.md does not have:\n" + "\n".join(bad)
    assert seen >= 30, f"only {seen} citations found: is the citation parser still working?"


def test_citation_parser_reads_chains_and_refuses_unknown_sections():
    names = ["Scoring a deal", "Winning the match", "Cards", "Renúncia and other faults"]
    text = '"""Scoring (docs/rules.md\n    § Scoring a deal, § Winning the match and § Cardz)."""'
    assert [h for _, h in citations(text, names)] == ["Scoring a deal", "Winning the match", None]
    text = "docs/rules.md § Renúncia and other faults and § Cards: forty; § Cards again"
    assert [h for _, h in citations(text, names)] == ["Renúncia and other faults", "Cards"]
    assert [h for _, h in citations("docs/rules.md § Cardsharp", names)] == [None]
    assert citations("x  # see docs/rules.md § Winning\n    # the match; more", names) == [
        ("Winning the match; more", "Winning the match")]
    assert citations("docs/rules.md: no section named", names) == []


def test_nothing_cites_the_rules_file_outside_the_repository():
    """A ``RULES.md`` in a folder beside the repository is not part of a clone."""
    old = "RULES" + ".md"
    hits = [str(p.relative_to(ROOT)) for p in source_files()
            if old in p.read_text(encoding="utf-8") or "../shared" in p.read_text(encoding="utf-8")]
    assert not hits, f"these files still cite {old} or ../shared: {hits}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository_and_resolve(doc):
    text = doc.read_text(encoding="utf-8")
    links = LINK.findall(text)
    bad = []
    for target in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            bad.append(f"{target}: leaves the repository")
            continue
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if ROOT not in path.parents and path != ROOT:
            bad.append(f"{target}: outside the repository")
        elif not path.exists():
            bad.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in {slug(h) for h in headings(path)}:
            bad.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not bad, f"bad links in {doc.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_rules_page_has_the_sections_a_newcomer_needs():
    """A complete page, with the variants, the silent points and worked examples."""
    names = headings(RULES)
    for wanted in ("Sources", "Players, teams and seats", "Cards", "How the arena writes cards",
                   "Dealing and the trump", "Playing a trick", "Renúncia and other faults",
                   "Scoring a deal", "Winning the match", "Variants", "Where the texts are silent",
                   "Worked examples"):
        assert wanted in names, f"docs/rules.md has no section {wanted!r}"
    assert "](docs/rules.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_docs_page_is_reached_from_the_readme():
    """A newcomer starts at the README: each page of ``docs/`` is linked from it, or from a page
    it links to."""
    readme = ROOT / "README.md"
    seen, todo = {readme}, [readme]
    while todo:
        page = todo.pop()
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            file_part = target.partition("#")[0]
            path = (page.parent / file_part).resolve() if file_part else page
            if path.suffix == ".md" and path.exists() and path not in seen:
                seen.add(path)
                todo.append(path)
    unreached = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").glob("*.md"))
                 if p.resolve() not in seen]
    assert not unreached, f"no way from README.md to {unreached}"
