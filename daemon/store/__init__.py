"""Task stores: the ``Store`` protocol and its SQLite implementation."""
