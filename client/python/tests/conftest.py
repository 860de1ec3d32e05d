"""Lets `/usr/bin/python3 -m pytest client/python/tests` run from a checkout (Bazel sets the
paths itself through the py_library imports)."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for path in (_HERE, os.path.dirname(_HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)
