"""YAML frontmatter of skills and prompt templates: a pure parser with Pi-compatible typing.

The YAML is parsed by ruamel.yaml (a YAML 1.2 parser); only the scalar typing is done here, following
the YAML 1.2 *core* schema exactly as the `yaml` npm package applies it (which is what Pi uses), so
``yes``/``no`` stay strings, ``1_000`` is a string, ``0o17`` is 15, ``.inf``/``.nan`` are non-finite
floats, ``<<`` is an ordinary key and keys that are collections become their flow text.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

from piwork.core.errors import InputRejected
from piwork.core.jscompat import js_number_str, js_trim

_PLAIN = "tag:piwork,2024:plain"
_YAML_TAG = "tag:yaml.org,2002:"
_MAX_NODES = 100_000  # alias expansion guard ("billion laughs")
_MAX_DEPTH = 200  # nesting deeper than this is refused before Python's recursion limit is reached
_JS_SAFE_INT = 2**53

_NULL_RE = re.compile(r"^(?:~|[Nn]ull|NULL)?$")
_BOOL_RE = re.compile(r"^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$")
_OCT_RE = re.compile(r"^0o[0-7]+$")
_INT_RE = re.compile(r"^[-+]?[0-9]+$")
_HEX_RE = re.compile(r"^0x[0-9a-fA-F]+$")
_SPECIAL_FLOAT_RE = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$")
_EXP_FLOAT_RE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_FLOAT_RE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$")
# YAML 1.2 treats U+2028, U+2029 and U+0085 as ordinary characters, ruamel as line breaks: hide them
# behind private-use stand-ins while parsing and put them back in every string.
_HIDDEN_BREAKS = {"\u2028": "\U0010ff28", "\u2029": "\U0010ff29", "\x85": "\U0010ff85"}
_RESTORE = str.maketrans({v: k for k, v in _HIDDEN_BREAKS.items()})
_SURROGATE_PAIR_RE = re.compile("[\ud800-\udbff][\udc00-\udfff]")


class FrontmatterError(InputRejected):
    """The frontmatter block is not valid YAML (message names the problem and its line)."""


@dataclass(frozen=True)
class Frontmatter:
    """``data`` is usually a dict; a non-mapping YAML document is returned as it is."""

    data: Any
    body: str

    def fields(self) -> dict[str, Any]:
        """The frontmatter as a mapping; empty when the document is not one."""
        return self.data if isinstance(self.data, dict) else {}

    def to_json(self) -> dict[str, Any]:
        return {"frontmatter": self.data, "body": self.body}


class _PlainMarkingResolver(VersionedResolver):
    """Leaves untagged plain scalars for :func:`_resolve_plain` instead of ruamel's own rules."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0]:
            return Tag(suffix=_PLAIN)
        return super().resolve(kind, value, implicit)


def _normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Return (yaml source or None, body), with Pi's exact delimiter rules and quirks."""
    if text.startswith("\ufeff"):
        text = text[1:]
    normalized = _normalize_newlines(text)
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    return normalized[4:end], js_trim(normalized[end + 4 :])


def parse_frontmatter(text: str) -> Frontmatter:
    """Split ``text`` into frontmatter and body. Raises :class:`FrontmatterError` for invalid YAML."""
    source, body = split_frontmatter(text)
    if not source:
        return Frontmatter({}, body)
    data = parse_yaml(source)
    return Frontmatter({} if data is None else data, body)


def strip_frontmatter(text: str) -> str:
    return parse_frontmatter(text).body


def parse_yaml(source: str) -> Any:
    """Parse one YAML document to JSON-like values with core-schema typing."""
    simple = parse_simple_mapping(source)
    if simple is not None:
        return simple
    return parse_yaml_full(source)


_SIMPLE_LINE = re.compile(r"^([A-Za-z0-9_-]+):(?: +(.*))?$")
_INDICATORS = "-?:,[]{}#&*!|>'\"%@`"


