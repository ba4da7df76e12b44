"""trust suite: trust_lookup, trust_set, trust_options, has_trust_resources, resolve_project_trust."""

from __future__ import annotations

import asyncio
from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.resources.trust import TrustResolver, has_trust_resources, trust_options
from piwork.core.resources.trust_store import TrustStore, TrustUpdate
from piwork.core.settings_schema import DEFAULT_PROJECT_TRUST


def _store(env: CaseEnv) -> TrustStore:
    assert env.agent_dir is not None
    return TrustStore(env.agent_dir)


def _lookup(args: dict[str, Any], env: CaseEnv) -> Any:
    entry = _store(env).lookup(args["cwd"])
    return {"entry": entry.to_json() if entry else None}


def _set(args: dict[str, Any], env: CaseEnv) -> Any:
    store = _store(env)
    store.set_many([TrustUpdate(u["path"], u["decision"]) for u in args["updates"]])
    return {"file": store.path.read_text(encoding="utf-8")}


def _options(args: dict[str, Any], env: CaseEnv) -> Any:
    session_only = bool((args.get("options") or {}).get("includeSessionOnly"))
    return {"options": [o.to_json() for o in trust_options(args["cwd"], session_only)]}


def _has(args: dict[str, Any], env: CaseEnv) -> Any:
    return {"result": has_trust_resources(args["cwd"])}


def _resolve(args: dict[str, Any], env: CaseEnv) -> Any:
    # the case's global setting, checked as settings.json is (absent or refused: its declared default)
    policy = DEFAULT_PROJECT_TRUST.check(args.get(DEFAULT_PROJECT_TRUST.key)).value
    resolver = TrustResolver(_store(env), default_policy=policy, include_piwork_resources=False)
    state = asyncio.run(resolver.resolve(args["cwd"], override=args.get("trustOverride")))
    return {"trusted": state.trusted}


OPS = {
    "trust_lookup": _lookup,
    "trust_set": _set,
    "trust_options": _options,
    "has_trust_resources": _has,
    "resolve_project_trust": _resolve,
}
