"""Small apps the tests start in worker processes (``cyclone_py.worker.main(["--app", "apps.NAME:app", ...])``, with tests/ on PYTHONPATH)."""
