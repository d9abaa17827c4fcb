"""The league's code keeps the shape its maintainers rely on, checked on every run.

Each check reads the source of ``sueca.arena`` with :mod:`ast` and lists what breaks the rule, so
a failure names the file and line to fix:

- no public function (bench aside) takes or returns ``Any`` without an ``# Any: reason`` comment
  in its signature: the types run unbroken from the referee's result to the page;
- no comparison with a literal match end or match status string: ``End`` and ``MatchStatus``
  are the vocabulary, so a renamed value is a type error, not a silent miss;
- an import inside a function carries a ``# deferred: reason`` comment, and there are fewer
  than 60 of them: imports belong at the top, where a reader sees a module's dependencies;
- no public function takes more than four positional parameters: past that a call site reads
  as a row of unnamed values.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from sueca.arena.records import MatchStatus
from sueca.engine import End

ARENA = Path(__file__).resolve().parents[1] / "arena" / "src" / "sueca" / "arena"
WORDS = {str(v) for v in End} | {str(v) for v in MatchStatus}


@dataclass
class Findings:
    any_typed: list[str] = field(default_factory=list)
    literal_words: list[str] = field(default_factory=list)
    inner_imports: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    wide: list[str] = field(default_factory=list)


def _mentions_any(node: ast.AST | None) -> bool:
    return node is not None and "Any" in ast.unparse(node)


def _literals(node: ast.AST) -> list[object]:
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    return []


def _scan(path: Path, out: Findings, root: Path = ARENA) -> None:
    where = path.relative_to(root.parents[3])
    bench = path.relative_to(root).parts[0] == "bench"
    lines = path.read_text().splitlines()
    tree = ast.parse("\n".join(lines))

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            at = f"{where}:{getattr(child, 'lineno', 0)}"
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                text = lines[child.lineno - 1] + lines[child.lineno - 2]
                (out.deferred if "deferred:" in text else out.inner_imports).append(at)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not child.name.startswith("_") and not bench:
                    args = child.args
                    positional = [*args.posonlyargs, *args.args]
                    if positional and positional[0].arg in ("self", "cls"):
                        positional = positional[1:]
                    if len(positional) > 4:
                        out.wide.append(f"{at} {child.name}")
                    annotations = [p.annotation for p in [*positional, *args.kwonlyargs]]
                    annotations += [a.annotation for a in (args.vararg, args.kwarg) if a]
                    signature = "\n".join(lines[child.lineno - 2:child.body[0].lineno - 1])
                    if any(_mentions_any(a) for a in [*annotations, child.returns]) \
                            and "Any:" not in signature:
                        out.any_typed.append(f"{at} {child.name}")
                visit(child, True)
                continue
            elif isinstance(child, ast.Compare):
                sides = [child.left, *child.comparators]
                if any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in child.ops) \
                        and any(isinstance(v, str) and v in WORDS
                                for side in sides for v in _literals(side)):
                    out.literal_words.append(f"{at}: {lines[child.lineno - 1].strip()}")
            visit(child, in_function)

    visit(tree, False)


def _findings() -> Findings:
    out = Findings()
    paths = sorted(ARENA.rglob("*.py"))
    assert len(paths) > 100, f"the league's source is not at {ARENA}"
    for path in paths:
        _scan(path, out)
    return out


FINDINGS = _findings()


def test_public_functions_are_typed_without_any() -> None:
    assert FINDINGS.any_typed == []


def test_no_comparison_with_a_literal_end_or_status() -> None:
    assert FINDINGS.literal_words == []


def test_imports_are_at_the_top_unless_a_reason_is_given() -> None:
    assert FINDINGS.inner_imports == []
    assert len(FINDINGS.deferred) < 60, FINDINGS.deferred


def test_public_functions_take_at_most_four_positional_parameters() -> None:
    assert FINDINGS.wide == []


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """Each rule catches its own example: a guard against a scanner that finds nothing."""
    root = tmp_path / "a" / "b" / "c" / "d"
    root.mkdir(parents=True)
    bad = root / "probe.py"
    bad.write_text(
        "from typing import Any\n"
        "def f(a: Any, b, c, d, e) -> None:\n"
        "    import os\n"
        "    if a == 'aborted':\n"
        "        pass\n")
    out = Findings()
    _scan(bad, out, root)
    assert [len(out.any_typed), len(out.literal_words), len(out.inner_imports), len(out.wide)] \
        == [1, 1, 1, 1]
