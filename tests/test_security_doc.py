"""docs/security.md states the server's real limits: every flag, with its real default."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from server.cli import build_parser
from server.config import ServerConfig

DOC = (Path(__file__).resolve().parents[1] / "docs" / "security.md").read_text()
UNITS = {"KiB": 1024, "MiB": 1024 * 1024}


def _limit_rows() -> list[list[str]]:
    body = DOC[DOC.index("## Limits"):DOC.index("## Memory")]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in body.splitlines() if line.startswith("| ")]
    return [row for row in rows if row[0] != "limit"]


def _number(text: str) -> float:
    match = re.match(r"([0-9.]+)\s*(KiB|MiB)?", text)
    assert match, text
    return float(match.group(1)) * UNITS.get(match.group(2) or "", 1)


def test_each_documented_limit_has_its_flag_and_real_default():
    defaults = attrs.asdict(ServerConfig())
    rows = [row for row in _limit_rows() if "--" in row[2]]
    assert len(rows) >= 20
    for _limit, default, flag_cell, _when in rows:
        flag = re.search(r"--[a-z-]+", flag_cell).group(0)
        field = flag[2:].replace("-", "_")
        assert field in defaults, flag
        assert _number(default) == defaults[field], (flag, default, defaults[field])


def test_every_limit_flag_is_documented():
    parser = build_parser()
    groups = {g.title: g for g in parser._action_groups}
    flags = [opt for group in ("limits", "TLS (serve wss://)")
             for action in groups[group]._group_actions for opt in action.option_strings]
    assert len(flags) > 20
    for flag in flags:
        assert re.search(rf"{flag}(?![a-z-])", DOC), f"{flag} is not in docs/security.md"
