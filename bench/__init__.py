"""phoned's benchmark suite: ``python bench/run.py [--short] [--out DIR] [--only SECTION]``."""
