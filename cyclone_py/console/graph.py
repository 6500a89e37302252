"""A run's DAG as SVG: laid out by Graphviz's ``dot``, once per shape of a
definition, and coloured by state when a page is rendered.

The layout depends only on the nodes (name, kind, condition) and their
edges, which a run's steps carry from its definition (each step is a copy of
its node), so every run of one definition shares one cached layout. A node's
condition (SPEC 16's ``when``/``unless``, :func:`condition_label`) labels the
edges into it (a root node's, its own label).

**User text is never substituted into.** Node names and conditions reach
``dot`` only as quoted labels (``&``, ``\\`` and ``"`` escaped), and ``dot``'s SVG is parsed
(``xml.etree``: elements, not text) and compiled once into a list of literal
pieces and *slots*. Every piece is serialized by this module with every text
and attribute escaped, and only the whitelisted elements and attributes a
``dot`` drawing uses are kept (an SVG with anything else, a script, an
``on...`` attribute, a link, is refused). The per-run parts (each node's state
class, its link, its title) are slots: each is a node's index and what to put
there, and rendering is a join of the pieces with each slot's value escaped.
Nothing ever searches the SVG text for a marker, so a node named
``__node_1__`` is drawn with its own name, linked to its own step.

**Bounded time.** ``dot`` is super-linear in the crossings of a graph (a
random 500-node graph with 3 dependencies a node took 15.7 s here; the
engine allows 1,000 nodes): a picture is drawn for at most ``MAX_NODES``
nodes and ``MAX_EDGES`` edges, ``dot`` runs on a background thread
(``WORKERS`` at a time, ``MAX_PENDING`` shapes queued), a page waits for it at
most ``PAGE_WAIT`` seconds (then says the picture is being laid out), and
``dot`` is killed after ``DOT_TIMEOUT`` seconds (the shape is then remembered
as one without a picture). The cache is bounded in entries and in characters.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import threading
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

#: Seconds ``dot`` may take for one layout (then it is killed).
DOT_TIMEOUT = 10.0
#: Seconds a page waits for a layout being made before it renders without it.
PAGE_WAIT = 1.0
#: ``dot`` processes at once, and shapes waiting for one.
WORKERS = 2
MAX_PENDING = 16
#: Layouts kept in memory (one per shape of a definition), and their characters in all.
CACHE_SIZE = 256
CACHE_CHARS = 32 * 1024 * 1024
#: Nodes and edges past which no picture is drawn (the step table still lists them):
#: a picture that large is unreadable, its SVG over half a megabyte, and ``dot``'s time unbounded.
MAX_NODES = 300
MAX_EDGES = 600

SHAPES = {"task": 'shape=box style="rounded,filled"', "wait": 'shape=hexagon style=filled',
          "child": 'shape=box3d style=filled', "sleep": 'shape=ellipse style=filled',
          "map": 'shape=folder style=filled', "event": 'shape=cds style=filled',
          "await": 'shape=octagon style=filled'}
#: Characters of a condition drawn on an edge (then cut, with an ellipsis).
CONDITION_CHARS = 40

_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
#: The elements and attributes a ``dot -Tsvg`` drawing of these graphs is made of.
_ELEMENTS = frozenset({"svg", "g", "title", "text", "path", "polygon", "polyline", "ellipse"})
_ATTRIBUTES = frozenset({
    "width", "height", "viewBox", "id", "class", "transform", "fill", "stroke", "stroke-width",
    "stroke-dasharray", "d", "points", "cx", "cy", "rx", "ry", "x", "y", "text-anchor", "font-family",
    "font-size", "font-weight", "font-style", "fill-opacity", "stroke-opacity",
})


@dataclass(frozen=True)
class GraphNode:
    """One node as the picture needs it: its name, kind and dependencies, and
    its condition as drawn on the edges into it (:func:`condition_label`;
    empty for none)."""

    name: str
    kind: str
    deps: Sequence[str]
    condition: str = ""


def _leaves(value: Any, path: str) -> list[str]:
    """``{"input": {"go": true}}`` -> ``["input.go = true"]``: each value a
    containment object holds, by its dot path; compact JSON past the objects."""
    if isinstance(value, dict) and value:
        return [leaf for key, inner in value.items() for leaf in _leaves(inner, f"{path}.{key}" if path else str(key))]
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return [f"{path} = {text}" if path else text]


def condition_label(spec: Any) -> str:
    """A node's ``when`` and ``unless`` (its step's ``spec``, SPEC 16) as one
    line: ``when input.go = true; unless deps.check.skip = true``, cut to
    ``CONDITION_CHARS``; empty when it has neither."""
    if not isinstance(spec, dict):
        return ""
    parts = [f"{word} {', '.join(_leaves(spec[word], ''))}" for word in ("when", "unless") if word in spec]
    line = "; ".join(parts)
    return line if len(line) <= CONDITION_CHARS else line[:CONDITION_CHARS - 1] + "…"


@dataclass(frozen=True)
class Picture:
    """What a run page shows for its DAG: ``svg``, or why there is none
    (``status``: ``drawn``, ``no-dot``, ``too-large``, ``pending``, ``failed``;
    ``detail``: one line for the page)."""

    status: str
    svg: Markup | None = None
    detail: str = ""


#: A compiled layout: literal pieces, and slots ``(what, node index)``.
Slot = tuple[str, int]
Layout = tuple[str | Slot, ...]


def _label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;").replace("\n", " ")


def edges(nodes: Sequence[GraphNode]) -> int:
    names = {n.name for n in nodes}
    return sum(1 for n in nodes for d in n.deps if d in names)


def to_dot(nodes: Sequence[GraphNode]) -> str:
    """The DOT text of a DAG: nodes ``n0..`` in the given order (``id`` n0..,
    which the SVG keeps), labelled with their names (and the kind of a node
    that is no task); the edges into a node with a condition labelled with it
    (a node without edges into it carries it in its own label). No URL,
    tooltip or other per-run attribute: those are slots."""
    index = {n.name: i for i, n in enumerate(nodes)}
    lines = [
        "digraph run {",
        '  graph [rankdir=LR bgcolor="transparent" nodesep=0.3 ranksep=0.5];',
        '  node [fontname="DejaVu Sans" fontsize=11 fillcolor="white" height=0.4];',
        '  edge [arrowsize=0.7];',
    ]
    for i, n in enumerate(nodes):
        label = _label(n.name) + ("" if n.kind == "task" else f"\\n({n.kind})")
        if n.condition and not any(dep in index for dep in n.deps):
            label += "\\n" + _label(n.condition)
        shape = SHAPES.get(n.kind, SHAPES["task"])
        lines.append(f'  n{i} [id="n{i}" label="{label}" {shape}];')
    for i, n in enumerate(nodes):
        edge = f' [label="{_label(n.condition)}" fontsize=9 fontcolor="#556677"]' if n.condition else ""
        for dep in n.deps:
            if dep in index:
                lines.append(f"  n{index[dep]} -> n{i}{edge};")
    lines.append("}")
    return "\n".join(lines) + "\n"


class Refused(ValueError):
    """An SVG with something a ``dot`` drawing does not hold."""


def _local(tag: str) -> tuple[str, str]:
    """``{namespace}name`` -> (namespace, name)."""
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return ns, name
    return "", tag


def _attributes(element: ET.Element, skip: frozenset[str] = frozenset()) -> str:
    out = []
    for key, value in element.attrib.items():
        ns, name = _local(key)
        if ns or name not in _ATTRIBUTES:
            raise Refused(f"attribute {name!r}")
        if name not in skip:
            out.append(f' {name}="{escape(value)}"')
    return "".join(out)


def compile_svg(svg: str, nodes: Sequence[GraphNode]) -> Layout:
    """``dot``'s SVG as literal pieces and slots; :class:`Refused` when it
    holds an element or attribute outside the whitelist (or is not XML).

    A node's group ``<g id="nI" class="node">`` becomes
    ``<g id="nI" class="node step-STATE" data-node="NAME" data-state="STATE">
    <title>TITLE</title><a xlink:href="LINK" xlink:title="TITLE">...</a></g>``
    where STATE, TITLE and LINK are slots and NAME is the node's name
    (escaped: it is part of the shape)."""
    start = svg.find("<svg")
    if start < 0:
        raise Refused("no <svg>")
    try:
        root = ET.fromstring(svg[start:])  # from <svg: no DOCTYPE, no entity declarations
    except ET.ParseError as exc:
        raise Refused(f"not XML: {exc}") from None
    parts: list[str | Slot] = []

    def emit(piece: str | Slot) -> None:
        if isinstance(piece, str) and parts and isinstance(parts[-1], str):
            parts[-1] += piece
        else:
            parts.append(piece)

    def walk(element: ET.Element) -> None:
        ns, name = _local(element.tag)
        if ns != _SVG or name not in _ELEMENTS:
            raise Refused(f"element {name!r}")
        node = _node_index(element, name, len(nodes))
        if name == "svg":
            emit(f'<svg xmlns="{_SVG}" xmlns:xlink="{_XLINK}"{_attributes(element)}>')
        elif node is not None:
            emit(f'<g id="n{node}"{_attributes(element, frozenset({"id", "class"}))} class="node step-')
            emit(("state", node))
            emit(f'" data-node="{escape(nodes[node].name)}" data-state="')
            emit(("state", node))
            emit('"><title>')
            emit(("title", node))
            emit('</title><a xlink:href="')
            emit(("link", node))
            emit('" xlink:title="')
            emit(("title", node))
            emit('">')
        elif not element.text and len(element) == 0:
            emit(f"<{name}{_attributes(element)}/>{escape(element.tail or '')}")
            return
        else:
            emit(f"<{name}{_attributes(element)}>")
        emit(str(escape(element.text or "")) if node is None else "")
        for child in element:
            if node is not None and _local(child.tag) == (_SVG, "title"):
                continue  # the node's title is a slot (dot's says only "nI")
            walk(child)
        emit("</a></g>" if node is not None else f"</{name}>")
        emit(str(escape(element.tail or "")))

    walk(root)
    if sum(1 for p in parts if isinstance(p, tuple) and p[0] == "link") != len(nodes):
        raise Refused("not one group for each node")
    return tuple(parts)


def _node_index(element: ET.Element, name: str, count: int) -> int | None:
    """The index of a node's group (``<g id="nI" class="node">``), else None."""
    if name != "g" or element.get("class") != "node":
        return None
    ident = element.get("id", "")
    if not (ident.startswith("n") and ident[1:].isdigit() and int(ident[1:]) < count):
        raise Refused(f"a node group with id {ident[:20]!r}")
    return int(ident[1:])


