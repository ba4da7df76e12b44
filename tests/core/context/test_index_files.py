"""The per-file index: symbols for Python, JavaScript/TypeScript, Go and Rust, summaries, incremental
updates that read only changed files, per-folder summaries, and a corrupt index rebuilt."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from piwork.core.context.index import index_status, load_index, write_index
from piwork.core.context.index_builder import (
    build_index,
    file_summary,
    module_summaries,
    project_files,
    top_level_symbols,
    update_index,
)
from piwork.core.resources.loader import load_resources
from piwork.core.settings import Settings
from piwork.core.workflows import commands
from piwork.core.workflows.view import view_from_parts

PYTHON = '''"""Orders: taking and listing them."""
import os

MAX = 3

class OrderBook:
    def add(self, order):  # a method: not top level
        pass

async def fetch(order_id):
    pass

def _helper():
    pass
'''
TYPESCRIPT = """/** Checkout flow for the web shop. */
import { x } from "./x";

export function checkout(cart: Cart): Receipt { return pay(cart); }
export default class Basket {}
export const TAX_RATE = 0.2;
export interface Cart { items: Item[] }
export type Receipt = { id: string };
enum Step { One }
function pay(cart: Cart) {
  const inner = 1;
}
"""
GO = """// Package orders keeps the order book.
package orders

type Book struct{}

func (b *Book) Add(o Order) error { return nil }

func NewBook() *Book { return &Book{} }

