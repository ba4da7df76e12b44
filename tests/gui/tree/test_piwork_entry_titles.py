"""piwork's own session entries (a task's context bundle, a handed-over summary, the manifest and the
governor's state) are named in words in the session tree, not by their customType ids."""

from __future__ import annotations

from piwork.core.context.bundle import BUNDLE_CUSTOM_TYPE
from piwork.core.context.governor import STATE_CUSTOM_TYPE
from piwork.core.context.manifest import MANIFEST_CUSTOM_TYPE
from piwork.core.session.tree import tree_from_values
from piwork.core.workflows.fresh import SUMMARY_CUSTOM_TYPE
from piwork.gui.tree.display_tree import entry_title
from tests.gui.tree.sessions import SessionBuilder


def test_piwork_entries_are_named_in_words() -> None:
    builder = SessionBuilder()
    builder.user("fix the add function")
    bundle = builder._next(
        "custom_message", customType=BUNDLE_CUSTOM_TYPE, content="Project context for the task", display=False
    )
    fresh = builder._next(
        "custom_message", customType=SUMMARY_CUSTOM_TYPE, content="Where the task stands", display=True
    )
    manifest = builder._next("custom", customType=MANIFEST_CUSTOM_TYPE, data={"task": "t1"})
    state = builder._next("custom", customType=STATE_CUSTOM_TYPE, data={})
    other = builder._next("custom_message", customType="my-extension", content="hello", display=True)
    tree = tree_from_values(builder.entries)
    titles = {r.id: entry_title(r, tree) for r in tree.records}
    assert titles[bundle].startswith("[task context]"), titles[bundle]
    assert titles[fresh].startswith("[handed-over summary]"), titles[fresh]
    assert titles[manifest].startswith("[context manifest]"), titles[manifest]
    assert titles[state].startswith("[governor state]"), titles[state]
    assert all("piwork." not in title for title in titles.values()), titles
    assert titles[other].startswith("[my-extension]")  # an extension's own type is its name
