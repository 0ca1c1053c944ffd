"""The context engine: tokens, the request's layers and cache breakpoints, offload, the tiers, the policy.

May import: core, context.
"""
