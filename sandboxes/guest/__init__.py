"""The cua guest agent (runs inside desktop containers and VMs) and its host side.

The agent files use the standard library only and import nothing from `cua`, so this
folder can be copied into a guest image and run there as `python3 agent.py --listen ...`:
`agent.py` (the entry point), `core.py` (the agent's state), `xsession.py` (Xvfb, the
window manager, the session bus), `ops_screen.py` and `ops_apps.py` (the operations),
`serving.py` (the operation table and the listeners), `wire.py`; the display in
`screen.py` with `inputs.py`, `imaging.py`, `settle.py`, `windows.py` and `tools.py`;
`queries.py`, `a11y.py`, `keysyms.py`, `faults.py`. The host side may import cua:
`client.py` (the wire's asyncio client) and `sandbox.py` (`GuestSandbox`, the
act/observe/query implementation the desktop and VM kinds share).
"""
