"""Search across session files: message text, thinking, tool-call arguments, tool output and the
session's name.

Built to stream over many large files: each file is read in blocks of whole lines and every query
word is first looked for in the raw bytes (lower-cased, with the word in its JSON-escaped form), so
files and lines that cannot match are never parsed. Only the lines that hold every word are parsed,
and then the decoded texts of the entry decide. For a file with hits, the light tree index tells
whether each hit is on the active branch (root → leaf) or on an abandoned one, and where that
branch leaves the active path.

Query: words separated by spaces, ``"quoted phrases"`` kept whole; an entry matches when every
word occurs in it (case-insensitive), in any of its searchable texts. The byte prefilter is exact
for ASCII words; a word with other characters is checked on the decoded text only (a writer may
have escaped such characters as ``\\uXXXX``).

The name is the text of a ``session_info`` line, so the same prefilter finds it. Only the name the
session has now counts (an older name it was renamed from does not): its hit, of kind
``SESSION_NAME``, comes first among the session's hits and stands for the session as a whole.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piwork.core.messages import message_text
from piwork.core.session.branch_names import branch_name
from piwork.core.session.format import default_session_dir, is_valid_header, json_loads_bytes
from piwork.core.session.listing import all_session_files, header_in, session_files
from piwork.core.session.reader import read_session_file
from piwork.core.session.tree import SessionTree

BLOCK_SIZE = 16 * 1024 * 1024
SNIPPET_CHARS = 160
DEFAULT_PER_SESSION = 50

SESSION_NAME = "session name"  # the kind of the hit on a session's name

Cancelled = Callable[[], bool]


def _never() -> bool:
    return False


@dataclass(frozen=True)
class SearchQuery:
    """Parsed query: lower-case words, and the byte patterns used to prefilter raw lines."""

    text: str
    words: tuple[str, ...]
    patterns: tuple[bytes, ...]  # lower-cased JSON-escaped ASCII words (others are not prefiltered)

    @classmethod
    def parse(cls, text: str) -> SearchQuery:
        words: list[str] = []
        for match in re.finditer(r'"([^"]+)"|(\S+)', text):
            word = (match.group(1) or match.group(2) or "").lower()
            if word.strip() and word not in words:
                words.append(word)
        patterns = []
        for word in words:
            if word.isascii():
                escaped = json.dumps(word)[1:-1].encode("ascii")
                patterns.append(escaped)
        # The rarest-looking (longest) pattern first: it rules out most lines.
        patterns.sort(key=len, reverse=True)
        return cls(text, tuple(words), tuple(patterns))

    @property
    def empty(self) -> bool:
        return not self.words

    def matches(self, texts: Iterable[str]) -> bool:
        return self.matches_lowered("\n".join(texts).lower())

    def matches_lowered(self, lowered: str) -> bool:
        return all(word in lowered for word in self.words)


@dataclass(frozen=True)
class SearchHit:
    """One entry that matches, with where in it and which branch it is on."""

    entry_id: str
    # "user", "assistant", "thinking", "tool call", "tool output", "bash", "summary", "custom", SESSION_NAME
    kind: str
    detail: str  # the tool's name, the custom type...; "" when there is none
    snippet: str
    spans: tuple[tuple[int, int], ...]  # where the words occur in ``snippet``
    timestamp: str
    on_active_path: bool = True
    branch_point: str | None = None  # for an abandoned branch: the active-path entry it leaves from
    branch_name: str | None = None  # for an abandoned branch: what the tree calls it (branch_names.py)


@dataclass
class SessionHits:
    """The hits of one session file (in file order), at most the per-session limit of them."""

    path: Path
    session_id: str
    cwd: str
    name: str | None
    hits: list[SearchHit] = field(default_factory=list)
    total: int = 0  # matching entries, including those past the limit
    first_message: str = ""  # the first user message (a title for an unnamed session)
    more: bool = False  # the limit was reached: later entries may match too (they were not read)


# ---------------------------------------------------------------------- texts of an entry
def _block_texts(content: Any) -> Iterator[tuple[str, str, str]]:
    """``(kind, detail, text)`` of the blocks of a message content (string content is one text)."""
    if isinstance(content, str):
        yield "text", "", content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            yield "text", "", block["text"]
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            yield "thinking", "", block["thinking"]
        elif kind == "toolCall":
            arguments = block.get("arguments")
            name = str(block.get("name", ""))
            text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            yield "tool call", name, text


def entry_texts(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every searchable text of a session entry as ``(kind, detail, text)``."""
    kind = entry.get("type")
    out: list[tuple[str, str, str]] = []
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return out
        role = message.get("role")
        if role == "user":
            out += [("user", "", t) for k, _d, t in _block_texts(message.get("content")) if k == "text"]
        elif role == "assistant":
            for block_kind, detail, text in _block_texts(message.get("content")):
                out.append(("assistant" if block_kind == "text" else block_kind, detail, text))
        elif role == "toolResult":
            name = str(message.get("toolName", ""))
            out += [
                ("tool output", name, t) for k, _d, t in _block_texts(message.get("content")) if k == "text"
            ]
        elif role == "bashExecution":
            for key in ("command", "output"):
                value = message.get(key)
                if isinstance(value, str):
                    out.append(("bash", key, value))
        elif role in ("custom", "branchSummary", "compactionSummary"):
            out += [("custom", "", t) for k, _d, t in _block_texts(message.get("content")) if k == "text"]
    elif kind in ("compaction", "branch_summary"):
        summary = entry.get("summary")
        if isinstance(summary, str):
            out.append(("summary", "compaction" if kind == "compaction" else "branch", summary))
    elif kind == "custom_message":
        detail = str(entry.get("customType", ""))
        out += [("custom", detail, t) for k, _d, t in _block_texts(entry.get("content")) if k == "text"]
    elif kind == "session_info":
        session_name = _entry_name(entry)
        if session_name:
            out.append((SESSION_NAME, "", session_name))
    return out