def parse_simple_mapping(source: str) -> dict[str, Any] | None:
    """Fast path for the common frontmatter shape: flat ``key: scalar`` lines and nothing else.

    Returns None as soon as anything falls outside that subset (comments, indentation, flow or block
    collections, escapes, indicators, tabs, unusual characters), and the full parser takes over.
    """
    result: dict[str, Any] = {}
    seen: set[Any] = set()
    for line in source.split("\n"):
        if not line:
            continue
        match = _SIMPLE_LINE.match(line)
        if match is None:
            return None
        value = _simple_value((match.group(2) or "").rstrip(" "))
        if value is _NOT_SIMPLE:
            return None
        key_value = _resolve_plain(match.group(1))
        identity = _js_identity(key_value)
        if identity is not None and identity in seen:
            return None  # the full parser reports the duplicate key
        seen.add(identity)
        result[_key_text(key_value)] = value
    return result


_NOT_SIMPLE = object()


def _simple_value(text: str) -> Any:
    if not text:
        return None
    if not text.isprintable():
        return _NOT_SIMPLE
    if text[0] in "\"'" and len(text) >= 2 and text[-1] == text[0]:
        inner = text[1:-1]
        if text[0] in inner or "\\" in inner:
            return _NOT_SIMPLE
        return inner
    if text[0] in _INDICATORS or ": " in text or " #" in text or text.endswith(":"):
        return _NOT_SIMPLE
    return _resolve_plain(text)


def parse_yaml_full(source: str) -> Any:
    """The general path: ruamel.yaml composes the nodes, typing is applied here."""
    yaml = _parser()
    hide = not any(stand_in in source for stand_in in _HIDDEN_BREAKS.values())
    if hide:
        for char, stand_in in _HIDDEN_BREAKS.items():
            source = source.replace(char, stand_in)
    if not source.endswith("\n"):
        source += "\n"  # a block scalar ending the document keeps its line break, as in `yaml`
    if _flow_depth(source) > _MAX_DEPTH:
        raise FrontmatterError("invalid YAML frontmatter: nested too deeply")
    try:
        node = yaml.compose(source)
    except YAMLError as exc:
        raise FrontmatterError(f"invalid YAML frontmatter: {_one_line(exc)}") from exc
    except RecursionError:
        raise FrontmatterError("invalid YAML frontmatter: nested too deeply") from None
    if node is None:
        return None
    return _Converter(hide).value(node)


_local = threading.local()


def _parser() -> YAML:
    """One configured parser per thread (building one costs more than parsing a small document)."""
    parser: YAML | None = getattr(_local, "parser", None)
    if parser is None:
        parser = YAML(typ="safe", pure=True)
        parser.Resolver = _PlainMarkingResolver
        _local.parser = parser
    return parser


