"""Client networks on one machine: client subnets in their own network namespaces, joined to the
target through a router namespace, with line speeds (tc HTB) and delay, jitter and loss.

spec parses `--network`, addresses lays out 198.18.0.0/15, shaping writes tc's commands, topology
builds and removes a network, netns enters namespaces, load runs the engine in the subnets,
counters reads the links and the delay line's stats, clean removes what a dead run left. The delay line
that carries packets with delay where the kernel has no netem is a program of its own (crates/delayline,
found through crest.dynamic).
"""
