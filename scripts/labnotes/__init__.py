"""The lab notes (shared/seeds/000-004) reproduced under their own conditions.

scripts/experiments.py runs them; one module per note (n000 … n004), the notes' own numbers
in notes.py, loop devices and settings that must be undone in machine.py, and the helpers
they share (running iotrace and strace, tables, plots) in common.py.
"""
