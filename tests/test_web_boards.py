"""The browser boards in a real headless Chromium (Debian's, through Playwright for Python):
a small harness page (``tests/data/boards_harness``) mounts each board module from
``p2p/web/static/boards`` under a strict Content-Security-Policy, feeds it states from the
Python views, clicks, drags and types as a person would, and checks the exact move text
``api.play`` got. Finished boards are written to ``docs/web-*.png`` and checked to be
non-blank (many distinct colours, the seats' colours among them)."""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chess4_fen import fen

from p2p.ai import choose_move
from p2p.games import create_game
from p2p.games.chess4 import Chess4
from p2p.web.views import connect4 as connect4_view
from p2p.web.web_view import plain_state, web_view_for

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is part of the test extra")

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "p2p" / "web" / "static"
HARNESS = Path(__file__).resolve().parent / "data" / "boards_harness"
DOCS = ROOT / "docs"
CHROMIUM = Path("/usr/bin/chromium")
ORIGIN = "http://boards.test"
CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'"
"""As strict as the web face's own: no inline script or style, nothing from elsewhere."""
TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
DIAGONAL_WIN = "1223343643474"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is installed by the README's test command")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"],
        )
        try:
            yield browser
        finally:
            browser.close()


def _serve(route: Any) -> None:
    """The harness's files from the package and the test folder, under the CSP."""
    path = route.request.url[len(ORIGIN) + 1:].split("?", 1)[0]
    if path.startswith("static/"):
        file = STATIC / path[len("static/"):]
    elif path.startswith("harness/"):
        file = HARNESS / path[len("harness/"):]
    else:
        file = HARNESS / "index.html"
    if ".." in path or not file.is_file():
        route.fulfill(status=404, body="not found")
        return
    route.fulfill(status=200, body=file.read_bytes(),
                  headers={"content-type": TYPES[file.suffix], "content-security-policy": CSP})