def _one_line(exc: Exception) -> str:
    """The parser's problem and where it is, counting lines of the whole file (after the ``---`` line)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        context = getattr(exc, "context", None)
        where = f"line {mark.line + 2}, column {mark.column + 1}"
        return f"{context}: {problem} ({where})" if context else f"{problem} ({where})"
    return " ".join(str(exc).split())


def _flow_depth(source: str) -> int:
    """The deepest nesting of ``[``/``{`` (a cheap upper bound: quotes are not tracked)."""
    if "[" not in source and "{" not in source:
        return 0
    depth = deepest = 0
    for char in source:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


class _Converter:
    def __init__(self, restore: bool) -> None:
        self.count = 0
        self.restore = restore
        self.open: set[int] = set()  # collections being converted: an alias to one is a cycle

    def enter(self, node: Node) -> None:
        """Count a collection node and mark it open; refuse cycles, depth and alias blow-ups."""
        self.count += 1
        if self.count > _MAX_NODES:
            raise FrontmatterError("invalid YAML frontmatter: too many aliases")
        if id(node) in self.open:
            raise FrontmatterError("invalid YAML frontmatter: an alias refers to a node that contains it")
        if len(self.open) >= _MAX_DEPTH:
            raise FrontmatterError("invalid YAML frontmatter: nested too deeply")
        self.open.add(id(node))

    def value(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            self.count += 1
            return self.scalar(node)
        self.enter(node)
        try:
            if isinstance(node, SequenceNode):
                return [self.value(item) for item in node.value]
            if isinstance(node, MappingNode):
                return self.mapping(node)
        finally:
            self.open.discard(id(node))
        raise FrontmatterError("invalid YAML frontmatter: unsupported node")

    def mapping(self, node: MappingNode) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode):
                key_value = self.scalar(key_node)
                identity = _js_identity(key_value)
                if identity is not None and identity in seen:
                    raise FrontmatterError(
                        f"invalid YAML frontmatter: duplicate key {_key_text(key_value)!r}"
                    )
                if identity is not None:
                    seen.add(identity)
                key = _key_text(key_value)
            else:
                key = self.text(_flow_text(key_node, self))
            result[key] = self.value(value_node)
        return result

    def scalar(self, node: ScalarNode) -> Any:
        value = _scalar(node)
        return self.text(value) if isinstance(value, str) else value

    def text(self, value: str) -> str:
        return value.translate(_RESTORE) if self.restore else value


def _tag(node: Node) -> str:
    tag = node.tag
    return str(tag.value if isinstance(tag, Tag) else tag)


def _scalar(node: ScalarNode) -> Any:
    tag = _tag(node)
    text = str(node.value)
    if getattr(node, "style", None) == '"':
        text = _SURROGATE_PAIR_RE.sub(_join_pair, text)
    if tag == _PLAIN:
        return _resolve_plain(text)
    if tag.startswith(_YAML_TAG):
        kind = tag[len(_YAML_TAG) :]
        if kind in ("int", "float", "bool", "null"):
            resolved = _resolve_plain(text)
            return resolved if not isinstance(resolved, str) else text
    return text


def _join_pair(match: re.Match[str]) -> str:
    """``\\ud83d\\ude00`` escapes are UTF-16 halves in JavaScript: join them into one character."""
    high, low = (ord(c) for c in match.group(0))
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def _resolve_plain(text: str) -> Any:
    """YAML 1.2 core schema as the `yaml` npm package resolves plain scalars."""
    if _NULL_RE.match(text):
        return None
    if _BOOL_RE.match(text):
        return text[0] in "tT"
    if _OCT_RE.match(text):
        return _js_int(int(text[2:], 8))
    if _INT_RE.match(text):
        return _js_int(int(text, 10))
    if _HEX_RE.match(text):
        return _js_int(int(text[2:], 16))
    if _SPECIAL_FLOAT_RE.match(text):
        if text[-3:].lower() == "nan":
            return math.nan
        return -math.inf if text[0] == "-" else math.inf
    if _EXP_FLOAT_RE.match(text) or _FLOAT_RE.match(text):
        return float(text)
    return text


def _js_int(value: int) -> int | float:
    """Numbers beyond 2^53 lose precision exactly as a JavaScript number does."""
    return value if abs(value) <= _JS_SAFE_INT else float(value)


def _js_identity(value: Any) -> Any:
    """What JavaScript's ``===`` compares for a scalar key; None when never equal (NaN)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return None if value != value else ("n", float(value))
    if value is None:
        return ("z",)
    return ("s", value)


def _key_text(value: Any) -> str:
    """JavaScript's ``String(key)`` for a scalar key (null becomes the empty string)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (int, float)):
        return js_number_str(value)
    return str(value)


def _flow_text(node: Node, converter: _Converter | None = None) -> str:
    """A collection key written in flow style, the way `yaml` stringifies it for an object key."""
    guard = converter if converter is not None else _Converter(False)
    if isinstance(node, (SequenceNode, MappingNode)):
        guard.enter(node)
        try:
            if isinstance(node, SequenceNode):
                items = [_flow_text(item, guard) for item in node.value]
                return f"[ {', '.join(items)} ]" if items else "[]"
            pairs = [f"{_flow_text(k, guard)}: {_flow_text(v, guard)}" for k, v in node.value]
            return f"{{ {', '.join(pairs)} }}" if pairs else "{}"
        finally:
            guard.open.discard(id(node))
    text = str(node.value)
    style = getattr(node, "style", None)
    if style == '"':
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if style == "'":
        return "'" + text.replace("'", "''") + "'"
    return text
