"""`mkb docs import`: index a user's own copy of a DSL's official documentation into what every
agent workspace of that DSL gets (docs/<dsl>/official/ beside our guide docs/<dsl>.md).

We do not redistribute the vendors' documentation; a user who has a copy (a clone of the docs
folder, a saved HTML site, notebooks) imports it. Pages become plain Markdown-ish text (HTML is
stripped to its text, notebooks to their cells, reStructuredText and Markdown kept), and an
INDEX.md lists every page with its title and section headings so the agent can grep its way in.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from . import Error
from .toolchains import check_dsl

SUFFIXES = {".md", ".rst", ".txt", ".html", ".htm", ".ipynb", ".py"}
MAX_PAGE_BYTES = 2_000_000
MAX_TOTAL_BYTES = 40_000_000
SKIP_DIRS = {".git", "_static", "_images", "__pycache__", "node_modules", "_sources", ".ipynb_checkpoints"}


class _Text(HTMLParser):
    """Text of an HTML page: headings as Markdown headings, code blocks fenced, scripts dropped."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "nav", "footer"):
            self.skip += 1
        elif tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "pre":
            self.pre += 1
            self.parts.append("\n```\n")
        elif tag in ("p", "div", "br", "li", "tr", "section"):
            self.parts.append("\n" + ("- " if tag == "li" else ""))

    def handle_endtag(self, tag):
        if tag in ("script", "style", "nav", "footer"):
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.parts.append("\n```\n")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self.skip:
            return
        self.parts.append(data if self.pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        out = "".join(self.parts)
        out = re.sub(r"[ \t]+\n", "\n", out)
        return re.sub(r"\n{3,}", "\n\n", out).strip() + "\n"


def _convert(path: Path) -> tuple[str, str]:
    """(title, text) of one page."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        parser = _Text()
        parser.feed(raw)
        text = parser.text()
        title = html.unescape(parser.title).strip()
    elif suffix == ".ipynb":
        try:
            cells = json.loads(raw).get("cells", [])
        except json.JSONDecodeError as error:
            raise ValueError(f"not a notebook ({error})") from None
        chunks = []
        for cell in cells:
            source = "".join(cell.get("source", []))
            chunks.append(source if cell.get("cell_type") == "markdown" else f"```python\n{source}\n```")
        text = "\n\n".join(chunks) + "\n"
        title = ""
    else:
        text = raw if raw.endswith("\n") else raw + "\n"
        title = ""
    if suffix == ".py":
        text = f"```python\n{text}```\n"
    if not title:
        m = re.search(r"^#\s+(.+)$", text, re.M) or re.search(r"^(.+)\n[=#*]{3,}\s*$", text, re.M)
        title = m.group(1).strip() if m else path.stem.replace("_", " ")
    return title, text


@dataclass
class ImportResult:
    dsl: str
    destination: Path
    pages: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def import_docs(dsl: str, source: Path, guides: Path, replace: bool = True) -> ImportResult:
    """Converts every page under `source` into <guides>/<dsl>/official/ and writes its INDEX.md."""
    dsl = check_dsl(dsl)
    source = Path(source)
    if not source.exists():
        raise Error(f"{source}: no such file or folder")

    def wanted(p: Path) -> bool:
        skipped = set(p.relative_to(source).parts[:-1]) & SKIP_DIRS
        return p.is_file() and p.suffix.lower() in SUFFIXES and not skipped

    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if wanted(p))
    if not files:
        raise Error(f"{source}: no documentation pages found (looked for {', '.join(sorted(SUFFIXES))})")
    destination = Path(guides) / dsl / "official"
    staging = destination.with_name("official.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    result = ImportResult(dsl, destination)
    index = [
        f"# {dsl}: official documentation (imported)\n",
        f"Imported from `{source.name}` with `mkb docs import`. One line per page: its file, title and "
        "section headings. grep -ri through this folder to find an API.\n",
    ]
    for path in files:
        rel = path.relative_to(source) if source.is_dir() else Path(path.name)
        if path.stat().st_size > MAX_PAGE_BYTES:
            result.skipped.append(f"{rel} (larger than {MAX_PAGE_BYTES // 1_000_000} MB)")
            continue
        try:
            title, text = _convert(path)
        except (OSError, ValueError) as error:
            result.skipped.append(f"{rel} ({error})")
            continue
        if not text.strip():
            result.skipped.append(f"{rel} (empty)")
            continue
        if result.bytes + len(text.encode()) > MAX_TOTAL_BYTES:
            result.skipped.append(f"{rel} (over the {MAX_TOTAL_BYTES // 1_000_000} MB total)")
            continue
        out = staging / rel.with_suffix(".md")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f"<!-- imported from {rel} -->\n{text}", encoding="utf-8")
        headings = [h.strip() for h in re.findall(r"^#{2,3}\s+(.+)$", text, re.M)][:12]
        sections = f": {'; '.join(headings)}" if headings else ""
        index.append(f"- `{rel.with_suffix('.md')}` — {title}{sections}")
        result.pages += 1
        result.bytes += len(text.encode())
    if result.pages == 0:
        shutil.rmtree(staging, ignore_errors=True)
        reasons = "; ".join(result.skipped[:5])
        raise Error(f"{source}: none of its {len(files)} files could be imported: {reasons}")
    (staging / "INDEX.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    if destination.exists():
        if not replace:
            shutil.rmtree(staging, ignore_errors=True)
            raise Error(f"{destination}: already exists (use --replace)")
        shutil.rmtree(destination)
    staging.rename(destination)
    return result
