"""The workspace's unittest suite: run `python3 -m unittest` from the workspace root."""
