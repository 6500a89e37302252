"""The web console (``cyclone ui``): server-rendered pages over
:class:`cyclone_py.client.Client`, with the optional extra ``cyclone-py[ui]``
(Starlette, Jinja2, uvicorn). See docs/console.md.

The package's modules: :mod:`.graph` lays a run's DAG out with Graphviz's
``dot``; :mod:`.overview` shapes the overview's numbers and their links,
:mod:`.timeline` a run's timeline of attempts; :mod:`.app` holds the pages,
the actions and the request checks; :mod:`.server` serves them with uvicorn.
"""
