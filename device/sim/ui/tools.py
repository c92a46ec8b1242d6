"""Stub: filled by its owner."""
