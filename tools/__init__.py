"""Developer tools, run from the repository's root as `.venv/bin/python -m tools.NAME`: the
generators of docs and data the app reads, and the checks to run after an upgrade. The app
never imports them (tests/app/test_layers.py)."""
