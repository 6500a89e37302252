"""The release of this package, ``cyclone_py.__version__``: kept here, at the bottom of the imports, so that
any module may name it (the worker tells the registry which release it runs), and read by the build
(pyproject.toml) without importing the package."""

__version__ = "0.34.0"
