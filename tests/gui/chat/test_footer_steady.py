"""The footer keeps its place: the meter does not move as the context and billed figures change."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from piwork.gui.chat.footer import ChatFooter
from piwork.gui.context.reading import BilledFigures, MeterReading


def test_the_meter_stays_put_as_the_figures_grow(qtbot: QtBot) -> None:
    footer = ChatFooter()
    qtbot.addWidget(footer)
    footer.resize(1100, 30)
    footer.show()
    qtbot.waitExposed(footer)
    footer.set_reading(MeterReading(window=200_000, occupancy=967))
    footer.set_billed(BilledFigures(session_tokens=1_800, session_cost=0.0))
    qtbot.wait(20)
    before, billed_at = footer.meter.geometry(), footer.cost_label.x()
    footer.set_reading(MeterReading(window=200_000, occupancy=187_654, exact=True))
    qtbot.wait(20)
    assert footer.cost_label.x() == billed_at  # the context figure grew within its reserved width
    footer.set_billed(BilledFigures(session_tokens=12_345_678, session_cost=123.45))
    qtbot.wait(20)
    assert footer.meter.geometry() == before
    assert footer.meter.width() >= 150  # the bar at its usual width, not squeezed to a sliver
