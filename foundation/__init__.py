"""What every layer of phoned stands on and that knows nothing of phones or tasks: files
that stay private (``private_files``), threads named for the operating system
(``threads``), canonical JSON and its digest (``digest``). The daemon and the device layer
both import these; this package imports neither (``lint-imports``)."""
