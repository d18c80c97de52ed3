"""Client networks on one machine: client subnets in their own network namespaces, joined to the
target through a router namespace, with line speeds (tc HTB) and delay, jitter and loss.

spec parses `--network`, addresses lays out 198.18.0.0/15, shaping writes tc's commands, topology
builds and removes a network, netns enters namespaces, load runs the engine in the subnets,
counters reads the links, delayline/relay carry packets with delay where the kernel has no netem,
clean removes what a dead run left.
"""
