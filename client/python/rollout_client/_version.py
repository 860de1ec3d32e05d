"""Package version (pyproject.toml has the same; venv_install_test checks it)."""
__version__ = "0.1.0"
