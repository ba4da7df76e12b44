"""The budget meter against real marks: bar positions for W = 32K, 200K and 1M, the painted colours at
those positions, the ghost segment, the hatched pricing zone, and billed traffic kept off the bar."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from piwork.core.context.budget import effective_marks
from piwork.core.llm.types import CostTier, Model, ModelCost
from piwork.gui.chat.footer import ChatFooter
from piwork.gui.context.budget_meter import BudgetMeter
from piwork.gui.context.colors import mark_color, segment_color
from piwork.gui.context.reading import BilledFigures, MeterReading, Segments


def _model(window: int, tiers: tuple[CostTier, ...] = ()) -> Model:
    return Model(
        id="m",
        name="m",
        api="anthropic-messages",
        provider="p",
        base_url="",
        context_window=window,
        cost=ModelCost(input=3, tiers=tiers),  # a priced model
    )


def _meter(qtbot: QtBot, reading: MeterReading, width: int = 401) -> tuple[BudgetMeter, QImage]:
    meter = BudgetMeter(labelled=True)
    qtbot.addWidget(meter)
    meter.resize(width, 64)
    meter.set_reading(reading)
    meter.show()
    qtbot.waitExposed(meter)
    return meter, meter.grab().toImage()


def _close(a: QColor, b: QColor) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 30


@pytest.mark.parametrize(
    ("window", "expected", "label"),
    [
        # W = 32K: U = W - 16,384 = 15,616; pressure 70% of it, ceiling 90%; no pricing step
        (32_000, (10_931, 14_054, 15_616, None), "context 10k / 32k · exact"),
        # W = 200K: U = 183,616; both marks well under the compaction threshold
        (200_000, (128_531, 165_254, 183_616, None), "context 10k / 200k · exact"),
        # W = 1M: the seed's marks as they are, pricing zone from 272K
        (1_000_000, (160_000, 240_000, 983_616, 272_000), "context 10k / 1M · exact"),
    ],
)
def test_marks_sit_at_their_share_of_the_window(
    qtbot: QtBot, window: int, expected: tuple[int, int, int, int | None], label: str
) -> None:
    marks = effective_marks(_model(window))
    assert (marks.pressure, marks.ceiling, marks.compaction_threshold, marks.pricing) == expected
    reading = MeterReading(window, marks, Segments(1000, 2000, 500, 6500), 10_000, True, "o200k_base")
    meter, image = _meter(qtbot, reading)
    bar = meter.bar_rect()
    positions = meter.mark_positions()
    for key, value in zip(("pressure", "ceiling", "compaction"), expected, strict=False):
        assert positions[key] == pytest.approx(bar.left() + value / window * bar.width())
    assert ("pricing" in positions) == (expected[3] is not None)
    y = int(bar.center().y())
    palette = meter.palette()
    # marks at one position are drawn side by side, so each colour shows; the compaction mark is red
    x = round(positions["compaction"])
    assert any(_close(image.pixelColor(x + dx, y), mark_color("compaction", palette)) for dx in range(6))
    px = round(positions["pressure"])
    assert any(_close(image.pixelColor(px + dx, y), mark_color("pressure", palette)) for dx in range(-1, 2))
    if "pricing" in positions:
        qx = round(positions["pricing"])
        assert any(
            _close(image.pixelColor(qx + dx, y), mark_color("pricing", palette)) for dx in range(-1, 2)
        )
    assert reading.label() == label


def test_segments_fill_the_occupancy_and_the_ghost_follows(qtbot: QtBot) -> None:
    window = 200_000
    reading = MeterReading(
        window,
        effective_marks(_model(window)),
        Segments(10_000, 5_000, 5_000, 80_000),
        120_000,
        False,
        "≈ o200k_base",
        elided=30_000,
    )
    meter, image = _meter(qtbot, reading)
    spans = meter.segment_spans()
    assert [key for key, _a, _b in spans] == ["systemPrompt", "tools", "bundle", "messages", "elided"]
    # the estimate's split is scaled to the labelled occupancy (120K of 200K = 60% of the bar)
    assert spans[3][2] == pytest.approx(meter.x_for(120_000))
    assert spans[4][1] == pytest.approx(meter.x_for(120_000))
    assert spans[4][2] == pytest.approx(meter.x_for(150_000))
    y = int(meter.bar_rect().center().y())
    palette = meter.palette()
    for key, start, end in spans[:4]:
        assert _close(image.pixelColor(int((start + end) / 2), y), segment_color(key, palette)), key
    ghost = image.pixelColor(int((spans[4][1] + spans[4][2]) / 2), y)
    assert not _close(ghost, segment_color("messages", palette))  # pale: a ghost, not part of the set
    assert reading.label() == "context 120k / 200k · ≈ o200k_base"
    assert reading.zone == "ok"


def test_pricing_zone_is_hatched_from_its_mark(qtbot: QtBot) -> None:
    tier = CostTier(input_tokens_above=200_000, input=6, output=22, cache_read=0.6, cache_write=7)
    marks = effective_marks(_model(400_000, (tier,)))
    assert marks.pricing == 200_000
    reading = MeterReading(400_000, marks, Segments(messages=50_000), 50_000, False, "chars/4")
    meter, image = _meter(qtbot, reading)
    bar = meter.bar_rect()
    row = int(bar.center().y())
    start = int(meter.mark_positions()["pricing"]) + 4
    zone = {image.pixelColor(x, row).name() for x in range(start, int(bar.right()) - 2)}
    assert len(zone) >= 2  # hatch lines over a tint
    before = {
        image.pixelColor(x, row).name() for x in range(int(meter.x_for(60_000)), int(meter.x_for(140_000)))
    }
    assert len(before) == 1  # the empty bar before the pricing mark is plain
    assert reading.source_label == "≈ chars/4"


def test_footer_shows_billed_beside_the_meter_and_a_popover(qtbot: QtBot) -> None:
    footer = ChatFooter()
    qtbot.addWidget(footer)
    footer.show()
    marks = effective_marks(_model(200_000))
    footer.set_reading(
        MeterReading(200_000, marks, Segments(3000, 2000, 0, 40_000), 45_000, True, "o200k_base")
    )
    footer.set_billed(BilledFigures(1_234_567, 3.2, 2_000_000, 5.5, {"input": 1_000_000, "output": 234_567}))
    assert footer.context_label.text() == "context 45k / 200k · exact"
    assert footer.cost_label.text() == "billed 1.23M tok · $3.20 · today $5.50"
    assert footer.meter.reading.occupancy == 45_000  # billed figures never reach the bar
    popover = footer.show_popover()
    qtbot.waitUntil(popover.isVisible)
    assert "45k / 200k" in popover.headline.text()
    assert "This session: 1.23M tokens, $3.20" in popover.billed_label.text()
    assert "Today (all sessions): 2M tokens, $5.50" in popover.billed_label.text()
    with qtbot.waitSignal(footer.contextPanelRequested):
        popover.panel_button.click()
    assert not popover.isVisible()


def test_a_narrow_footer_keeps_the_figures_and_drops_the_words(qtbot: QtBot) -> None:
    """With the Context dock open in a 1000 px window the footer has little room: it shows the figures
    ("45k / 200k", "$3.20") rather than "conte…" and "billed…"."""
    footer = ChatFooter()
    qtbot.addWidget(footer)
    footer.set_reading(
        MeterReading(
            200_000,
            effective_marks(_model(200_000)),
            Segments(3000, 2000, 0, 40_000),
            45_000,
            True,
            "o200k_base",
        )
    )
    footer.set_billed(BilledFigures(1_234_567, 3.2, 2_000_000, 5.5, {"input": 1_000_000, "output": 234_567}))
    footer.resize(1000, 30)
    footer.show()
    qtbot.waitExposed(footer)
    assert footer.context_label.shown_text() == "context 45k / 200k · exact"  # room for everything
    footer.resize(500, 30)
    qtbot.waitUntil(lambda: footer.context_label.width() < footer.context_label.sizeHint().width())
    shown = footer.context_label.shown_text()
    assert shown in ("45k / 200k", "45k"), shown  # the figures, not "conte…" nor "45k / …"
    assert footer.cost_label.shown_text().startswith("$3.20")
    assert footer.context_label.text() == "context 45k / 200k · exact"  # the whole text stays for readers
