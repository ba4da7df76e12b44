"""What a project contributes to the agent, and whether it may.

Entry points:
- ``loader.load_project(cwd, agent_dir, TrustResolver(...), LoaderOptions(...))`` → ``LoadedResources``
  (skills, prompt templates, context files, SYSTEM/APPEND text, settings, trust state, panel rows);
- ``system_prompt.build_system_prompt(prompt_input_for(loaded, tools, snippets, guidelines))`` and
  ``system_prompt_parts(...)`` for the prompt-anatomy view; ``expand_skill_command`` for ``/skill:``;
- ``prompts.expand_prompt_template`` for ``/name args``;
- ``trust`` / ``trust_store`` / ``trust_fingerprint`` for the trust dialog, ``trust_review`` (files and
  previews of gated resources) and ``trust_snapshot`` (what they looked like at the last decision, and
  the diff since);
- ``frontmatter.parse_frontmatter`` for any Markdown with YAML frontmatter.
"""
