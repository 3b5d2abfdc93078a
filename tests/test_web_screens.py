"""The web pages in a real browser: the screenshot script (``python -m
tests.support.capture_web``, what docs/screens/web-*.png were taken with) runs whole, and
headless Chromium saves each page at a phone's width and a desktop's. Skipped, saying so,
where the system has no Chromium."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.support.capture_web import SCREENS, browser, capture

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[1]


def png_size(path: Path) -> tuple[int, int]:
    """A PNG file's width and height, read from its header."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.skipif(browser() is None,
                    reason="no Chromium on this system (install the chromium package): the "
                           "web pages' screenshots are not taken")
async def test_chromium_shows_the_front_page_a_live_game_and_a_replay(tmp_path: Path):
    written = await capture(tmp_path, review=False)
    assert [p.name for p in written] == [f"{name}.png" for name, *_ in SCREENS]
    for path, (_name, _page, width, height) in zip(written, SCREENS, strict=True):
        assert png_size(path) == (width, height)
        assert path.stat().st_size > 20_000, f"{path.name} looks empty"


def test_the_screenshots_kept_in_the_docs_are_the_script_s():
    for name, _page, width, height in SCREENS:
        kept = ROOT / "docs" / "screens" / f"{name}.png"
        assert kept.exists(), f"docs/screens/{name}.png: run python -m tests.support.capture_web"
        assert png_size(kept) == (width, height)
