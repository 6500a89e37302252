"""A run's DAG as SVG: laid out by Graphviz's ``dot``, once per shape of a
definition, and coloured by state when a page is rendered.

The layout depends only on the nodes (name, kind) and their edges, which a
run's steps carry from its definition (each step is a copy of its node), so
every run of one definition shares one cached layout. Node names are user
text: they reach ``dot`` as quoted labels (``&`` and ``\\`` escaped), ``dot``
writes them XML-escaped, and an output that still holds anything active
(``<script``, an ``on...=`` attribute, a ``javascript:`` link) is refused.
The per-run parts (each node's state class, its link, its title) are filled
in at render time into placeholders that carry no user data.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

#: Seconds ``dot`` may take for one layout.
DOT_TIMEOUT = 10.0
#: Layouts kept in memory (one per shape of a definition).
CACHE_SIZE = 256
#: Nodes past which no picture is drawn (the step table still lists them).
MAX_NODES = 500

SHAPES = {"task": 'shape=box style="rounded,filled"', "wait": 'shape=hexagon style=filled',
          "child": 'shape=box3d style=filled'}
_ACTIVE = re.compile(r"<\s*script|\son[a-z]+\s*=|javascript:", re.IGNORECASE)
_NODE_GROUP = re.compile(r'<g id="n(\d+)" class="node[^"]*">')


@dataclass(frozen=True)
class GraphNode:
    """One node as the picture needs it: its name, kind and dependencies."""

    name: str
    kind: str
    deps: Sequence[str]


def _label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;").replace("\n", " ")


def to_dot(nodes: Sequence[GraphNode]) -> str:
    """The DOT text of a DAG: nodes ``n0..`` in the given order, labelled with
    their names (and the kind of a wait or child node)."""
    index = {n.name: i for i, n in enumerate(nodes)}
    lines = [
        "digraph run {",
        '  graph [rankdir=LR bgcolor="transparent" nodesep=0.3 ranksep=0.5];',
        '  node [fontname="DejaVu Sans" fontsize=11 fillcolor="white" height=0.4];',
        '  edge [arrowsize=0.7];',
    ]
    for i, n in enumerate(nodes):
        label = _label(n.name) + ("" if n.kind == "task" else f"\\n({n.kind})")
        shape = SHAPES.get(n.kind, SHAPES["task"])
        lines.append(f'  n{i} [id="n{i}" label="{label}" '
                     f'{shape} URL="__node_{i}__" tooltip="__title_{i}__"];')
    for i, n in enumerate(nodes):
        for dep in n.deps:
            if dep in index:
                lines.append(f"  n{index[dep]} -> n{i};")
    lines.append("}")
    return "\n".join(lines) + "\n"


class Layouts:
    """``dot`` layouts by shape of a definition, kept in an LRU cache.

    ``available`` is false when ``dot`` is not installed; ``svg`` then
    returns None and the page shows the step table alone, with a hint."""

    def __init__(self, dot: str | None = "dot") -> None:
        """``dot``: the program, looked up on PATH; None: draw no pictures."""
        self.dot = None if dot is None else shutil.which(dot)
        self._cache: OrderedDict[str, str | None] = OrderedDict()
        self._lock = threading.Lock()
        self.layouts_made = 0

    @property
    def available(self) -> bool:
        return self.dot is not None

    @staticmethod
    def key(nodes: Sequence[GraphNode]) -> str:
        h = hashlib.sha256()
        for n in nodes:
            h.update(repr((n.name, n.kind, tuple(n.deps))).encode())
        return h.hexdigest()

    def layout(self, nodes: Sequence[GraphNode]) -> str | None:
        """The SVG with placeholders (cached), or None without ``dot`` or past
        ``MAX_NODES``, or when ``dot`` failed."""
        if self.dot is None or not nodes or len(nodes) > MAX_NODES:
            return None
        key = self.key(nodes)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        svg = self._run_dot(to_dot(nodes))
        with self._lock:
            self._cache[key] = svg
            self.layouts_made += 1
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return svg

    def _run_dot(self, source: str) -> str | None:
        assert self.dot is not None
        try:
            done = subprocess.run([self.dot, "-Tsvg"], input=source.encode(), capture_output=True,
                                  timeout=DOT_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        text = done.stdout.decode("utf-8", "replace")
        start = text.find("<svg")
        if done.returncode != 0 or start < 0 or _ACTIVE.search(text):
            return None
        # Drop dot's comments: the picture carries nothing but the drawing.
        return re.sub(r"<!--.*?-->\n?", "", text[start:], flags=re.DOTALL)

    def render(self, nodes: Sequence[GraphNode], states: Mapping[str, str],
               links: Mapping[str, str]) -> Markup | None:
        """The run's picture: the cached layout with each node's state as a
        class (``step-<state>``), its link and its title filled in."""
        svg = self.layout(nodes)
        if svg is None:
            return None
        out = _NODE_GROUP.sub(
            lambda m: '<g id="n{0}" class="node step-{1}" data-node="{2}" data-state="{1}">'.format(
                m[1], escape(states.get(nodes[int(m[1])].name, "unknown")), escape(nodes[int(m[1])].name)),
            svg,
        )
        for i, n in enumerate(nodes):
            out = out.replace(f"__node_{i}__", str(escape(links.get(n.name, f"#step-{i}"))))
            out = out.replace(f"__title_{i}__", str(escape(f"{n.name}: {states.get(n.name, 'unknown')}")))
        return Markup(out)