def make_snippet(
    text: str, words: tuple[str, ...], width: int = SNIPPET_CHARS
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A one-line excerpt of ``text`` around the first word found, and where the words are in it."""
    if len(text) > 8 * width:  # a long text: flatten only a window around the first word found
        lowered_text = text.lower()
        found_at = [p for p in (lowered_text.find(w) for w in words) if p >= 0]
        at = min(found_at) if found_at else 0
        cut = max(0, at - 2 * width)
        window = text[cut : at + 4 * width]
        snippet, shown = make_snippet(window, words, width)
        if cut > 0 and not snippet.startswith("…"):
            snippet = "…" + snippet
            shown = tuple((a + 1, b + 1) for a, b in shown)
        if at + 4 * width < len(text) and not snippet.endswith("…"):
            snippet += "…"
        return snippet, shown
    flat = " ".join(text.split())
    lowered = flat.lower()
    found = [p for p in (lowered.find(w) for w in words) if p >= 0]
    first = min(found) if found else 0
    start = max(0, first - width // 3)
    end = min(len(flat), start + width)
    start = max(0, min(start, end - width))
    excerpt = flat[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    snippet = prefix + excerpt + suffix
    low = snippet.lower()
    spans: list[tuple[int, int]] = []
    for word in words:
        position = low.find(word)
        while position >= 0:
            spans.append((position, position + len(word)))
            position = low.find(word, position + len(word))
    return snippet, tuple(sorted(spans))


def _hit(entry: dict[str, Any], query: SearchQuery) -> SearchHit | None:
    entry_id = entry.get("id")
    if not isinstance(entry_id, str):
        return None
    texts = entry_texts(entry)
    if not texts:
        return None
    lowered = [t.lower() for _k, _d, t in texts]
    if not query.matches_lowered("\n".join(lowered)):
        return None
    # The excerpt comes from the text that holds the most words (message text wins ties).
    held = [sum(1 for w in query.words if w in low) for low in lowered]
    best = texts[held.index(max(held))]
    snippet, spans = make_snippet(best[2], query.words)
    stamp = entry.get("timestamp")
    return SearchHit(entry_id, best[0], best[1], snippet, spans, stamp if isinstance(stamp, str) else "")


# ---------------------------------------------------------------------- one file
def _blocks(path: Path, block_size: int) -> Iterator[bytes]:
    """The file in pieces of whole lines (the last piece may lack its newline)."""
    with open(path, "rb", buffering=0) as handle:
        carry = b""
        while chunk := handle.read(block_size):
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            carry = data[cut:]
            yield data[:cut]
        if carry:
            yield carry


def _matching_lines(data: bytes, query: SearchQuery) -> Iterator[bytes]:
    """Lines of ``data`` whose lower-cased bytes hold every prefilter pattern."""
    lowered = data.lower()
    patterns = query.patterns
    if not patterns:  # nothing to prefilter on: every line is a candidate
        yield from (line for line in data.split(b"\n") if line.strip())
        return
    for pattern in patterns:
        if pattern not in lowered:
            return
    first, rest = patterns[0], patterns[1:]
    position = lowered.find(first)
    while position >= 0:
        start = lowered.rfind(b"\n", 0, position) + 1
        end = lowered.find(b"\n", position)
        if end < 0:
            end = len(lowered)
        line = lowered[start:end]
        if all(p in line for p in rest):
            yield data[start:end]
        position = lowered.find(first, end)


Locator = Callable[[str], tuple[bool, str | None]]

# Pi and piwork write every entry as {"type":…,"id":…,"parentId":…,…} on one line (the first line is
# the header, so every entry line follows a newline). The pattern matches at every newline: the ids
# when the line starts that way, two empty groups otherwise (a line written another way, a blank line).
_LINK = re.compile(rb'\n(?:\{"type":"(?!session")[a-z_]+","id":"([^"\\]+)","parentId":(?:null|"([^"\\]+)")|)')


def _links_locator(data: bytes) -> Locator | None:
    """Branch facts from the ``id``/``parentId`` at the front of each line of a whole file held in
    memory; ``None`` when some entry line is written another way (the full reader decides then)."""
    links = _LINK.findall(data)
    if data.endswith(b"\n") and links and links[-1] == (b"", b""):
        links.pop()  # the newline ending the last line starts no line
    if not links or (b"", b"") in links:  # a line written another way (or blank): not sure
        return None
    parent: dict[bytes, bytes] = dict(links)  # ids stay bytes: only the hits' ids are looked up
    active: set[bytes] = set()
    node: bytes = links[-1][0]
    while node and node not in active:
        active.add(node)
        node = parent.get(node, b"")

    def locate(entry_id: str) -> tuple[bool, str | None]:
        key = entry_id.encode()
        if key in active:
            return True, None
        seen: set[bytes] = set()
        up = parent.get(key, b"")
        while up and up not in seen:
            if up in active:
                return False, up.decode()
            seen.add(up)
            up = parent.get(up, b"")
        return False, None

    return locate


def _branch_info(path: Path) -> Locator:
    """For entry ids of ``path``: (on the active path, the active-path entry its branch leaves from)."""
    loaded = read_session_file(path)
    tree = SessionTree(loaded.header, loaded.records)
    active = {record.id for record in tree.path()}

    def locate(entry_id: str) -> tuple[bool, str | None]:
        if entry_id in active:
            return True, None
        record = tree.record(entry_id)
        while record is not None:
            parent = record.parent_id
            if parent in active:
                return False, str(parent)
            record = tree.record(parent) if isinstance(parent, str) else None
        return False, None  # a separate root

    return locate


def _branch_names(path: Path, entry_ids: list[str]) -> dict[str, str]:
    """What the tree calls the abandoned branch of each of ``entry_ids`` (the file is read again, only
    for a session with hits off its active path)."""
    if not entry_ids:
        return {}
    loaded = read_session_file(path, keep_bodies=True)
    tree = SessionTree(loaded.header, loaded.records)
    active = {record.id for record in tree.path()}
    names = {entry_id: branch_name(tree, entry_id, active, entry_texts) for entry_id in entry_ids}
    return {entry_id: name for entry_id, name in names.items() if name}


def search_file(
    path: Path,
    query: SearchQuery,
    *,
    limit: int = DEFAULT_PER_SESSION,
    cancelled: Cancelled = _never,
    block_size: int = BLOCK_SIZE,
) -> SessionHits | None:
    """The hits of one session file, or ``None`` when it has none (or is not a readable session)."""
    header: dict[str, Any] | None = None
    hits: list[SearchHit] = []
    total = 0
    more = False
    naming: dict[str, Any] | None = None  # the session_info entry that sets the name
    name_may_match = False  # a session_info line holds every word's bytes
    single_block: bytes | None = None
    try:
        for number, data in enumerate(_blocks(path, block_size)):
            if cancelled():
                return None
            if number == 0:
                start = len(data) - len(data.lstrip())  # the header is the first line that is not blank
                end = data.find(b"\n", start)
                header = header_in(data[start : end if end >= 0 else len(data)])
                if header is None or not is_valid_header(header):
                    return None
                single_block = data
            else:
                if single_block is not None:  # the first block's name, looked for once it is not the only one
                    naming = _name_in(single_block, naming)
                single_block = None
            for line in _matching_lines(data, query):
                if len(hits) >= limit:  # enough to show: the rest of the file is not read for hits
                    more = True
                    break
                if _SESSION_INFO in line:  # a name: only the one the session has at the end counts
                    name_may_match = True
                    continue
                try:
                    entry = json_loads_bytes(line)
                except ValueError:
                    continue
                if not isinstance(entry, dict) or entry.get("type") == "session":
                    continue
                hit = _hit(entry, query)
                if hit is None:
                    continue
                total += 1
                hits.append(hit)
            if single_block is None:
                naming = _name_in(data, naming)
    except OSError:
        return None
    if not (hits or name_may_match) or header is None:
        return None
    if single_block is not None:  # a file of one block: its name matters only now that it may show
        naming = _name_in(single_block, naming)
    name_hit = _hit(naming, query) if naming is not None else None
    if not hits and name_hit is None:
        return None
    name = _entry_name(naming)
    try:
        locate = (single_block is not None and _links_locator(single_block)) or _branch_info(path)
    except OSError:
        return None
    located = [(h, *locate(h.entry_id)) for h in hits]
    try:
        names = _branch_names(path, [h.entry_id for h, on_active, _point in located if not on_active])
    except OSError:
        return None
    placed = [
        SearchHit(
            h.entry_id, h.kind, h.detail, h.snippet, h.spans, h.timestamp, on_active, point,
            names.get(h.entry_id),
        )
        for h, on_active, point in located
    ]  # fmt: skip
    if name_hit is not None:  # the session itself: first, and on no branch in particular
        placed.insert(0, name_hit)
        total += 1
    cwd = header.get("cwd")
    first = "" if name else _first_user_text(path, single_block)
    return SessionHits(
        path, str(header["id"]), cwd if isinstance(cwd, str) else "", name, placed, total, first, more
    )


# Byte patterns that pick the lines worth parsing (the parsed line then decides). Pi and piwork write
# compact JSON, but a line with spaces around its colons is valid JSON too and must be found as well.
_USER_ROLE = re.compile(rb'"role"[ \t\r]*:[ \t\r]*"user"')
_SESSION_INFO = b'"session_info"'  # the value alone: whatever the spacing before it


def _first_user_text(path: Path, data: bytes | None = None, limit: int = 1024 * 1024) -> str:
    """The text of the first user message within the first ``limit`` bytes ("" when there is none);
    ``data``: the file's bytes when they are already in memory."""
    if data is None:
        try:
            with open(path, "rb") as handle:
                data = handle.read(limit)
        except OSError:
            return ""
    found = _USER_ROLE.search(data)
    while found is not None:
        at = found.start()
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        if end < 0:
            return ""
        try:
            entry = json_loads_bytes(data[start:end])
        except ValueError:
            entry = None
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and message.get("role") == "user":
            return " ".join(message_text(message, " ").split())
        found = _USER_ROLE.search(data, end)
    return ""


def _name_in(data: bytes, naming: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``session_info`` entry whose name holds after ``data`` (its last one that sets a name), or
    ``naming`` when it has none."""
    if _SESSION_INFO not in data:
        return naming
    return _last_naming(data) or naming


def _last_naming(data: bytes) -> dict[str, Any] | None:
    """The entry of the last ``session_info`` line of a block, if it sets a name."""
    naming = None
    for line in data.split(b"\n"):
        if _SESSION_INFO not in line:
            continue
        try:
            entry = json_loads_bytes(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            naming = entry if _entry_name(entry) else None
    return naming


def _entry_name(entry: dict[str, Any] | None) -> str | None:
    value = entry.get("name") if entry is not None else None
    return value.strip() or None if isinstance(value, str) else None


# ---------------------------------------------------------------------- many files
def newest_first(files: Iterable[Path]) -> list[Path]:
    """``files`` ordered by modification time, newest first (unreadable ones last)."""

    def mtime(path: Path) -> float:
        try:
            return os.stat(path).st_mtime
        except OSError:
            return 0.0

    return sorted(files, key=mtime, reverse=True)


def files_to_search(
    cwd: str,
    agent_dir: str | os.PathLike[str],
    *,
    everywhere: bool = False,
    extra_folders: Iterable[Path] = (),
) -> list[Path]:
    """The session files of the project of ``cwd`` (or of every project), newest first.

    ``extra_folders`` adds folders that hold this project's sessions elsewhere (a custom session
    folder, the open session's folder)."""
    files = (
        all_session_files(agent_dir=agent_dir)
        if everywhere
        else session_files(default_session_dir(cwd, agent_dir))
    )
    seen = {os.path.realpath(f) for f in files}
    for folder in extra_folders:
        for path in session_files(folder):
            if os.path.realpath(path) not in seen:
                seen.add(os.path.realpath(path))
                files.append(path)
    return newest_first(files)


def search_sessions(
    files: Iterable[Path],
    query: SearchQuery | str,
    *,
    per_session: int = DEFAULT_PER_SESSION,
    cancelled: Cancelled = _never,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[SessionHits]:
    """Yield the hits of each file of ``files`` that has any, in the order given, as they are found.

    Stops early (yielding nothing more) once ``cancelled()`` is true; ``progress(done, total)`` is
    called after each file.
    """
    parsed = SearchQuery.parse(query) if isinstance(query, str) else query
    paths = list(files)
    if parsed.empty:
        return
    for done, path in enumerate(paths, start=1):
        if cancelled():
            return
        result = search_file(path, parsed, limit=per_session, cancelled=cancelled)
        if progress is not None:
            progress(done, len(paths))
        if result is not None and not cancelled():
            yield result
