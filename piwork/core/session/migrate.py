"""Bring v1 and v2 session entries up to format v3, one explicit step per version.

Each step mutates the parsed values in place (as Pi does) and appends new keys after existing ones,
so a rewritten file has the same bytes Pi would write. Ids come from an injectable factory; the
collision check covers every id generated so far in the step.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from piwork.core.ids import IdFactory, random_entry_id
from piwork.core.jscompat import UNDEFINED, js_truthy
from piwork.core.session.jsvalues import js_get

CURRENT_VERSION = 3
MAX_ID_ATTEMPTS = 100


def unique_id(taken: Callable[[str], bool], new_id: IdFactory = random_entry_id) -> str:
    """A short id not yet taken; after 100 collisions a full random UUID (as Pi does)."""
    for _ in range(MAX_ID_ATTEMPTS):
        candidate = new_id()
        if not taken(candidate):
            return candidate
    return str(uuid.uuid4())


def _is_header(value: Any) -> bool:
    return bool(js_get(value, "type") == "session")


def detect_version(values: list[Any]) -> Any:
    """The header's ``version`` (first value with ``type == "session"``), 1 if absent or no header."""
    for value in values:
        if _is_header(value):
            version = js_get(value, "version")
            return 1 if version is None or version is UNDEFINED else version
    return 1


def migrate_v1_to_v2(values: list[Any], new_id: IdFactory = random_entry_id) -> None:
    """Give every entry an id and chain them linearly; compaction index → ``firstKeptEntryId``."""
    generated: set[str] = set()
    previous_id: Any = None
    for value in values:
        if _is_header(value):
            value["version"] = 2
            continue
        entry_id = unique_id(generated.__contains__, new_id)
        generated.add(entry_id)
        value["id"] = entry_id
        value["parentId"] = previous_id
        previous_id = entry_id
        if value.get("type") == "compaction":
            index = value.get("firstKeptEntryIndex", UNDEFINED)
            if isinstance(index, (int, float)) and not isinstance(index, bool):
                in_range = float(index).is_integer() and 0 <= index < len(values)
                target = values[int(index)] if in_range else None
                if js_truthy(target) and not _is_header(target):
                    target_id = js_get(target, "id")
                    if target_id is UNDEFINED:
                        value.pop("firstKeptEntryId", None)
                    else:
                        value["firstKeptEntryId"] = target_id
                del value["firstKeptEntryIndex"]


def migrate_v2_to_v3(values: list[Any]) -> None:
    """Rename the ``hookMessage`` role to ``custom``; headers become version 3."""
    for value in values:
        if _is_header(value):
            value["version"] = 3
            continue
        if js_get(value, "type") == "message":
            message = value.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


def migrate_to_current(values: list[Any], new_id: IdFactory = random_entry_id) -> bool:
    """Run the steps a file needs; ``True`` when anything was migrated."""
    version = detect_version(values)
    if version_at_least(version, CURRENT_VERSION):
        return False
    if not version_at_least(version, 2):
        migrate_v1_to_v2(values, new_id)
    migrate_v2_to_v3(values)
    return True


def version_at_least(version: Any, minimum: int) -> bool:
    """JavaScript's ``version >= minimum`` for whatever the header holds."""
    if isinstance(version, bool):
        return int(version) >= minimum
    if isinstance(version, (int, float)):
        return version >= minimum
    if isinstance(version, str):
        try:
            return float(version.strip() or "0") >= minimum
        except ValueError:
            return False
    return False
