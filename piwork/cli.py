"""Command-line entry point: the window by default, or one of the headless commands.

piwork [DIR|FILE.jsonl] [--cwd DIR] [--session FILE]   open the workbench window
piwork -p PROMPT [...]                      run one prompt headless (see --help)
piwork inspect SESSION [--leaf ID] [--json] describe a session file
piwork resources [--cwd DIR] [--json]       list what the model would be told
piwork export SESSION [-o FILE] [--format html|jsonl]   save a session as a page or its branch as a file
piwork context [--cwd DIR] [--session FILE] the context manifest, marks, next request and governor call
piwork checkpoints SESSION [--json]         the checkpoints of the project's files in a session
piwork restore SESSION --leaf ID|--undo [--dry-run] [--force]   put the project's files back
piwork worktree new NAME [--base REF] | list   a git worktree and branch for a line of work; the worktrees
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

# Subcommands: name -> module with ``main(argv: list[str]) -> int``.
SUBCOMMANDS = {
    "inspect": "piwork.commands.inspect",
    "resources": "piwork.commands.resources",
    "export": "piwork.commands.export",
    "context": "piwork.commands.context",
    "checkpoints": "piwork.commands.checkpoints",
    "restore": "piwork.commands.restore",
    "worktree": "piwork.commands.worktree",
}
HEADLESS_MODULE = "piwork.commands.headless"
WINDOW_MODULE = "piwork.commands.window"
HEADLESS_FLAGS = ("-p", "--print", "--prompt", "--mode")


def main(argv: Sequence[str] | None = None) -> int:
    """The process's entry point (the console script, ``python -m piwork``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SUBCOMMANDS:
        from piwork.code_cache import dataclass_methods

        with dataclass_methods():  # the engine's dataclasses, their methods compiled by an earlier run
            code = _run(SUBCOMMANDS[args[0]], args[1:])
    elif any(a in HEADLESS_FLAGS or a.startswith(("--print=", "--prompt=", "--mode=")) for a in args):
        from piwork.code_cache import dataclass_methods, long_lived_imports

        with dataclass_methods():  # a third of the run's imports is compiling its dataclasses' methods
            _prefetch_tokenizer(args)
            with long_lived_imports():  # the engine, as the window's start-up imports its modules
                headless = importlib.import_module(HEADLESS_MODULE)
            code = headless.main(args)
    else:
        code = _run(WINDOW_MODULE, args)
    # What the command loaded stays alive until the process ends (a long session: millions of objects in
    # reference cycles); out of the cycle collector's way, the last collection at exit does not walk and
    # free them one by one, which took seconds.
    gc.freeze()
    return code


def _prefetch_tokenizer(args: list[str]) -> None:
    """A run has its model's tokenizer built while the rest of piwork is imported: the model of ``--model``
    as the run will read it (``provider/id`` unless ``--provider`` is given too), else the global settings'
    ``defaultModel`` (most models share one tokenizer, so a project or session that picks another model
    most often needs the same one)."""
    from piwork.core.paths import agent_dir

    folder = agent_dir()
    model = _option(args, "--model")
    if model and "/" in model and not _option(args, "--provider"):
        model = model.split("/", 1)[1]
    model = model or _default_model(folder)
    if not model:
        return
    from piwork.core.llm.tokens import prefetch

    prefetch(folder, model)


def _default_model(folder: Path) -> str | None:
    """The global settings' ``defaultModel``, when the file is plain JSON that names one."""
    import json

    from piwork.core import safe_read

    try:
        settings = json.loads(safe_read.read_text(folder / "settings.json", safe_read.SETTINGS))
    except (OSError, ValueError):
        return None
    model = settings.get("defaultModel") if isinstance(settings, dict) else None
    return model if isinstance(model, str) and model.strip() else None


def _option(args: list[str], name: str) -> str | None:
    """The last value given to ``name`` (``NAME VALUE`` or ``NAME=VALUE``), as argparse reads it."""
    found = None
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg == name and index + 1 < len(args):
            found = args[index + 1]
        elif arg.startswith(name + "="):
            found = arg[len(name) + 1 :]
    return found


def _run(module_name: str, args: list[str]) -> int:
    module = importlib.import_module(module_name)
    result: int = module.main(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
