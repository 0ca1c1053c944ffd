"""The context engine: tokens, assembly, cache anchors, invariants, ledger, offload store, tiers, policy."""
