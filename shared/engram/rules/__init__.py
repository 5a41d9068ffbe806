"""Pure, deterministic business rules: no I/O, no clients."""
