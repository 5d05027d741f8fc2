"""The kit on other projects' environment hubs: `cua.hubs.openenv` (OpenEnv's spec and clients)."""
