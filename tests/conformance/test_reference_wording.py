"""The conformance op maps piwork's own prompt sentences to the reference's only where piwork emits them."""

from __future__ import annotations

from piwork.conformance.runner import run_case
from piwork.core.resources import prompt_text


def _prompt(options: dict[str, object]) -> str:
    case = {"id": "wording-1", "op": "build_system_prompt", "args": {"options": options}, "expect": None}
    text = run_case(case).actual["text"]
    assert isinstance(text, str)
    return text


def test_user_text_that_repeats_piwork_sentences_is_left_alone() -> None:
    ours = [prompt_text.PROJECT_CONTEXT_INTRO, prompt_text.SKILLS_PREAMBLE]
    user_text = "\n" + "\n".join(ours) + "\n"
    skill = {
        "name": "s",
        "description": prompt_text.SKILLS_PREAMBLE,
        "filePath": "/p/s/SKILL.md",
        "baseDir": "/p/s",
    }
    text = _prompt(
        {
            "cwd": "/work",
            "customPrompt": "Custom." + user_text,
            "appendSystemPrompt": user_text,
            "contextFiles": [{"path": "/work/AGENTS.md", "content": user_text}],
            "skills": [skill],
        }
    )
    # every copy the user wrote survives: custom prompt, appended text, the context file, the skill description
    assert text.count(f"\n{prompt_text.PROJECT_CONTEXT_INTRO}\n") == 3
    assert text.count(prompt_text.SKILLS_PREAMBLE) == 4
    # and the sentences piwork emitted itself read as the reference's
    assert "<project_context>\nProject-specific instructions and guidelines:\n\n" in text
    assert "<skills>\nThe following skills provide specialized instructions for specific tasks.\n" in text
    assert text.endswith("\n\n<cwd>\n/work\n</cwd>")
