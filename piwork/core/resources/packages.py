"""Pi packages listed in settings (``packages``): their skills and prompt templates, if already on disk.

piwork never installs packages. A local path is used as it is; npm packages are looked up where Pi
installs them (``<agentDir>/npm/node_modules/<name>``, or ``<cwd>/.pi/npm/...`` for project
settings) and git packages under ``<agentDir>/git/<host>/<path>`` (``<cwd>/.pi/git/...``). A package
that is not there is reported. Inside a package, its ``package.json`` ``pi`` manifest lists the
resources; without one the ``skills/`` and ``prompts/`` folders are used.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlparse

from piwork.core import safe_read
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.skills import resolve_user_path

PackageKind = Literal["npm", "git", "local"]
ResourceKind = Literal["skills", "prompts"]
Collector = Callable[[list[str], ResourceKind], list[str]]
Matcher = Callable[[Sequence[str], Sequence[str], str], set[str]]


@dataclass(frozen=True)
class PackageSource:
    raw: str
    kind: PackageKind
    name: str  # npm package name, "host/owner/repo" for git, the path for local


def parse_package_source(raw: str) -> PackageSource:
    text = raw.strip()
    if text.startswith("npm:"):
        spec = text[4:].strip()
        at = spec.rfind("@")
        return PackageSource(raw, "npm", spec[:at] if at > 0 else spec)
    git = _git_location(text)
    if git is not None:
        return PackageSource(raw, "git", git)
    return PackageSource(raw, "local", text)


def _git_location(text: str) -> str | None:
    prefixed = text.startswith("git:")
    url = text[4:].strip() if prefixed else text
    if not prefixed and not re.match(r"^(https?|ssh|git)://", url, re.IGNORECASE):
        return None
    url = url.split("#", 1)[0]
    if url.startswith("github:"):
        host, path = "github.com", url[7:]
    elif m := re.match(r"^git@([^:]+):(.+)$", url):
        host, path = m.group(1), m.group(2)
    elif re.match(r"^[a-z]+://", url, re.IGNORECASE):
        parsed = urlparse(url)
        host, path = parsed.hostname or "", parsed.path.lstrip("/")
    elif "/" in url:
        host, path = url.split("/", 1)
        if "." not in host and host != "localhost":
            host, path = "github.com", url
    else:
        return None
    last = path.rsplit("/", 1)[-1]
    if "@" in last:
        path = path[: len(path) - len(last)] + last.split("@", 1)[0]
    path = re.sub(r"\.git$", "", path).strip("/")
    if not host or path.count("/") < 1 or ".." in path.split("/"):
        return None
    return f"{host}/{path}"


def install_path(source: PackageSource, scope: str, cwd: str, agent_dir: str) -> str:
    root = os.path.join(cwd, ".pi") if scope == "project" else agent_dir
    if source.kind == "npm":
        return os.path.join(root, "npm", "node_modules", source.name)
    if source.kind == "git":
        return os.path.join(root, "git", *source.name.split("/"))
    return resolve_user_path(source.name, root)


def _manifest(package_root: str) -> dict[str, list[str]] | None:
    try:
        text = safe_read.read_text(
            os.path.join(package_root, "package.json"), safe_read.PACKAGE_MANIFEST, errors="strict"
        )
        data = json.loads(text)
    except (OSError, ValueError):
        return None
    pi = data.get("pi") if isinstance(data, dict) else None
    if not isinstance(pi, dict):
        return None
    return {
        field: entries
        for field in ("skills", "prompts")
        if isinstance(entries := pi.get(field), list) and all(isinstance(e, str) for e in entries)
    }


@dataclass(frozen=True)
class PackageResource:
    kind: ResourceKind
    path: str
    enabled: bool
    source: str
    scope: str
    base_dir: str


def package_resources(
    entries: Sequence[tuple[Any, str]],
    cwd: str,
    agent_dir: str,
    collect: Collector,
    patterns: Matcher,
) -> tuple[list[PackageResource], list[Diagnostic]]:
    """Resources of each configured package (project entries first; one package counts once)."""
    found: list[PackageResource] = []
    diagnostics: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for entry, scope in entries:
        raw = entry if isinstance(entry, str) else entry.get("source") if isinstance(entry, dict) else None
        if not isinstance(raw, str) or not raw.strip():
            continue
        source = parse_package_source(raw)
        root = install_path(source, scope, cwd, agent_dir)
        identity = (source.kind, source.name if source.kind != "local" else root)
        if identity in seen:
            continue
        seen.add(identity)
        if not os.path.exists(root):
            message = f"package {raw} is not installed (piwork does not install packages; install it with pi)"
            diagnostics.append(Diagnostic("warning", message, root, "package_missing"))
            continue
        filters = entry if isinstance(entry, dict) else None
        for kind in ("skills", "prompts"):
            for path, enabled in _package_files(root, kind, filters, collect, patterns):
                found.append(PackageResource(kind, path, enabled, raw, scope, root))
    return found, diagnostics


def _package_files(
    root: str, kind: ResourceKind, filters: dict[str, Any] | None, collect: Collector, patterns: Matcher
) -> list[tuple[str, bool]]:
    if os.path.isfile(root):
        return []
    manifest = _manifest(root)
    entries = manifest.get(kind) if manifest else None
    if entries is not None:
        plain = [e for e in entries if e[:1] not in ("!", "+", "-")]
        files = collect(
            [os.path.normpath(os.path.join(root, e)) for e in plain if "*" not in e and "?" not in e], kind
        )
        files = [
            f for f in files if f in patterns(files, [e for e in entries if e[:1] in ("!", "+", "-")], root)
        ]
    else:
        convention = os.path.join(root, kind)
        files = collect([convention], kind) if os.path.isdir(convention) else []
    user = filters.get(kind) if filters else None
    if isinstance(user, list):
        enabled = patterns(files, [u for u in user if isinstance(u, str)], root) if user else set()
        return [(f, f in enabled) for f in files]
    return [(f, True) for f in files]
