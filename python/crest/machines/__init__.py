"""A lab of simulated machines on one host, as Mininet makes them: each machine a network namespace with
its own address in 198.19.240.0/20 on a switched segment, a cgroup with its share of the CPU and memory,
its own /tmp and cache directory, and an injected clock offset; processes started on it die with it.

plan parses `machines:N,...` and lays out names and addresses (pure), cgroups limits, freezes and kills a
machine's processes, lab builds and removes a lab and starts processes on its machines, clean removes what
a killed run left. See docs/machines.md.
"""

from crest.machines.lab import Lab, Machine
from crest.machines.plan import LabSpec, MachineSpec, parse

__all__ = ["Lab", "LabSpec", "Machine", "MachineSpec", "parse"]
