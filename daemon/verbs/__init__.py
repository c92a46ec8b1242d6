"""The ``phoned`` verbs, one module per group; ``phoned.daemon.cli`` registers them."""
