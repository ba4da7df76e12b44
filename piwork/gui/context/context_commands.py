"""Typed ``/context …`` and ``/fresh …`` in the composer: the engine's command functions, shown as notices.

Building the view (resources, branch, system prompt) and reading the project's files run in a worker
thread; compaction and opening the fresh session run on the event loop like the other commands.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from piwork.core.context import (
    ContractError,
    Manifest,
    ManifestEntry,
    append_manifest,
    attach_images,
    latest_contract,
    may_name_images,
    run_verifier_for_real,
)
from piwork.core.llm import Tokenizers
from piwork.core.resources import TrustRequest, TrustResolver, load_profile
from piwork.core.workflows import (
    FRESH_KINDS,
    ONBOARD_USAGE,
    AgentRuntime,
    ContextView,
    FreshError,
    begin_task,
    budget_command,
    compact_command,
    contract_from_words,
    edit_contract,
    exclusion_command,
    fresh_command,
    index_status_command,
    intake_tokens,
    manifest_command,
    may_need_intake,
    onboard_command,
    pack_command,
    parse_onboard,
    parse_task,
    preflight,
    rebuild_command,
    report_text,
    save_intake,
    search_command,
    view_from_session,
)
from piwork.gui.commands import ComposerText, Notices
from piwork.gui.context.feed import ContextFeed
from piwork.gui.context.task_dialog import TaskDialog
from piwork.gui.inert_text import plain_tip
from piwork.gui.trust_dialog import TrustPrompter

CONTEXT_ACTIONS = (
    "preflight",
    "budget",
    "index-status",
    "search",
    "pack",
    "compact",
    "rebuild",
    "manifest",
    "exclude",
    "include",
)
# What excluding a context file costs, said before it is done (it is part of the system prompt).
PROMPT_CACHE_NOTE = (
    "{name} is a context file: it reaches the model in the system prompt. Excluding it rebuilds the "
    "system prompt without it (a short note stands in its place) for the rest of this task, so the "
    "provider's prompt cache starts over once: the whole next request is read as new input, not from "
    "the cache.\n\n"
    "The file is not changed, Pi still loads it, and the next task has it again."
)


class ContextServices(Protocol):
    """What the context workflows use of the open session, its counters and the window."""

    runtime: AgentRuntime | None
    cwd: str
    context_feed: ContextFeed
    tokenizers: Tokenizers

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    async def open_session(self, session_file: str | None) -> AgentRuntime: ...

    def send_prompt(self, text: str) -> None: ...


class ContextCommands:
    def __init__(
        self,
        host: ContextServices,
        notices: Notices,
        composer: ComposerText,
        parent: QWidget,
        *,
        prompter: TrustPrompter,
        show_system_prompt: Callable[[], None],
        show_preflight: Callable[[Sequence[str]], object],
    ) -> None:
        self.host = host
        self.notices = notices
        self.composer = composer
        self.parent = parent
        self.prompter = prompter  # the project's trust decisions (``/onboard`` records its own writes)
        self.show_system_prompt = show_system_prompt  # in the Resources panel, as the session now sends it
        self.show_preflight = show_preflight  # the preflight dialog, with the files a task plans to read

    def _notice(self, title: str, text: str, error: bool = False, hint: str = "") -> None:
        self.notices.add_notice(title, text, hint=hint, error=error)

    def _view(self) -> ContextView | None:
        runtime = self.host.runtime
        if runtime is None:
            return None
        session = runtime.session
        model = session.model
        self.host.tokenizers.load_for(model.id if model else "")  # in a worker; loaded when first needed
        estimator = self.host.context_feed.estimator_for(session, model.id if model else "")
        path = runtime.store.path
        return view_from_session(session, runtime.resources, estimator, str(path) if path else None)

    async def run(self, name: str, args: str) -> None:
        """``/context``, ``/fresh``, ``/task`` or ``/onboard`` with its argument text."""
        if name == "fresh":
            await self._fresh(args.strip())
            return
        if name == "task":
            await self._task(args.strip())
            return
        if name == "onboard":
            await self._onboard(args)
            return
        action, _, rest = args.strip().partition(" ")
        if action not in CONTEXT_ACTIONS:
            self._notice(
                "/context",
                f"Unknown subcommand {action!r}."
                if action
                else "Which part of the context? Add a subcommand.",
                error=True,
                hint="Use one of: " + ", ".join(CONTEXT_ACTIONS),
            )
            return
        title = f"/context {action}"
        session = self.host.runtime.session if self.host.runtime is not None else None
        if action == "compact":
            if session is None:
                return
            report = await compact_command(session)
            self._notice(title, report_text(report) or "Compacted.", error=not report.get("ok"))
            return
        view = await asyncio.to_thread(self._view)
        if view is None:
            return
        if action in ("exclude", "include"):
            self._change_exclusion(view, action, rest.split())
            return
        report = await asyncio.to_thread(self._report, view, action, rest.strip())
        if action == "preflight":
            self.show_preflight(rest.split() if rest.strip() else ())
        if report.get("changed") and session is not None:
            # the task's layers changed since it was recorded: keep the session's manifest current
            append_manifest(session.tree, Manifest.from_json(report["refreshed"]))
        failed = report.get("ok") is False
        self._notice(title, report_text(report), error=failed)

    @staticmethod
    def _report(view: ContextView, action: str, rest: str) -> dict[str, Any]:
        if action == "preflight":
            return preflight(view, planned_files=rest.split() if rest else ())
        if action == "budget":
            return budget_command(view)
        if action == "index-status":
            return index_status_command(view)
        if action == "pack":
            return pack_command(view, rest)
        if action == "search":
            return search_command(view, rest)
        if action == "rebuild":
            return rebuild_command(view)
        return manifest_command(view)

    # ---- exclude for this task ------------------------------------------------------------------

    def change_exclusion(self, action: str, entry: ManifestEntry) -> None:
        """The manifest's "Exclude for this task" / "Include again" on one row. A context file is part of
        the system prompt: excluding it is confirmed first, saying what it costs."""
        if action == "exclude" and entry.layer == 1:
            box = QMessageBox(self.parent)
            box.setObjectName("excludeContextFile")
            box.setIcon(QMessageBox.Icon.Question)
            box.setWindowTitle("Exclude for this task")
            name = entry.path.rsplit("/", 1)[-1] or entry.path
            box.setText(plain_tip(f"Exclude {name} from this task?"))
            box.setInformativeText(plain_tip(PROMPT_CACHE_NOTE.format(name=name)))
            exclude = box.addButton("Exclude", QMessageBox.ButtonRole.AcceptRole)
            box.addButton(QMessageBox.StandardButton.Cancel)
            box.setDefaultButton(QMessageBox.StandardButton.Cancel)
            box.buttonClicked.connect(
                lambda button: (
                    self.host.spawn(self._exclusion_for(action, entry)) if button is exclude else None
                )
            )
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
            return
        self.host.spawn(self._exclusion_for(action, entry))

    async def _exclusion_for(self, action: str, entry: ManifestEntry) -> None:
        view = await asyncio.to_thread(self._view)
        if view is not None:
            self._change_exclusion(view, action, (), (entry,))

    def _change_exclusion(
        self, view: ContextView, action: str, words: Sequence[str], rows: Sequence[ManifestEntry] = ()
    ) -> None:
        """Record the change on the loop's thread (it appends to the session file), then say what it did."""
        session = self.host.runtime.session if self.host.runtime is not None else None
        read_only = session.read_only_reason if session is not None else None
        report, change = exclusion_command(view, action, words, read_only, rows)
        self._notice(f"/context {action}", report_text(report), error=report.get("ok") is False)
        if change is not None and change.touches_system_prompt:
            self.show_system_prompt()  # the Resources panel shows the prompt as now sent

    async def _fresh(self, kind: str) -> None:
        runtime = self.host.runtime
        if kind not in FRESH_KINDS:
            self._notice("/fresh", f"Say which: /fresh {' | /fresh '.join(FRESH_KINDS)}.", error=True)
            return
        if runtime is None:
            return
        view = await asyncio.to_thread(self._view)
        if view is None:
            return
        store = runtime.store
        source = str(store.path) if store.path is not None and store.flushed else None
        try:
            result = await asyncio.to_thread(fresh_command, view, kind, store.session_dir, source)
        except FreshError as err:
            self._notice(
                f"/fresh {kind}",
                str(err),
                error=True,
                hint="Start a task first (it records a Task Contract).",
            )
            return
        result.session.close()
        await self.host.open_session(result.path)
        self._notice(
            f"/fresh {kind}",
            f"Continuing in a new session seeded with the task contract, the manifest and a summary of {source or 'the previous session'}.",
        )

    # ---- /onboard run --------------------------------------------------------------------------

    async def _onboard(self, args: str) -> None:
        runtime = self.host.runtime
        refresh = parse_onboard(args)
        if refresh is None:
            self._notice("/onboard", "Unknown or missing subcommand.", error=True, hint=ONBOARD_USAGE)
            return
        if runtime is None:
            return
        view = await asyncio.to_thread(self._view)
        if view is None:
            return
        session = runtime.session
        summarizer = session.summarizer() if session.model is not None else None
        self._notice(
            "/onboard run",
            "Indexing the project" + (" and asking the model for a snapshot…" if summarizer else "…"),
        )
        settled = await self._trust_settled()
        report = await onboard_command(view, summarizer, refresh)
        if isinstance(report.get("usage"), dict):  # the snapshot's model call is billed like a reply
            session.governance.on_summary_usage(report["usage"])
        if settled and report.get("ok") is not False:
            await self._record_own_writes()
        self._notice("/onboard run", report_text(report), error=report.get("ok") is False)

    async def _trust_settled(self) -> bool:
        """The project is trusted by a saved decision and nothing gated changed since it was made."""
        prompter = self.prompter
        state = await TrustResolver(prompter.store).resolve(self.host.cwd)
        if not state.trusted or state.source != "saved":
            return False
        return not await asyncio.to_thread(prompter.needs_recheck, state)

    async def _record_own_writes(self) -> None:
        """The files /onboard wrote (context index, snapshot) are gated: take them into the recorded
        decision, so the next start does not ask to review piwork's own writing."""
        prompter = self.prompter
        state = await TrustResolver(prompter.store).resolve(self.host.cwd)
        await asyncio.to_thread(prompter.record, TrustRequest(state.cwd, state.resources, ()))

    # ---- long prompts ---------------------------------------------------------------------------

    def offer_intake(self, text: str) -> bool:
        """A prompt over ``INTAKE_TOKENS`` by the session's token counter (the engine's rule, the count
        preflight makes): offer to save it as an intake file. True: the offer took the prompt (it is
        sent, as a reference or as it is, once counted and the person chooses)."""
        if self.host.runtime is None or not may_need_intake(text):
            return False  # too short to be over the limit: sent at once, nothing counted
        self.host.spawn(self._offer_intake(text))
        return True

    def _count(self) -> Callable[[str], int]:
        """Counts with the model's tokenizer, loaded (in the worker that counts) when first needed."""
        runtime = self.host.runtime
        model = runtime.session.model if runtime is not None else None
        model_id = model.id if model else ""
        tokenizers = self.host.tokenizers

        def count(text: str) -> int:
            tokenizers.load_for(model_id)
            return tokenizers.counter_for(model_id).count(text)

        return count

    async def _offer_intake(self, text: str) -> None:
        tokens = await asyncio.to_thread(intake_tokens, text, self._count())
        if tokens is None:
            self.host.send_prompt(text)
            return
        box = QMessageBox(self.parent)
        box.setObjectName("intakeOffer")
        box.setWindowTitle("Long prompt")
        box.setText(
            f"This prompt is about {tokens:,} tokens. Save it as an intake file in .pi/intake/ "
            "(kept out of git) and send a short reference the agent reads in slices?"
        )
        save = box.addButton("Save as intake file", QMessageBox.ButtonRole.AcceptRole)
        send = box.addButton("Send as it is", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)

        def chosen(button: object) -> None:
            if button is save:
                self.host.spawn(self._send_intake(text))
            elif button is send:
                self.host.send_prompt(text)
            else:
                self.composer.set_text(text)  # nothing lost

        box.buttonClicked.connect(chosen)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    async def _send_intake(self, text: str) -> None:
        runtime = self.host.runtime
        if runtime is None:
            self.composer.set_text(text)
            return
        try:
            intake = await asyncio.to_thread(save_intake, runtime.resources.cwd, text, self._count())
        except OSError as err:
            self.composer.set_text(text)
            self._notice("Intake file not saved", str(err), error=True)
            return
        self._notice(
            "Saved as intake file",
            f"{intake.relative}" + ("" if intake.excluded else " (not a git work tree)"),
        )
        self.host.send_prompt(intake.reference)

    # ---- the Task dialog ------------------------------------------------------------------------

    def show_task_dialog(self, contract: Any) -> TaskDialog:
        dialog = TaskDialog(contract, self.parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.saved.connect(lambda fields: self._save_task(dialog, fields))
        dialog.verify_requested.connect(lambda command: self.host.spawn(self._run_verifier(dialog, command)))
        self.task_dialog = dialog
        dialog.open()
        return dialog

    def _save_task(self, dialog: TaskDialog, fields: dict[str, Any]) -> None:
        runtime = self.host.runtime
        if runtime is None:
            return
        session = runtime.session
        current = latest_contract(session.tree)
        if current is None:
            dialog.show_status("This branch has no task any more.")
            return
        try:
            changed = edit_contract(session, current, **fields)
        except ContractError as err:
            dialog.show_status(str(err))
            return
        if changed is current:
            dialog.show_status("Nothing changed.")
            return
        phase = (
            " (a new phase: the next request starts a new working set)"
            if changed.phase != current.phase
            else ""
        )
        dialog.show_status(f"Saved{phase}. Tools: " + ", ".join(session.tool_names()))
        self._notice("Task", f"{changed.title}: {changed.mode}, phase {changed.phase}{phase}")

    async def _run_verifier(self, dialog: TaskDialog, command: str) -> None:
        runtime = self.host.runtime
        bash = runtime.session.registry.get("bash") if runtime is not None else None
        if runtime is None or runtime.verifier_gate is None or bash is None:
            dialog.show_status("The verifier cannot run here (no shell tool).")
            return
        run = await run_verifier_for_real(
            runtime.verifier_gate, bash, command, runtime.resources.cwd, runtime.resources.agent_dir
        )
        outcome = (
            "passed"
            if run.exit_code == 0
            else f"failed (exit {run.exit_code})"
            if run.exit_code is not None
            else "did not run"
        )
        receipt = f"; receipt {run.receipt.id}" if run.receipt is not None else ""
        text = f"{command}: {outcome}{receipt}"
        if shiboken6.isValid(dialog):
            dialog.show_status(text)
        self._notice(
            "Verifier run for real",
            text + ("\n\n```\n" + run.output_tail + "\n```" if run.output_tail else ""),
            error=run.exit_code != 0,
        )

    # ---- image paths in a prompt ---------------------------------------------------------------

    def names_images(self, text: str) -> bool:
        return may_name_images(text)

    async def send_with_images(self, session: Any, text: str) -> None:
        """Send ``text`` with the local images it names attached (``[image1]``…), read in a worker."""
        attached = await asyncio.to_thread(attach_images, text, self.host.cwd)
        if attached.images or attached.too_large:
            names = len(attached.images)
            self._notice(
                "Images attached",
                f"{names} image{'s' if names != 1 else ''} from paths in the prompt"
                + (f"; {len(attached.too_large)} too large, left as paths" if attached.too_large else ""),
            )
        if session.is_streaming:
            await session.steer(attached.text, attached.images)
        else:
            await session.prompt(attached.text, attached.images)

    # ---- /task ----------------------------------------------------------------------------------

    async def _task(self, text: str) -> None:
        runtime = self.host.runtime
        if runtime is None:
            return
        if not text:
            contract = await asyncio.to_thread(latest_contract, runtime.session.tree)
            if contract is not None:  # /task alone: the task as it stands, to shape
                self.show_task_dialog(contract)
                return
        resources = runtime.resources
        profile = await asyncio.to_thread(load_profile, resources.cwd) if resources.project_trusted else None
        found = profile.profile if profile is not None else None
        try:
            words = parse_task(text)
            contract = contract_from_words(
                words, found.verify if found else (), found.default_task_mode if found else "source-write"
            )
        except ContractError as err:
            self._notice("/task", str(err), error=True)
            return
        unfamiliar = words.unfamiliar
        session = runtime.session
        model = session.model
        await asyncio.to_thread(self.host.tokenizers.load_for, model.id if model else "")
        estimator = self.host.context_feed.estimator_for(session, model.id if model else "")
        started = await asyncio.to_thread(
            begin_task, session, resources, contract, contract.goal, unfamiliar, (), estimator
        )
        lines = [
            started.manifest.render_text(resources.cwd).rstrip("\n"),
            "",
            "Tools: " + ", ".join(started.active_tools),
        ]
        if contract.mode == "source-write" and not contract.verify:
            lines += [
                "",  # a paragraph of its own: the notice is read as Markdown
                "No verify command (the profile has none): edit and write stay off until one is set.",
            ]
        self._notice(f"/task {contract.mode}", "\n".join(lines))