def _size(made: Layout | str) -> int:
    """The characters a cache entry holds (a slot counted as 8)."""
    return len(made) if isinstance(made, str) else sum(len(p) if isinstance(p, str) else 8 for p in made)


class Layouts:
    """``dot`` layouts by shape of a definition, kept in an LRU cache, made on
    background threads.

    ``available`` is false when ``dot`` is not installed; ``picture`` then
    says ``no-dot`` and the page shows the step table alone, with a hint."""

    def __init__(self, dot: str | None = "dot", *, timeout: float = DOT_TIMEOUT, wait: float = PAGE_WAIT,
                 max_nodes: int = MAX_NODES, max_edges: int = MAX_EDGES) -> None:
        """``dot``: the program, looked up on PATH; None: draw no pictures."""
        self.dot = None if dot is None else shutil.which(dot)
        self.timeout = timeout
        self.wait = wait
        self.max_nodes = max_nodes
        self.max_edges = max_edges
        self._cache: OrderedDict[str, Layout | str] = OrderedDict()  # a layout, or why there is none
        self._chars = 0
        self._pending: dict[str, Future[Layout | str]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.layouts_made = 0

    @property
    def available(self) -> bool:
        return self.dot is not None

    @staticmethod
    def key(nodes: Sequence[GraphNode]) -> str:
        h = hashlib.sha256()
        for n in nodes:
            h.update(repr((n.name, n.kind, tuple(n.deps), n.condition)).encode())
        return h.hexdigest()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def layout(self, nodes: Sequence[GraphNode]) -> Layout | Picture:
        """The compiled layout of ``nodes`` (cached), or the :class:`Picture`
        that says why there is none (yet)."""
        if self.dot is None:
            return Picture("no-dot")
        if not nodes:
            return Picture("failed", detail="a run without steps")
        n_edges = edges(nodes)
        if len(nodes) > self.max_nodes or n_edges > self.max_edges:
            return Picture("too-large", detail=f"{len(nodes):,} nodes and {n_edges:,} edges: a picture is drawn "
                                               f"for at most {self.max_nodes} nodes and {self.max_edges} edges")
        key = self.key(nodes)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                found = self._cache[key]
                return found if isinstance(found, tuple) else Picture("failed", detail=found)
            future = self._pending.get(key)
            if future is None:
                if len(self._pending) >= MAX_PENDING:
                    return Picture("pending", detail="dot is busy with other pictures: reload in a moment")
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="cyclone-ui-dot")
                future = self._pool.submit(self._make, key, list(nodes))
                self._pending[key] = future
        try:
            made = future.result(timeout=self.wait)
        except FutureTimeout:
            return Picture("pending", detail="the picture is being laid out: reload in a moment")
        return made if isinstance(made, tuple) else Picture("failed", detail=made)

    def _make(self, key: str, nodes: list[GraphNode]) -> Layout | str:
        try:
            made = self._run_dot(to_dot(nodes), nodes)
        except Exception as exc:  # noqa: BLE001  (a layout that fails is a page without a picture)
            made = f"the picture could not be drawn: {exc}"
        with self._lock:
            self._pending.pop(key, None)
            self._cache[key] = made
            self._chars += _size(made)
            self.layouts_made += 1
            while len(self._cache) > CACHE_SIZE or (self._chars > CACHE_CHARS and len(self._cache) > 1):
                _, old = self._cache.popitem(last=False)
                self._chars -= _size(old)
        return made

    def _run_dot(self, source: str, nodes: Sequence[GraphNode]) -> Layout | str:
        assert self.dot is not None
        try:
            done = subprocess.run([self.dot, "-Tsvg"], input=source.encode(), capture_output=True,
                                  timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            return f"dot took more than {self.timeout:g} s to lay this graph out"
        except OSError as exc:
            return f"dot could not run: {exc}"
        if done.returncode != 0:
            return f"dot failed (exit {done.returncode})"
        try:
            return compile_svg(done.stdout.decode("utf-8", "replace"), nodes)
        except Refused as exc:
            return f"dot's drawing was refused ({exc})"

    def picture(self, nodes: Sequence[GraphNode], states: Mapping[str, str],
                links: Mapping[str, str], notes: Mapping[str, str] | None = None) -> Picture:
        """The run's picture: the layout with each node's state as a class
        (``step-<state>``) and ``data-state``, its link and its title
        (``name: state``, then the node's note if any: a map's item counts)
        put in its slots, each escaped."""
        notes = notes or {}
        layout = self.layout(nodes)
        if isinstance(layout, Picture):
            return layout
        values = {"state": [str(escape(states.get(n.name, "unknown"))) for n in nodes],
                  "link": [str(escape(links.get(n.name, f"#step-{i}"))) for i, n in enumerate(nodes)],
                  "title": [str(escape(f"{n.name}: {states.get(n.name, 'unknown')}"
                                       + (f" ({notes[n.name]})" if n.name in notes else ""))) for n in nodes]}
        out = [p if isinstance(p, str) else values[p[0]][p[1]] for p in layout]
        return Picture("drawn", Markup("".join(out)))

    def render(self, nodes: Sequence[GraphNode], states: Mapping[str, str],
               links: Mapping[str, str]) -> Markup | None:
        """:meth:`picture`'s SVG, or None."""
        return self.picture(nodes, states, links).svg
