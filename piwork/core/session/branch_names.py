"""What to call a branch that leaves the active path, the way the session tree shows it: the label put
on one of its entries if there is one, else its first prompt of the user's; a branch without either is
named after the entry it leaves from ("from “…”")."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from piwork.core.session.tree import SessionTree

NAME_CHARS = 60

Texts = Callable[[dict[str, Any]], list[tuple[str, str, str]]]  # an entry's (kind, detail, text)


def short(text: str, limit: int = NAME_CHARS) -> str:
    """The first line of ``text``, its spaces collapsed, cut to ``limit`` characters."""
    line = " ".join(next((ln for ln in text.splitlines() if ln.strip()), "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def branch_name(tree: SessionTree, entry_id: str, active: Collection[Any], texts: Texts) -> str | None:
    """The name of the branch holding ``entry_id`` off the active path (ids in ``active``): “label”,
    “first prompt”, or from “the entry it leaves from”; None when the entry is on the active path or
    nothing readable names it. Reads bodies: call it off the GUI thread."""
    path = tree.path(entry_id)
    start = next((i for i, record in enumerate(path) if record.id not in active), None)
    if start is None:
        return None
    own = path[start:]
    for record in own:
        label = tree.label(record.id)
        if label:
            return f"“{short(label)}”"
    for record in own:
        if record.type == "message" and record.role == "user":
            prompt = _text(tree, record, texts, "user")
            if prompt:
                return f"“{prompt}”"
    if start > 0:
        title = _text(tree, path[start - 1], texts, None)
        if title:
            return f"from “{title}”"
    return None


def _text(tree: SessionTree, record: Any, texts: Texts, kind: str | None) -> str:
    body = tree.body(record)
    if not isinstance(body, dict):
        return ""
    found = (text for k, _detail, text in texts(body) if (kind is None or k == kind) and text.strip())
    return short(next(found, ""))
