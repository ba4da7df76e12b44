"""The engine's events: one closed union of frozen dataclasses, each with its own ``type`` name."""

from __future__ import annotations

import dataclasses
import inspect
import typing

from piwork.core.agent import events


def _event_classes() -> list[type]:
    """Every dataclass of the events module that carries a ``type`` literal."""
    return [
        cls
        for _, cls in inspect.getmembers(events, inspect.isclass)
        if cls.__module__ == events.__name__
        and dataclasses.is_dataclass(cls)
        and "type" in {f.name for f in dataclasses.fields(cls)}
    ]


def test_the_union_holds_every_event_class_and_nothing_else() -> None:
    members = set(typing.get_args(events.AgentEvent))
    assert members == set(_event_classes())


def test_events_are_frozen_and_their_type_names_are_unique() -> None:
    names = []
    for cls in typing.get_args(events.AgentEvent):
        assert cls.__dataclass_params__.frozen, cls.__name__
        (name,) = typing.get_args(typing.get_type_hints(cls)["type"])
        assert {f.name: f.default for f in dataclasses.fields(cls)}["type"] == name
        names.append(name)
    assert len(names) == len(set(names))