class Board:
    """One mounted board in a page, driven like a person would."""

    def __init__(self, browser: Any, name: str, width: int = 800, height: int = 900) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.set_default_timeout(10_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda err: self.errors.append(str(err)))
        self.page.on("console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None)
        self.page.route(f"{ORIGIN}/**", _serve)
        self.page.goto(f"{ORIGIN}/?board={name}")
        self.page.wait_for_selector("body[data-ready='1']", timeout=20_000)

    def show(self, state: dict[str, object], my_seats: list[int], interactive: bool = True, lang: str = "en") -> None:
        self.page.evaluate("([s, o]) => harness.update(s, o)",
                           [state, {"mySeats": my_seats, "interactive": interactive, "lang": lang}])

    def played(self) -> list[str]:
        return list(self.page.evaluate("harness.played"))

    def wait_unlocked(self) -> None:
        self.page.wait_for_timeout(300)  # the boards' 0.25 s input lock

    def count(self, selector: str) -> int:
        return int(self.page.locator(selector).count())

    def close(self) -> None:
        violations = self.page.evaluate("harness.violations")
        self.page.close()
        assert violations == [], violations
        assert self.errors == [], self.errors


@pytest.fixture()
def open_board(browser: Any) -> Iterator[Any]:
    boards: list[Board] = []

    def opener(name: str, **size: int) -> Board:
        board = Board(browser, name, **size)
        boards.append(board)
        return board

    yield opener
    for board in boards:
        board.close()


def _game(name: str, moves: list[str] | str, options: dict[str, Any] | None = None) -> Any:
    game = create_game(name, options or {})
    for move in moves:
        game.push(move)
    return game


def _state(game: Any) -> dict[str, object]:
    return web_view_for(game.name).state(game)


def _png_colours(path: Path) -> set[tuple[int, ...]]:
    """The distinct pixel colours of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6) and body[12] == 0, "8-bit RGB(A), not interlaced"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours: set[tuple[int, ...]] = set()
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        previous = row
        if y % 3 == 0:
            colours.update(tuple(row[i:i + 3]) for i in range(0, stride, channels * 3))
    return colours


def _near(colours: set[tuple[int, ...]], rgb: tuple[int, int, int], tolerance: int = 12) -> bool:
    return any(all(abs(a - b) <= tolerance for a, b in zip(c, rgb)) for c in colours)


def _screenshot(board: Board, name: str, seat_colours: list[tuple[int, int, int]]) -> None:
    path = DOCS / f"web-{name}.png"
    board.page.screenshot(path=str(path), full_page=True)
    colours = _png_colours(path)
    assert len(colours) >= 50, f"{path.name} looks blank: {len(colours)} colours"
    for rgb in seat_colours:
        assert _near(colours, rgb), f"{path.name}: no seat colour {rgb}"


RED, YELLOW, BLUE, GREEN = (0xD5, 0x5E, 0x00), (0xF0, 0xE4, 0x42), (0x00, 0x72, 0xB2), (0x00, 0x9E, 0x73)


# -- Connect Four ------------------------------------------------------------------------


def test_connect4_a_tap_drops_in_that_column_and_a_double_tap_plays_once(open_board: Any) -> None:
    board = open_board("connect4")
    board.show(_state(_game("connect4", "4455")), [0, 1])  # hot-seat: both seats here
    board.page.locator("[data-move='3']").click()
    assert board.played() == ["3"]
    board.wait_unlocked()
    # A double tap: two clicks in one go (dispatched together, so the machine's load
    # cannot stretch them beyond the 0.25 s lock): the second plays for nobody.
    board.page.evaluate("""() => { const c = document.querySelector("[data-move='6']");
                                   c.dispatchEvent(new MouseEvent('click', {bubbles: true}));
                                   c.dispatchEvent(new MouseEvent('click', {bubbles: true})); }""")
    assert board.played() == ["3", "6"]
    # The next position arrives and a tap comes at once: still locked, it plays nothing.
    falling = board.page.evaluate(
        """([s, o]) => { harness.update(s, o);
                         document.querySelector("[data-move='2']")
                           .dispatchEvent(new MouseEvent('click', {bubbles: true}));
                         return document.querySelector('.disc.last').getAnimations().length; }""",
        [_state(_game("connect4", "44553")), {"mySeats": [0, 1], "interactive": True, "lang": "en"}])
    assert board.played() == ["3", "6"]
    assert falling == 1  # and the new disc falls into place
    board.wait_unlocked()
    board.page.locator("[data-move='1']").focus()
    board.page.keyboard.press("ArrowRight")
    board.page.keyboard.press("Enter")
    assert board.played() == ["3", "6", "2"]


def test_connect4_only_the_seat_to_move_may_play_here(open_board: Any) -> None:
    board = open_board("connect4")
    board.show(_state(_game("connect4", "44")), [1])  # Red to move, we are Yellow
    board.wait_unlocked()
    board.page.locator("[data-move='4']").click(force=True)  # aria-disabled, but a person may tap
    board.show(_state(_game("connect4", "44")), [0], interactive=False)  # a replay, looking only
    board.page.locator("[data-move='4']").click(force=True)
    assert board.played() == []
    assert "Red to move" in board.page.locator(".board-status").inner_text()


def test_connect4_pop_out_pops_your_own_bottom_disc_on_the_larger_board(open_board: Any) -> None:
    board = open_board("connect4", width=360, height=740)  # a phone
    game = _game("connect4", "445566", {"popout": True, "width": 8, "height": 7})
    board.show(_state(game), [0])
    assert board.page.locator(".c4-svg").get_attribute("viewBox") == "0 0 800 700"
    enabled = board.page.locator("button.c4-pop:not([disabled])")
    assert sorted(enabled.evaluate_all("els => els.map(e => e.dataset.move)")) == ["p4", "p5", "p6"]
    assert board.count(".disc.poppable") == 3  # Red's own bottom discs are marked
    board.page.locator("button[data-move='p5']").click()
    assert board.played() == ["p5"]
    assert board.page.evaluate("document.documentElement.scrollWidth") <= 360


def test_connect4_finished_round_lights_the_winning_four_joined_by_a_line(open_board: Any) -> None:
    board = open_board("connect4", width=640, height=820)
    game = _game("connect4", DIAGONAL_WIN)
    state = _state(game)
    board.show(state, [0], lang="de")
    line = board.page.locator(".win-line")
    assert line.count() == 1
    assert (line.get_attribute("data-from"), line.get_attribute("data-to")) == ("0,0", "3,3")
    assert board.count(".disc.win") == 4 and board.count(".disc.dim") == len(DIAGONAL_WIN) - 4
    card = board.page.locator(".result-card")
    assert card.is_visible() and card.inner_text().startswith("Rot gewinnt")
    board.page.locator("[data-move='5']").click(force=True)
    assert board.played() == []
    rows = connect4_view.analysis(game)
    board.page.evaluate("([rows]) => harness.chart(rows, {lang: 'de', ply: 13})", [rows])
    assert board.count(".chart .ply-col") == len(DIAGONAL_WIN)
    assert board.count(".chart .bar.pos.exact") >= 1  # Red's win, known exactly at the end
    board.page.locator(".chart .ply-col[data-ply='7']").click()
    assert board.page.evaluate("harness.picked") == [7]
    _screenshot(board, "connect4", [RED, YELLOW])


# -- the cube ----------------------------------------------------------------------------


@functools.cache
def _cube_game() -> Any:
    game = create_game("cube", {"players": 3})
    while len(game.history()) < 40:
        game.push(choose_move(game, "normal", b"web%d" % len(game.history())))
    return game


def test_cube_a_pillar_is_played_from_a_level_the_pad_or_the_keyboard(open_board: Any) -> None:
    board = open_board("cube")
    game = _game("cube", ["a1", "b2", "c3", "a1"], {"players": 3})
    board.show(_state(game), [game.to_move()])
    board.page.locator(".cube-levels [data-cell='22']").click()  # level 2, c2: its pillar
    assert board.played() == ["c2"]
    board.wait_unlocked()
    board.page.locator(".cube-pad [data-move='d4']").click()
    assert board.played() == ["c2", "d4"]
    board.wait_unlocked()
    board.page.locator(".cube-pad [data-move='a1']").focus()
    board.page.keyboard.press("ArrowRight")
    board.page.keyboard.press("ArrowUp")
    board.page.keyboard.press("Enter")
    assert board.played() == ["c2", "d4", "b2"]


def test_cube_the_3d_view_turns_and_a_click_in_it_drops_on_that_pillar(open_board: Any) -> None:
    board = open_board("cube")
    board.show(_state(_game("cube", [], {"players": 2})), [0])
    canvas = board.page.locator("canvas.cube-3d")
    yaw = canvas.get_attribute("data-yaw")
    box = canvas.bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    board.page.mouse.move(cx, cy)
    board.page.mouse.down()
    board.page.mouse.move(cx + 60, cy + 10, steps=6)
    board.page.mouse.up()
    assert canvas.get_attribute("data-yaw") != yaw
    assert board.played() == []  # a drag turns, it does not play
    turned = canvas.get_attribute("data-yaw")
    canvas.focus()
    board.page.keyboard.press("ArrowLeft")
    assert canvas.get_attribute("data-yaw") != turned
    # Where the 3D view draws level 1 of pillar b3, a click drops there.
    x, y = board.page.evaluate(
        """() => { const c = document.querySelector('canvas.cube-3d');
                   const r = c.getBoundingClientRect();
                   const s = c.clientWidth, scale = s / 7.6;
                   const yaw = Number(c.dataset.yaw), pitch = Number(c.dataset.pitch);
                   const X = 1 - 1.5, Y = 0 - 1.0, Z = 2 - 1.5;
                   const x1 = X * Math.cos(yaw) - Z * Math.sin(yaw), z1 = X * Math.sin(yaw) + Z * Math.cos(yaw);
                   const y2 = Y * Math.cos(pitch) + z1 * Math.sin(pitch), z2 = z1 * Math.cos(pitch) - Y * Math.sin(pitch);
                   const f = 1 / (1 + z2 * 0.07);
                   return [r.left + s / 2 + x1 * scale * f, r.top + s / 2 - y2 * scale * f]; }"""
    )
    board.page.mouse.click(x, y)
    assert board.played() == ["b3"]


def test_cube_scored_lines_are_marked_and_the_board_fits_a_phone(open_board: Any) -> None:
    board = open_board("cube", width=360, height=1000)
    game = _cube_game()
    state = _state(game)
    board.show(state, [game.to_move()], lang="de")
    lines = state["lines"]
    assert lines, "the seeded round has scored lines"
    cells = {cell for line in lines for cell in line["cells"]}
    assert board.count(".cube-stone.scored, .cube-stone.lastline") == len(cells)
    assert board.page.evaluate("document.documentElement.scrollWidth") <= 360
    scores = board.page.locator(".seat-score").all_inner_texts()
    assert scores == [str(s) for s in state["scores"]]


def test_cube_screenshot_of_a_three_player_round(open_board: Any) -> None:
    board = open_board("cube", width=900, height=560)
    game = _cube_game()
    board.show(_state(game), [game.to_move()], lang="de")
    board.page.locator(".cube-pad [data-move='c2']").hover()
    _screenshot(board, "cube", [RED, YELLOW, BLUE])


# -- four-player chess -------------------------------------------------------------------


def _square_centre(board: Board, square: str) -> tuple[float, float]:
    box = board.page.locator(f".sq[data-square='{square}']").bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_chess4_click_click_shows_legal_targets_and_plays(open_board: Any) -> None:
    board = open_board("chess4")
    board.show(_state(Chess4.create()), [0])
    board.page.locator(".sq[data-square='h2']").click()
    targets = board.page.locator(".target").evaluate_all("els => els.map(e => e.dataset.square).sort()")
    assert targets == ["h3", "h4"]
    board.page.locator(".sq[data-square='h4']").click()
    assert board.played() == ["h2-h4"]


def test_chess4_a_piece_is_dragged_to_its_target(open_board: Any) -> None:
    board = open_board("chess4")
    board.show(_state(Chess4.create()), [0])
    start, end = _square_centre(board, "j1"), _square_centre(board, "i3")
    board.page.mouse.move(*start)
    board.page.mouse.down()
    board.page.mouse.move(*end, steps=8)
    board.page.mouse.up()
    assert board.played() == ["j1-i3"]


def test_chess4_keyboard_picks_and_plays(open_board: Any) -> None:
    board = open_board("chess4")
    board.show(_state(Chess4.create()), [0])
    board.page.locator(".sq[tabindex='0']").focus()  # the cursor starts on h7
    for key in ["ArrowDown"] * 5 + ["Enter", "ArrowUp", "ArrowUp", "Enter"]:
        board.page.keyboard.press(key)
    assert board.played() == ["h2-h4"]


def test_chess4_other_seats_pieces_and_an_illegal_target_do_not_play(open_board: Any) -> None:
    board = open_board("chess4")
    board.show(_state(Chess4.create()), [0])
    board.page.locator(".sq[data-square='b7']").click()  # Blue's pawn: not ours
    assert board.count(".target") == 0
    board.page.locator(".sq[data-square='h2']").click()
    board.page.locator(".sq[data-square='h6']").click()  # too far: drops the choice
    assert board.played() == [] and board.count(".target") == 0


def test_chess4_promotion_plays_from_to_and_shows_the_one_point_queen(open_board: Any) -> None:
    board = open_board("chess4")
    game = Chess4.from_fen4(fen({"e7": "rP", "h1": "rK", "a7": "bK", "g14": "yK", "n8": "gK"}))
    board.show(_state(game), [0])
    board.page.locator(".sq[data-square='e7']").click()
    board.page.locator(".sq[data-square='e8']").click()
    assert board.played() == ["e7-e8"]
    game.push(board.played()[0])
    board.show(_state(game), [0])
    assert board.count(".piece[data-square='e8'] .promo") == 1


def test_chess4_eliminated_pieces_are_grey_scores_shown_and_board_turns(open_board: Any) -> None:
    board = open_board("chess4", width=720, height=900)
    game = create_game("chess4")
    while len(game.history()) < 16:
        game.push(choose_move(game, "einfach", b"web%d" % len(game.history())))
    game.resign(0)
    state = _state(game)
    board.show(state, [1], lang="de")  # Blue's seat: Blue at the bottom
    red = [p for p in state["pieces"] if p["seat"] == 0]
    assert red and board.count(".piece.grey") == len(red)
    assert board.page.locator(".seat-item.out").inner_text().startswith("Rot")
    assert board.page.locator(".seat-score").all_inner_texts() == [str(s) for s in state["scores"]]
    a7 = board.page.locator(".sq[data-square='a7']").bounding_box()
    h1 = board.page.locator(".sq[data-square='h1']").bounding_box()
    assert a7["y"] > h1["y"]  # Blue's king's square is below Red's back rank now
    _screenshot(board, "chess4", [BLUE, YELLOW, GREEN])


# -- every board ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["connect4", "cube", "chess4"])
def test_every_board_fits_a_phone_in_both_languages(open_board: Any, name: str) -> None:
    board = open_board(name, width=360, height=740)
    game = create_game(name)
    for lang, word in (("de", "am Zug"), ("en", "to move")):
        board.show(_state(game), [0], lang=lang)
        assert word in board.page.locator(".board-status").inner_text()
    assert board.page.evaluate("document.documentElement.scrollWidth") <= 360


def test_the_plain_board_plays_a_game_without_its_own(open_board: Any) -> None:
    board = open_board("plain")
    game = _game("connect4", "44")
    board.show(plain_state(game), [0])
    assert board.page.locator(".plain-text").inner_text().strip() == game.render().strip()
    board.page.locator(".plain-moves [data-move='7']").click()
    assert board.played() == ["7"]
