"""Changing ``<agentDir>/models.json`` one provider at a time (the window's Providers page uses this).

Every other provider entry and every key piwork does not know is written back as it was read. The file is
replaced atomically under the same lock folder Pi uses. A file that cannot be parsed is never overwritten:
it is renamed to ``models.json.unreadable-<UTC time>`` first and the change starts a new file. Comments
(which JSON written back cannot keep) are saved in ``models.json.bak`` before the first rewrite.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.core.errors import PiworkError
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import LockBusyError, locked
from piwork.core.llm.models_schema import loads_jsonc, strip_json_comments
from piwork.core.vocabulary import OPENAI_COMPLETIONS

OPENAI_COMPLETIONS_API = OPENAI_COMPLETIONS  # the API a server added in Settings speaks unless told
# The ``apiKey`` of a server marked "needs no key" (one elsewhere on the network, say). Pi reads it as a
# literal key too, so both offer the server's models; a server without authentication ignores the bearer
# value it is sent, and a key saved for the provider (keyring, environment) still comes first.
NO_KEY_NEEDED = "no-key-needed"


class ModelsFileError(PiworkError):
    """models.json could not be changed (the message says why; the file is left as it was)."""


@dataclass(frozen=True)
class ModelsFileChange:
    path: Path
    backup: Path | None = None  # where an unreadable file, or the commented original, was kept
    backup_reason: str = ""


def parse_models_text(text: str) -> dict[str, Any]:
    """The document of a models.json text (comments allowed); ``ValueError`` when it is not an object with
    a ``providers`` object."""
    data = loads_jsonc(text.lstrip("\ufeff"))
    if not isinstance(data, dict):
        raise ValueError("the file is not a JSON object")
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        raise ValueError('"providers" is not an object')
    return data


def read_providers(path: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Provider entries as written in the file, and the reason the file cannot be read (None when fine)."""
    try:
        text = safe_read.read_bytes(path, safe_read.MODELS).decode("utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"{path} cannot be read: {exc}"
    try:
        data = parse_models_text(text)
    except ValueError as exc:
        return {}, f"{path} is not valid: {exc}"
    providers = data.get("providers", {})
    return {k: v for k, v in providers.items() if isinstance(v, dict)}, None


def save_provider(
    path: Path, provider_id: str, entry: dict[str, Any], replaces: str | None = None
) -> ModelsFileChange:
    """Write ``entry`` as provider ``provider_id`` (``replaces``: the id it had before a rename). Keys of the
    existing entry that ``entry`` does not mention are kept."""
    if not provider_id.strip():
        raise ModelsFileError("A provider needs an id.")

    def change(providers: dict[str, Any]) -> None:
        old_id = replaces if replaces and replaces in providers else provider_id
        if old_id != provider_id and provider_id in providers:
            raise ModelsFileError(f"models.json already has a provider called {provider_id}.")
        previous = providers.get(old_id)
        merged = {**previous, **entry} if isinstance(previous, dict) else dict(entry)
        for key, value in list(merged.items()):
            if value is None:  # None in ``entry`` removes the key
                del merged[key]
        if old_id != provider_id:
            # keep the file's order: the renamed entry stays where it was
            items = [
                (provider_id if k == old_id else k, merged if k == old_id else v)
                for k, v in providers.items()
            ]
            providers.clear()
            providers.update(items)
        else:
            providers[provider_id] = merged

    return _update(path, change)


def remove_provider(path: Path, provider_id: str) -> ModelsFileChange:
    def change(providers: dict[str, Any]) -> None:
        providers.pop(provider_id, None)

    return _update(path, change)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _update(path: Path, change: Callable[[dict[str, Any]], None]) -> ModelsFileChange:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with locked(path):
            return _update_locked(path, change)
    except OSError as exc:
        raise ModelsFileError(f"{path} could not be written: {exc.strerror or exc}") from None
    except LockBusyError as exc:  # another program is changing it: nothing was written
        raise ModelsFileError(f"models.json was not changed: {exc}.") from None


def _update_locked(path: Path, change: Callable[[dict[str, Any]], None]) -> ModelsFileChange:
    backup: Path | None = None
    reason = ""
    try:
        raw = safe_read.read_bytes(path, safe_read.MODELS)
    except FileNotFoundError:
        raw = None
    document: dict[str, Any] = {"providers": {}}
    if raw is not None:
        try:
            text = raw.decode("utf-8")
            document = parse_models_text(text)
        except (UnicodeDecodeError, ValueError) as exc:
            backup = path.with_name(f"{path.name}.unreadable-{_stamp()}")
            os.replace(path, backup)  # never overwrite what could not be understood
            reason = f"models.json could not be parsed ({exc}); it was kept as {backup.name}"
            document = {"providers": {}}
        else:
            if strip_json_comments(text.lstrip("\ufeff")) != text.lstrip("\ufeff"):
                backup = path.with_name(f"{path.name}.bak")
                shutil.copy2(path, backup)
                reason = f"models.json had comments, which cannot be written back; the original is kept as {backup.name}"
    providers = document.setdefault("providers", {})
    change(providers)
    text_out = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, text_out, durable=True, private=True)
    return ModelsFileChange(path, backup, reason)
