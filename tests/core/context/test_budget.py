from __future__ import annotations

import pytest

from piwork.core.context.budget import GovernorSettings, Marks, effective_marks
from piwork.core.llm.types import CostTier, Model, ModelCost
from piwork.core.settings import MemorySettingsStorage, Settings


def model(window: int, tiers: tuple[int, ...] = ()) -> Model:
    cost = ModelCost(tiers=tuple(CostTier(above, 1, 1, 1, 1) for above in tiers))
    return Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=window, cost=cost)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (32_000, Marks(32_000, 15_616, 15_616, None, 15_616)),
        (128_000, Marks(128_000, 102_400, 111_616, None, 111_616)),
        (200_000, Marks(200_000, 160_000, 183_616, None, 183_616)),
        (400_000, Marks(400_000, 160_000, 240_000, 272_000, 383_616)),
        (1_000_000, Marks(1_000_000, 160_000, 240_000, 272_000, 983_616)),
    ],
)
def test_effective_marks_per_window(window: int, expected: Marks) -> None:
    assert effective_marks(model(window)) == expected


def test_pricing_comes_from_the_lowest_cost_tier_even_in_a_small_window() -> None:
    assert effective_marks(model(200_000, (300_000, 200_000))).pricing == 200_000
    assert effective_marks(model(1_000_000, (500_000,))).pricing == 500_000


def test_settings_override_the_marks() -> None:
    settings = GovernorSettings.from_settings(
        {"piwork": {"contextGovernor": {"pressureMark": 100_000, "promptCeiling": 150_000}}}
    )
    assert settings.problems == ()
    marks = effective_marks(model(1_000_000), settings)
    assert (marks.pressure, marks.ceiling) == (100_000, 150_000)


def test_zone_order() -> None:
    marks = effective_marks(model(400_000))
    assert [marks.zone(t) for t in (1, 160_000, 240_000, 272_000, 383_617)] == [
        "ok",
        "pressure",
        "over-ceiling",
        "pricing-zone",
        "overflow",
    ]


@pytest.mark.parametrize(("occupancy", "required"), [(40_000, 8_000), (100_000, 15_000), (180_000, 20_000)])
def test_required_savings(occupancy: int, required: int) -> None:
    assert GovernorSettings().required_savings(occupancy) == required


def test_defaults() -> None:
    settings = GovernorSettings.from_settings({})
    assert settings == GovernorSettings()
    assert (settings.enabled, settings.allow_pricing_zone, settings.min_protected_groups) == (True, False, 6)


def test_bad_values_are_reported_and_replaced_by_defaults() -> None:
    raw = {
        "enabled": "yes",
        "pressureMark": -5,
        "promptCeiling": 1.5,
        "allowPricingZone": 1,
        "minProtectedGroups": 2,
        "minSavings": "8000",
        "savingsRatio": 3,
        "maxRequiredSavings": None,
    }
    settings = GovernorSettings.from_settings({"piwork": {"contextGovernor": raw}})
    assert settings == GovernorSettings()
    assert list(settings.problems) == [
        'settings: piwork.contextGovernor.enabled must be true or false (got "yes"); using true',
        "settings: piwork.contextGovernor.pressureMark must be at least 1 (got -5); using 160000",
        "settings: piwork.contextGovernor.promptCeiling must be a whole number (got 1.5); using 240000",
        "settings: piwork.contextGovernor.allowPricingZone must be true or false (got 1); using false",
        "settings: piwork.contextGovernor.minProtectedGroups must be at least 6 (got 2); using 6",
        'settings: piwork.contextGovernor.minSavings must be a whole number (got "8000"); using 8000',
        "settings: piwork.contextGovernor.savingsRatio must be above 0 and at most 1 (got 3); using 0.15",
    ]


def test_not_an_object_and_inconsistent_savings() -> None:
    assert GovernorSettings.from_settings({"piwork": {"contextGovernor": 3}}).problems == (
        "settings: piwork.contextGovernor must be an object (got 3); using the defaults",
    )
    settings = GovernorSettings.from_settings(
        {"piwork": {"contextGovernor": {"minSavings": 30_000, "maxRequiredSavings": 10_000}}}
    )
    assert settings.max_required_savings == 30_000
    assert settings.problems == (
        "settings: piwork.contextGovernor.maxRequiredSavings must be at least minSavings = 30000 (got 10000); using 30000",
    )


def test_read_from_a_real_settings_file_layering() -> None:
    storage = MemorySettingsStorage(
        '{"piwork": {"contextGovernor": {"enabled": false, "minSavings": 9000}}}',
        '{"piwork": {"contextGovernor": {"minSavings": 10000}}}',
    )
    settings = GovernorSettings.from_settings(Settings.load(storage, project_trusted=True).effective)
    assert (settings.enabled, settings.min_savings) == (False, 10_000)