var Default = NewBook()
"""
RUST = """//! Payments through the bank API.
pub struct Card;
pub(crate) enum Scheme { Visa }
pub trait Charge {}
impl Charge for Card {}
pub async fn charge(card: &Card) -> Result<(), Error> { Ok(()) }
fn main() {
    fn nested() {}
}
macro_rules! money { () => {} }
"""


@pytest.mark.parametrize(
    ("language", "text", "symbols", "summary"),
    [
        ("python", PYTHON, ("OrderBook", "fetch", "_helper"), "Orders: taking and listing them."),
        (
            "typescript",
            TYPESCRIPT,
            ("checkout", "Basket", "TAX_RATE", "Cart", "Receipt", "Step", "pay"),
            "Checkout flow for the web shop.",
        ),
        ("go", GO, ("Book", "Add", "NewBook", "Default"), "Package orders keeps the order book."),
        (
            "rust",
            RUST,
            ("Card", "Scheme", "Charge", "charge", "main", "money"),
            "Payments through the bank API.",
        ),
    ],
)
def test_top_level_symbols_and_summaries(
    language: str, text: str, symbols: tuple[str, ...], summary: str
) -> None:
    assert top_level_symbols(language, text) == symbols
    assert file_summary(language, text) == summary


def _tree(root: Path, count: int = 6) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text('"""The package."""\n')
    for i in range(count):
        (root / "pkg" / f"mod{i}.py").write_text(f'"""Module {i}."""\n\ndef run_{i}():\n    pass\n')


def test_an_update_reads_only_what_changed(tmp_path: Path) -> None:
    _tree(tmp_path)
    index = build_index(str(tmp_path))
    assert len(index.entries) == 7
    # mod0: new content of another size; mod1: same size and time as recorded (not re-read, kept as is)
    (tmp_path / "pkg" / "mod0.py").write_text('"""Module zero, renamed."""\n\ndef start():\n    pass\n')
    one = tmp_path / "pkg" / "mod1.py"
    before = os.stat(one)
    one.write_text(one.read_text().replace("run_1", "zzz_1"))
    os.utime(one, ns=(before.st_atime_ns, before.st_mtime_ns))
    (tmp_path / "pkg" / "mod5.py").unlink()
    (tmp_path / "pkg" / "extra.py").write_text("def extra():\n    pass\n")
    update = update_index(str(tmp_path), index)
    assert update.to_json() == {"reused": 5, "updated": 1, "added": 1, "dropped": 1, "entries": 7}
    entries = {e.id: e for e in update.index.entries}
    assert entries["pkg/mod0.py"].files[0].symbols == ("start",)
    assert entries["pkg/mod0.py"].summary == "Module zero, renamed."
    assert entries["pkg/mod1.py"].files[0].symbols == ("run_1",)  # unchanged size and time: not read again
    assert entries["pkg/extra.py"].files[0].symbols == ("extra",)
    # one edited file among seven is one changed entry: the index stays fresh
    (tmp_path / "pkg" / "mod2.py").write_text("def other():\n    return 2\n")
    status = index_status(str(tmp_path), update.index)
    assert [e.entry.id for e in status.entries if e.state != "fresh"] == ["pkg/mod2.py"]
    assert status.fresh and round(status.ratio, 3) == round(6 / 7, 3)


def test_per_folder_summaries_stand_in_for_the_files(tmp_path: Path) -> None:
    _tree(tmp_path, 2)
    (tmp_path / "README.md").write_text("# Shop\n\nA shop.\n")
    summaries = module_summaries(build_index(str(tmp_path)).entries)
    assert summaries == [
        (".", "1 file (markdown); README.md: A shop."),
        (
            "pkg",
            "3 files (python); __init__.py: The package.; mod0.py: Module 0. [run_0]; mod1.py: Module 1. [run_1]",
        ),
    ]


def test_a_corrupt_index_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    _tree(root, 2)
    (root / ".pi").mkdir()
    (root / ".pi" / "context-index.json").write_text("{not json")
    agent = tmp_path / "agent"
    agent.mkdir()
    resources = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), True))
    view = view_from_parts(resources, None, None)
    assert commands.index_status_command(view)["status"] == "invalid"
    report = commands.rebuild(view)
    assert report["ok"] is True and report["rebuilt"] is True and report["entries"] == 3
    assert "not valid JSON" in report["problems"][0]
    assert commands.index_status_command(view)["fresh"] is True
    loaded = load_index(str(root))
    assert loaded.index is not None
    write_index(str(root), loaded.index)  # a round trip keeps every field
    assert json.loads((root / ".pi" / "context-index.json").read_text())["entries"][1]["files"][0][
        "symbols"
    ] == ["run_0"]


def test_an_index_over_the_cap_goes_into_the_bundle_as_folder_summaries(tmp_path: Path) -> None:
    from piwork.core.context.bundle import BundleRequest, assemble_bundle

    for folder in range(30):
        (tmp_path / f"pkg{folder:02d}").mkdir()
        for i in range(60):
            (tmp_path / f"pkg{folder:02d}" / f"m{i:02d}.py").write_text(
                f'"""Part {i} of {folder}."""\ndef f{i}():\n    pass\n'
            )
    (tmp_path / ".pi").mkdir()
    write_index(str(tmp_path), build_index(str(tmp_path)))
    bundle = assemble_bundle(BundleRequest(str(tmp_path), True))
    (row,) = [e for e in bundle.entries if e.kind == "index"]
    assert (row.status, row.reason) == (
        "over-cap",
        "1800 file entries over the cap: per-folder summaries instead",
    )
    text = bundle.text or ""
    assert "- pkg00: 60 files (python); m00.py: Part 0 of 0. [f0]; " in text
    assert "pkg29" in text and "[piwork:" not in text  # every folder, nothing cut


@pytest.mark.parametrize("in_git", [False, True])
def test_the_listing_keeps_links_inside_the_project_and_drops_those_out_of_it(
    tmp_path: Path, in_git: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the project's\n")
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "alias.py").symlink_to(root / "src" / "app.py")  # a link inside: kept
    (root / "leak.txt").symlink_to(outside / "secret.txt")  # a link out: dropped
    (root / "linked").symlink_to(root / "src", target_is_directory=True)
    if in_git:
        import subprocess

        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        (root / "vendor").mkdir()
        (root / "vendor" / "lib.py").write_text("y = 2\n")
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        # a tracked folder replaced by a link out of the project: git still lists its file
        (root / "vendor" / "lib.py").unlink()
        (root / "vendor").rmdir()
        (outside / "lib.py").write_text("z = 3\n")
        (root / "vendor").symlink_to(outside, target_is_directory=True)
    listed = project_files(str(root))
    assert "leak.txt" not in listed.paths and "vendor/lib.py" not in listed.paths
    assert {"alias.py", "src/app.py"} <= set(listed.paths)
    assert listed.source == ("git" if in_git else "walk")
