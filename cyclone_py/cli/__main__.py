"""``python -m cyclone_py.cli``: the ``cyclone`` command."""

from __future__ import annotations

from cyclone_py.cli import main

main()
