"""Task stores: the protocols (``protocol.py``: ``WorkerStore``, ``PlannerStore``, ``Store``),
the SQL stores (SQLite, PostgreSQL), a daemons HttpStore and the planners
``PlaneClient`` for a control plane; ``open.py`` opens the one a queue URL names."""
