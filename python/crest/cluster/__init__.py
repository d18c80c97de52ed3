"""Cluster mode: one mix's clients spread over the nodes of a Ray cluster, started together and merged exactly.

address (what --cluster names), placement (which node runs which clients),
clock (each node's offset from the driver), session (connecting to Ray and
the one teardown), actors (what runs on a node), driver (one mix across the
nodes). Nothing here is imported unless --cluster is given: Ray is optional.
"""
