from __future__ import annotations

import pytest

from piwork.core.context.budget import GovernorSettings, Marks, effective_marks
from piwork.core.llm.types import CostTier, Model, ModelCost
from piwork.core.settings import MemorySettingsStorage, Settings


def model(window: int, tiers: tuple[int, ...] = (), input_price: float = 3.0) -> Model:
    cost = ModelCost(input=input_price, tiers=tuple(CostTier(above, 1, 1, 1, 1) for above in tiers))
    return Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=window, cost=cost)


# the spec's examples: U = W - 16,384, pressure = min(160K, floor(0.7 U)), ceiling = min(240K, floor(0.9 U))
@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (32_768, Marks(32_768, 11_468, 14_745, None, 16_384)),
        (65_536, Marks(65_536, 34_406, 44_236, None, 49_152)),
        (131_072, Marks(131_072, 80_281, 103_219, None, 114_688)),
        (200_000, Marks(200_000, 128_531, 165_254, None, 183_616)),
        (400_000, Marks(400_000, 160_000, 240_000, 272_000, 383_616)),
        (1_000_000, Marks(1_000_000, 160_000, 240_000, 272_000, 983_616)),
    ],
)
def test_effective_marks_per_window(window: int, expected: Marks) -> None:
    marks = effective_marks(model(window))
    assert marks == expected
    # every mark lies below host compaction's threshold, so the governor acts first on any window
    assert marks.pressure < marks.ceiling < marks.compaction_threshold
    assert marks.target == expected.pressure // 2


def test_pricing_comes_from_the_lowest_cost_tier_even_in_a_small_window() -> None:
    assert effective_marks(model(200_000, (300_000, 200_000))).pricing == 200_000
    assert effective_marks(model(1_000_000, (500_000,))).pricing == 500_000


def test_a_free_model_has_no_pricing_mark_however_large_its_window() -> None:
    assert effective_marks(model(1_000_000, input_price=0)).pricing is None
    assert (
        effective_marks(model(1_000_000, (500_000,), input_price=0)).pricing == 500_000
    )  # a tier is a price


def test_a_reserve_larger_than_the_window_leaves_marks_of_one_token() -> None:
    marks = effective_marks(model(8_000))
    assert (marks.pressure, marks.ceiling) == (1, 1)


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
    assert GovernorSettings().required_savings(occupancy, room=183_616) == required


@pytest.mark.parametrize(
    ("room", "occupancy", "required"),
    [(16_384, 10_000, 1_639), (16_384, 20_000, 3_000), (49_152, 30_000, 4_916), (114_688, 40_000, 8_000)],
)
def test_the_savings_floor_scales_down_on_small_windows(room: int, occupancy: int, required: int) -> None:
    assert GovernorSettings().required_savings(occupancy, room) == required


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
