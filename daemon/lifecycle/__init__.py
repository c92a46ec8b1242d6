"""The task lifecycle: contract, states, transition table, errors, records.

Pure data and rules, no I/O. The stores in ``phoned.daemon.store`` enforce these rules in SQL.
"""
