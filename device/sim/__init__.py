"""A simulated Android phone that speaks the device side of the ADB protocol.

Layers, bottom up (see docs/simulator.md):

- ``wire``/``transport``: ADB packets over TCP, services (shell, exec, sync, tcp:).
- ``shell``: a POSIX-style shell interpreter that dispatches to emulated tools.
- ``registry``: the tool API and the tables of tools and of ``cmd``/``dumpsys``/``svc`` services.
- ``services/*`` and ``ui/*``: models of Android system services and the tools that print
  what real Android prints for each SDK level.
- ``phone_state``: the shared state every tool reads and writes under one lock.
- ``phone``: ``Phone``, that state with every declared service's model wired in.
"""
