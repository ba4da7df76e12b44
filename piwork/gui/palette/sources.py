"""What the palette offers: every window action (with its shortcut), slash command, skill, prompt
template, recent session and model. Recent sessions are listed off the GUI thread and join the
palette when they arrive; models say whether they can answer as soon as the keyring has said."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QAction, QKeySequence

from piwork.core.llm import Model, ModelRegistry
from piwork.core.resources import LoadedResources
from piwork.gui.commands import CommandRegistry, SlashCommand
from piwork.gui.key_status import KeyStatus
from piwork.gui.palette.palette_model import PaletteItem
from piwork.gui.sessions.listing_worker import SessionListing
from piwork.gui.sessions.titles import first_message_title

if TYPE_CHECKING:
    from piwork.core.session import SessionInfo
    from piwork.gui.main_window import MainWindow
    from piwork.gui.palette.palette_dialog import PaletteDialog

RECENT_SESSIONS = 30


class PickableModels(Protocol):
    """What the palette's model items read: the models, what is known about their keys, the pick."""

    @property
    def models(self) -> ModelRegistry: ...

    @property
    def keys(self) -> KeyStatus: ...

    def model_usable(self, model: Model | None) -> bool | None: ...

    def pick_model(self, provider: str, model_id: str) -> None: ...


def _shortcut(action: QAction) -> str:
    return action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)


def action_items(window: MainWindow) -> list[PaletteItem]:
    items = []
    for action in window.action_map.values():
        if action.objectName() == "action_command_palette":
            continue
        title = action.text().replace("&", "")
        usable = action.isEnabled()  # a disabled one is listed last, its tooltip saying why
        detail = action.statusTip() if usable else action.toolTip()
        items.append(
            PaletteItem(
                "action", title, detail, _shortcut(action), action.trigger, action.objectName(), usable=usable
            )
        )
    for dock in window.docks.values():
        toggle = dock.toggleViewAction()
        title = f"Show/Hide {dock.windowTitle()}"
        items.append(
            PaletteItem("action", title, "Panel", _shortcut(toggle), toggle.trigger, toggle.objectName())
        )
    return items + tree_tool_items(window)


def tree_tool_items(window: MainWindow) -> list[PaletteItem]:
    """The session tree's branch tools, which live in its toolbar and menus rather than the menu bar."""
    panel = window.tree_panel

    def show_graph() -> None:
        window.show_tree()
        panel.show_graph()

    def compare() -> None:
        window.show_tree()
        panel.compare_selected()

    def files_touched() -> None:
        window.show_tree()
        panel.branch_tools.files_touched(panel.current_entry_id())

    return [
        PaletteItem(
            "action", "Branch Graph", "Draw the session tree as a graph of its branches", "", show_graph
        ),
        PaletteItem(
            "action",
            "Compare Branches…",
            "The entry selected in the session tree (or two Ctrl+clicked in the graph) against the current "
            "position, side by side",
            "",
            compare,
        ),
        PaletteItem(
            "action",
            "Files Touched…",
            "Files read, written and edited on the path to the selected entry (else the active path), with diffs",
            "",
            files_touched,
        ),
    ]


def command_items(
    registry: CommandRegistry,
    run: Callable[[SlashCommand], None],
    insert: Callable[[str], None],
    resources: LoadedResources | None,
) -> list[PaletteItem]:
    """The registry's commands (one that needs an argument is put in the composer to be completed), then the
    open session's skills and prompt templates."""
    items = []
    for command in registry:
        if command.run is None:
            continue
        action = (
            partial(insert, f"/{command.name} ")
            if command.needs_argument
            else partial(run, SlashCommand(command.name, ""))
        )
        items.append(PaletteItem("command", f"/{command.name}", command.about, "", action))
    if resources is not None:
        for skill in resources.skill_commands:
            items.append(
                PaletteItem(
                    "skill",
                    f"/skill:{skill.name}",
                    skill.description,
                    "",
                    partial(insert, f"/skill:{skill.name} "),
                )
            )
        for prompt in resources.prompts:
            about = str(prompt.description or "prompt template")
            items.append(
                PaletteItem("prompt", f"/{prompt.name}", about, "", partial(insert, f"/{prompt.name} "))
            )
    return items


def model_items(choice: PickableModels) -> list[PaletteItem]:
    """Every model, with why it cannot answer; "checking" while the keyring has not said (never a wrong
    "no API key"). Read from what the window knows about keys: the keyring is not asked here."""
    items = []
    for model in choice.models.models:
        if not model.api_supported:
            continue
        usable = choice.model_usable(model)  # a key, or a server on this computer; None: checking
        if usable is None:
            detail = f"{model.name} (checking keys…)"
        else:
            detail = model.name + ("" if usable else " (cannot answer: no API key)")
        items.append(
            PaletteItem(
                "model",
                f"{model.provider}/{model.id}",
                detail,
                "",
                partial(choice.pick_model, model.provider, model.id),
                usable=usable is not False,
            )
        )
    return items


class ModelItemsFollower(QObject):
    """Keeps an open palette's models in step with what is known about keys (owned by the palette,
    so the connection goes with it)."""

    def __init__(self, choice: PickableModels, palette: PaletteDialog) -> None:
        super().__init__(palette)
        self.choice = choice
        self.palette = palette
        choice.keys.changed.connect(self.update_models)

    @Slot()
    def update_models(self) -> None:
        self.palette.replace_items("model", model_items(self.choice))


def session_items(open_session: Callable[[str], None], infos: list[SessionInfo]) -> list[PaletteItem]:
    items = []
    for info in infos[:RECENT_SESSIONS]:
        title = info.name or " ".join(first_message_title(info.first_message).split())[:80]
        path = str(info.path)
        when = info.created[:16].replace("T", " ")
        detail = f"{when} · {info.message_count} messages" if when else Path(path).name
        items.append(
            PaletteItem("session", title, detail, "", partial(open_session, path), "session:" + path)
        )
    return items


def list_recent_sessions(
    agent_dir: Path,
    cwd: str,
    open_session: Callable[[str], None],
    deliver: Callable[[list[PaletteItem]], None],
    owner: QObject,
) -> SessionListing:
    """Start listing this project's sessions on a worker; ``deliver`` gets their palette items.
    The listing belongs to ``owner`` (the palette): closing it drops what arrives later."""
    listing = SessionListing(agent_dir, parent=owner)
    listing.finished.connect(lambda infos: deliver(session_items(open_session, infos)))
    listing.start(cwd)
    return listing
