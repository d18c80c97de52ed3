"""Experiments: which runs an invocation asks for (plan.py) and 2^k design files (design.py); plans, never measures."""
