"""The cua guest agent (runs inside desktop containers and VMs) and its host side.

The agent files (`agent.py`, `wire.py`, `screen.py`, `queries.py`, `keysyms.py`,
`faults.py`, `a11y.py`) use the standard library only and import nothing from `cua`,
so this folder can be copied into a guest image and run there as
`python3 agent.py --listen ...`. The host side may import cua: `client.py` (the wire's
asyncio client) and `sandbox.py` (`GuestSandbox`, the act/observe/query implementation
the desktop and VM kinds share).
"""
