"""Resource loading speed: 1,000 skills in nested folders, a project 20 levels deep.

Run: python tests/benchmarks/bench_resources.py   (prints one JSON line; target load_s < 0.5)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from piwork.core.resources.loader import load_resources
from piwork.core.settings import Settings

SKILLS = 1000
DEPTH = 20
TARGET_SECONDS = 0.5


SIMPLE = "---\nname: skill-{i}\ndescription: Skill number {i}.\n---\nBody {i}\n"
# Block scalars and nested metadata: frontmatter that needs the full YAML parser.
RICH = (
    "---\nname: skill-{i}\ndescription: >\n  Skill number {i},\n  folded.\nmetadata:\n  tags: [a, b]\n"
    "  owner: {{team: x}}\n---\nBody {i}\n"
)


def build(root: Path, template: str = SIMPLE) -> tuple[str, str]:
    agent = root / "home/.pi/agent"
    project = root.joinpath("work", *[f"level{i}" for i in range(DEPTH)])
    project.mkdir(parents=True)
    (root / "work/AGENTS.md").write_text("top")
    (project / "AGENTS.md").write_text("leaf")
    (project / ".git").mkdir()
    (project / ".git/HEAD").write_text("ref: main\n")
    for i in range(SKILLS):
        base = agent / "skills" if i % 2 else project / ".pi/skills"
        folder = base / f"group{i % 10}" / f"sub{i % 7}" / f"skill-{i}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Skill number {i}.\n---\nBody {i}\n"
        )
    return str(project), str(agent)


def measure(template: str) -> tuple[list[float], int, int]:
    with tempfile.TemporaryDirectory(prefix="piwork-bench-") as tmp:
        root = Path(os.path.realpath(tmp))
        os.environ["HOME"] = str(root / "home")
        cwd, agent = build(root, template)
        timings = []
        loaded = None
        for _ in range(5):
            start = time.perf_counter()
            settings = Settings.for_project(cwd, agent, project_trusted=True)
            loaded = load_resources(cwd, agent, settings)
            timings.append(time.perf_counter() - start)
        assert loaded is not None
        return timings, len(loaded.skills), len(loaded.rows)


def main() -> int:
    timings, skills, rows = measure(SIMPLE)
    rich, rich_skills, _ = measure(RICH)
    figures = {
        "bench": "resources",
        "skills": skills,
        "rows": rows,
        "ancestor_levels": DEPTH,
        "load_s_median": round(statistics.median(timings), 4),
        "load_s_min": round(min(timings), 4),
        "target_s": TARGET_SECONDS,
        "rich_frontmatter_load_s_median": round(statistics.median(rich), 4),
        "ok": statistics.median(timings) < TARGET_SECONDS and skills == SKILLS and rich_skills == SKILLS,
    }
    print(json.dumps(figures))
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
