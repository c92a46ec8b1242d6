"""``phoned serve``: the REST control plane over any ``Store``, and its wire format.

Modules: ``wire`` (records <-> JSON, errors by name; imported by the HTTP client too, so it
needs nothing beyond the lifecycle), ``auth`` (bearer tokens and roles), ``settings``,
``wakeup`` (long-poll notification), ``reports`` (dedupe of redelivered daemon reports),
``app`` and the ``routes_*`` routers. Importing this package imports no web framework.
"""
