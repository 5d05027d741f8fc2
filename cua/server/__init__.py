"""The cua server: sandboxes over one websocket protocol (see `cua.protocol`)."""
