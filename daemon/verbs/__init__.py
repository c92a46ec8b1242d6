"""The ``phoned`` verbs, one module per group; ``daemon.cli`` registers them."""
