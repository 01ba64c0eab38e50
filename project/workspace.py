"""The first import of every program in project/: puts the workspace's root on sys.path and imports its cli.py.

cli.py refuses a Python older than 3.11 in one Chinese line (exit 2) before any import that could fail on it,
so this file, like the top of cli.py, must parse and run on old Pythons. Shares nothing else.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # the folder above project/
import cli  # noqa: E402,F401
