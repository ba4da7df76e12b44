"""Every main action of the window with its menu and shortcut, in one table (Help lists it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ActionSpec:
    id: str
    text: str
    shortcut: str
    menu: str
    tip: str = ""
    checkable: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec(
        "open_folder",
        "&Open Folder…",
        "Ctrl+O",
        "File",
        "Open a project folder (its trust is asked as at a first start)",
    ),
    ActionSpec("open_session", "Open Session &File…", "Ctrl+Alt+O", "File", "Open a session file (.jsonl)"),
    ActionSpec("new_session", "&New Session", "Ctrl+N", "File", "Start a new session in this project"),
    ActionSpec("new_tab", "New &Tab", "Ctrl+Shift+T", "File", "Open a new session in this project in a tab"),
    ActionSpec("close_tab", "&Close Tab", "Ctrl+W", "File", "Close this tab (asks while its reply runs)"),
    ActionSpec(
        "move_tab", "&Move Tab to New Window", "", "File", "Show this tab's session in a window of its own"
    ),
    ActionSpec("next_tab", "Next Ta&b", "Ctrl+PgDown", "View", "Show the next tab's session"),
    ActionSpec("previous_tab", "Previous Tab", "Ctrl+PgUp", "View", "Show the previous tab's session"),
    ActionSpec("sessions_browser", "&Sessions…", "Ctrl+Shift+O", "File", "Browse, search and open sessions"),
    ActionSpec(
        "search_sessions",
        "Searc&h All Sessions…",
        "Ctrl+Shift+F",
        "File",
        "Find words in every session's messages, tool calls and output, on any branch",
    ),
    ActionSpec(
        "export",
        "&Export…",
        "Ctrl+Shift+E",
        "File",
        "Save the session as one HTML page (every branch), or its active branch as a session file (/export)",
    ),
    ActionSpec(
        "import_session",
        "&Import Session…",
        "",
        "File",
        "Copy a session file into this project's sessions and open it (/import)",
    ),
    ActionSpec("settings", "Se&ttings…", "Ctrl+,", "File", "Providers, default model, compaction, trust"),
    ActionSpec("quit", "&Quit", "Ctrl+Q", "File"),
    ActionSpec(
        "command_palette",
        "Command &Palette…",
        "Ctrl+Shift+P",
        "View",
        "Find and run any action, command, skill, prompt template, recent session or model",
    ),
    ActionSpec(
        "focus_composer", "Focus &Composer", "Ctrl+E", "View", "Move the cursor to the message editor"
    ),
    ActionSpec(
        "toggle_theme",
        "&Dark Palette",
        "Ctrl+Shift+D",
        "View",
        "Switch the theme between light and dark",
        True,
    ),
    ActionSpec(
        "reopen_last",
        "&Reopen Last Session at Start",
        "",
        "Session",
        "When piwork opens a project, continue its latest session where it was left (else start a new one)",
        True,
    ),
    ActionSpec(
        "start_fresh",
        "Start &Fresh, Recent Sessions Listed",
        "",
        "Session",
        "When piwork opens a project, start a new session whose empty chat lists the project's recent sessions",
        True,
    ),
    ActionSpec(
        "desktop_notices",
        "Desktop &Notifications",
        "",
        "View",
        "Tell the desktop when a reply ends or fails, or piwork waits for you, while the window is in the background",
        True,
    ),
    ActionSpec(
        "new_worktree_session",
        "New Session in a &Worktree…",
        "",
        "Session",
        "Start a session in a new git worktree and branch of this repository",
    ),
    ActionSpec(
        "compare_base",
        "Compare with &Base Branch",
        "",
        "Session",
        "Show what this session's worktree changed against the branch it started from",
    ),
    ActionSpec(
        "remove_worktree",
        "Remove &Worktree…",
        "",
        "Session",
        "Remove this session's worktree (the main checkout stays as it is)",
    ),
    ActionSpec("stop", "&Stop", "Ctrl+.", "Session", "Stop the agent (Esc in the editor)"),
    ActionSpec("compact", "&Compact Now…", "Ctrl+Shift+K", "Session", "Summarise older messages (/compact)"),
    ActionSpec("name_session", "&Name Session…", "F2", "Session", "Give this session a name (/name)"),
    ActionSpec(
        "context_preflight",
        "Context &Preflight…",
        "Ctrl+Alt+P",
        "Session",
        "Check the next request against the context marks (/context preflight)",
    ),
    ActionSpec("session_tree", "Session &Tree", "Ctrl+T", "Session", "Branch from an earlier point (/tree)"),
    ActionSpec(
        "undo_restore",
        "&Undo File Restore",
        "",
        "Session",
        "Bring back the project's files as they were before the last restore of this session",
    ),
    ActionSpec("pick_model", "Choose &Model", "Ctrl+M", "Session", "Open the model picker"),
    ActionSpec(
        "cycle_thinking", "Cycle T&hinking Level", "Ctrl+Shift+M", "Session", "off → minimal → … → max"
    ),
    ActionSpec("trust", "&Trust…", "Ctrl+Shift+J", "Project", "Decide whether project resources may load"),
    ActionSpec(
        "reload_resources", "&Reload Resources", "Ctrl+R", "Project", "Re-read skills, prompts, AGENTS.md"
    ),
    ActionSpec("shortcuts", "&Keyboard Shortcuts", "F1", "Help"),
    ActionSpec("about", "&About piwork", "", "Help"),
)

# Keys that work inside the chat rather than as window actions.
EDITOR_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "Send the message (steers the agent while it works)"),
    ("Alt+Enter", "Queue a follow-up for when the agent is done (while it works)"),
    ("Shift+Enter", "New line in the message"),
    ("Up / Down", "Previous / next message from history (on the first / last line)"),
    ("Esc", "Stop the agent"),
    (
        "/",
        "Commands (a list opens as you type): /model, /thinking, /compact, /tree, /fork, /clone, /export, …",
    ),
    ("Ctrl+C", "Copy the selected chat text (the selected rows when no text is selected)"),
    ("Ctrl+Shift+C", "Copy the selected chat text as Markdown"),
    ("Ctrl+A", "Select the whole conversation's text (in the conversation)"),
    ("Shift+Arrows / Esc", "Extend the chat's text selection within its message / clear it"),
)

# Keys of the panels, while the panel has the focus: (panel, keys, what).
PANEL_KEYS: tuple[tuple[str, str, str], ...] = (
    ("Session Tree", "Enter", "Go to the selected entry (a message goes back into the editor)"),
    ("Session Tree", "Ctrl+L", "Label the selected entry"),
    ("Session Tree", "Ctrl+Shift+L", "Remove the selected entry's label"),
    ("Session Tree", "Menu key", "Branch tools for the selected entry: fork, clone, compare, restore files"),
    ("Session Tree", "Up / Down, Left / Right", "Move between entries; fold and unfold branches"),
    ("Tool Output Logs", "Ctrl+F", "Search the full output"),
    ("Tool Output Logs", "Enter / Shift+Enter", "Next / previous match (in the search field)"),
    ("Tool Output Logs", "F3", "Next match"),
    ("Tool Output Logs", "Shift+F3", "Previous match"),
    ("Tool Output Logs", "Ctrl+C", "Copy the selected lines"),
    ("Dialogs", "Tab / Shift+Tab", "Move between controls; Space or Enter presses the focused button"),
    ("Dialogs", "Esc", "Close the dialog without changing anything"),
)

MENUS = ("File", "View", "Session", "Project", "Help")

# The actions answered by the session's parts (its tab's controller and the window's tabs), which the window
# makes after its first frame: until then they are disabled (``MainWindow.wait_for_session_parts``).
SESSION_ACTIONS: tuple[str, ...] = (
    "open_folder",
    "open_session",
    "new_session",
    "new_tab",
    "close_tab",
    "move_tab",
    "next_tab",
    "previous_tab",
    "sessions_browser",
    "search_sessions",
    "export",
    "import_session",
    "settings",
    "command_palette",
    "compact",
    "name_session",
    "context_preflight",
    "cycle_thinking",  # the picker moves, the session hears it
    "trust",
    "reload_resources",
)
