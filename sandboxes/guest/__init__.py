"""The cua guest agent (runs inside desktop containers and VMs) and its host-side client.

The agent files (`agent.py`, `wire.py`, `screen.py`, `queries.py`, `keysyms.py`,
`faults.py`, `a11y.py`) use the standard library only and import nothing from `cua`,
so this folder can be copied into a guest image and run there as
`python3 agent.py --listen ...`. `client.py` is the host side and may import cua.
"""
