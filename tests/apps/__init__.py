"""Small apps the tests start in worker processes (``cyclone worker --app
apps.NAME:app``, with tests/ on PYTHONPATH)."""
