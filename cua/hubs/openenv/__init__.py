"""cua as an OpenEnv environment: `cua openenv serve`, OpenEnv's spec over cua's episodes.

- `models`: the typed action, observation and state (screenshots as base64 PNG or JPEG);
- `environment`: `CuaEnvironment`, one session holding one sandbox and its `Episode`;
- `pool`: the sandbox slots and closes every session of a server shares;
- `app`: OpenEnv's own `HTTPEnvServer` over it, with cua's token guard and typed errors;
- `server`: `serve_openenv` (in the current event loop); `cli`: `cua openenv serve`;
- `client`: `CuaEnvClient`, OpenEnv's `EnvClient` typed for cua.

Importing this package needs `openenv-core` (scripts/setup.sh installs it).
"""
