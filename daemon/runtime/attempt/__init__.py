"""The phases of one attempt (``phoned.daemon.runtime.executor.execute_task`` runs them in order).

``records``: what the phases hand on; ``reconcile``, ``admit``, ``act``, ``verify`` (verify
or pause) and ``report``: one module per phase. Each phase takes the record the one before
returned and returns its own; the store transition that ends the attempt is made in
``report`` alone.
"""
