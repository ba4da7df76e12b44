"""Context engineering: /context, /task, /onboard, /fresh (the workflows run in ``ContextWork``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.gui.commands.registry import Command, Handler

if TYPE_CHECKING:
    from piwork.gui.commands.context import CommandContext


def _workflow(name: str) -> Handler:
    def run(ctx: CommandContext, args: str) -> None:
        ctx.tasks.spawn(ctx.context.run(name, args))

    return run


COMMANDS = (
    Command("skill:", "<name> [args]", "Run a skill with optional arguments"),  # the agent expands it
    Command(
        "context",
        "preflight|budget|index-status|search <query>|pack <task>|compact|rebuild|manifest|"
        "exclude <layer|path>|include <layer|path>",
        "Context window: check the next request, the marks, the index, the task pack, the manifest; "
        "leave a layer out of this task or bring it back",
        _workflow("context"),
    ),
    Command(
        "task",
        "[read-only|source-write] [unfamiliar] <goal> [verify: <cmd>] [accept: <criterion>] [phase: <phase>]",
        "Start a task: its contract, manifest and the project's context layers before your next prompt",
        _workflow("task"),
    ),
    Command(
        "onboard",
        "run [--refresh]",
        "Create the project's context index, snapshot and profile template where missing",
        _workflow("onboard"),
    ),
    Command(
        "fresh",
        "task|scout|be-to-fe",
        "Continue the task in a new session seeded with its contract and a summary",
        _workflow("fresh"),
    ),
)
