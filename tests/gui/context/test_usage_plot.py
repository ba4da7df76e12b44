"""The usage plot paints two separate series against the marks: occupancy as a line through one point per
request, billed tokens as bars; nothing is summed, and marks above the axis are left out."""

from __future__ import annotations

from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from piwork.core.context.budget import effective_marks
from piwork.core.context.records import BilledSample, OccupancySample
from piwork.core.llm.types import Model
from piwork.gui.context.colors import mark_color, series_color
from piwork.gui.context.usage_plot import UsagePlot, billed_tokens, nice_step


def _close(a: QColor, b: QColor) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 40


def test_two_series_and_the_marks(qtbot: QtBot) -> None:
    marks = effective_marks(
        Model(id="m", name="m", api="x", provider="p", base_url="", context_window=400_000)
    )  # pressure 160K, ceiling 240K
    occupancy = [OccupancySample(i, 40_000 + 20_000 * i, "estimate", "chars/4", 400_000) for i in range(6)]
    billed = [BilledSample(i, "p", "m", 1_000, 500, 30_000 + 20_000 * i, 0, 0.01) for i in range(6)]
    plot = UsagePlot()
    qtbot.addWidget(plot)
    plot.resize(600, 320)
    plot.set_series(occupancy, billed, marks)
    plot.show()
    qtbot.waitExposed(plot)
    image = plot.grab().toImage()
    palette = plot.palette()
    # the axis reaches above the largest point and shows the pressure mark; higher marks stay off it
    assert plot.y_max() >= 160_000 * 1.08
    assert set(plot.visible_marks()) == {"pressure"}
    y = round(plot.y_for(160_000))
    x = int(plot.plot_rect().left() + 30)
    assert any(_close(image.pixelColor(x + dx, y), mark_color("pressure", palette)) for dx in range(8))
    # each occupancy point sits at its own value (not added to the billed bar beside it)
    points = plot.occupancy_points()
    assert len(points) == 6
    for point, sample in zip(points, occupancy, strict=True):
        assert point.y() == plot.y_for(sample.tokens)
        assert _close(
            image.pixelColor(round(point.x()), round(point.y())), series_color("occupancy", palette)
        )
    # a billed bar's top is its own total: input + output + cache read + cache write
    assert billed_tokens(billed[2]) == 1_000 + 500 + 70_000
    bar_x = round(plot.x_for(2) + 4)
    bar_y = round(plot.y_for(billed_tokens(billed[2])) + 3)
    assert _close(image.pixelColor(bar_x, bar_y), series_color("billed", palette))


def test_empty_plot_says_so(qtbot: QtBot) -> None:
    plot = UsagePlot()
    qtbot.addWidget(plot)
    plot.set_series([], [], None)
    assert plot.requests() == 0 and plot.visible_marks() == {}
    plot.grab()  # paints the "no requests yet" text without failing


def test_the_legend_fits_a_narrow_panel(qtbot: QtBot) -> None:
    """In a 400 px Context panel the legend wraps (and shortens titles only when one alone is too wide)
    rather than running off the right edge; the plot moves down below it."""
    marks = effective_marks(
        Model(id="m", name="m", api="x", provider="p", base_url="", context_window=200_000)
    )
    occupancy = [OccupancySample(i, 40_000 + 20_000 * i, "estimate", "chars/4", 200_000) for i in range(3)]
    billed = [BilledSample(i, "p", "m", 1_000, 500, 30_000, 0, 0.01) for i in range(3)]
    plot = UsagePlot()
    qtbot.addWidget(plot)
    plot.set_series(occupancy, billed, marks)
    plot.resize(600, 300)
    wide_top = plot.plot_rect().top()
    plot.resize(370, 300)
    plot.show()
    qtbot.waitExposed(plot)
    image = plot.grab().toImage()
    background = image.pixelColor(plot.width() - 1, 1)
    band = range(int(plot.plot_rect().top()) - 2)
    right_strip = range(plot.width() - 8, plot.width())
    inked = [(x, y) for x in right_strip for y in band if not _close(image.pixelColor(x, y), background)]
    assert inked == []  # nothing painted up to the edge: no cut-off title
    metrics = plot.fontMetrics()
    for _key, title, corner in plot.legend_items():
        assert corner.x() + 14 + metrics.horizontalAdvance(title) <= plot.width()
    assert [title for _k, title, _c in plot.legend_items()] == [
        "context occupancy per request",
        "billed tokens per request",
    ]
    assert plot.plot_rect().top() > wide_top  # two legend lines above the plot
    plot.resize(150, 300)  # narrower than a long title alone: the short ones
    assert [title for _k, title, _c in plot.legend_items()] == ["occupancy", "billed"]


def test_the_token_axis_is_labelled_in_round_steps(qtbot: QtBot) -> None:
    assert [nice_step(v) for v in (1, 1.2, 2.2, 3.5, 7, 27_600, 43_200)] == [
        1, 1.5, 2.5, 4, 8, 30_000, 50_000,
    ]  # fmt: skip
    plot = UsagePlot()
    qtbot.addWidget(plot)
    occupancy = [OccupancySample(0, 96_000, "estimate", "chars/4", 400_000)]  # 110.4k with headroom
    plot.set_series(occupancy, [], None)
    assert plot.y_max() == 120_000  # 0, 30k, 60k, 90k, 120k rather than 27.6k steps
