"""Configuration of a desktop container sandbox."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from cua.observation import Size
from cua.sandbox import screen_from_viewport

__all__ = [
    "APP_PRESETS",
    "APP_START_TIMEOUT",
    "AppSpec",
    "DesktopConfig",
    "SettleSpec",
    "chromium_argv",
    "chromium_for_vm",
    "expand_apps",
]

#: Chromium flags for a small, quiet, visible browser window in a container: no sandbox
#: (we are the sandbox), software rendering in the browser process (no GPU process), one
#: renderer, and none of the background services that would reach for the network.
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--no-sandbox", "--disable-gpu", "--in-process-gpu", "--disable-dev-shm-usage",
    "--disable-software-rasterizer", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-default-apps",
    "--disable-extensions", "--disable-breakpad", "--disable-crash-reporter", "--password-store=basic",
    # apps are killed on reset and restore: no "restore pages?" bubble afterwards
    "--hide-crash-restore-bubble", "--disable-session-crashed-bubble", "--noerrdialogs",
    "--renderer-process-limit=1", "--disable-site-isolation-trials", "--process-per-site",
    "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,CalculateNativeWinOcclusion,"
    "BackForwardCache,DialMediaRouteProvider,SpareRendererForSitePerProcess",
    "--js-flags=--max-old-space-size=128",
    "--user-data-dir=/home/user/.config/chromium-cua", "--window-position=0,0", "--window-size=1024,640",
)


#: Outer bound (s) on an app's first window. Generous on purpose: the guest fails the wait
#: early when the app exits or uses no CPU for two minutes, so this bound only matters for
#: an app that keeps working without ever mapping a window.
APP_START_TIMEOUT = 600.0


def chromium_argv(*urls: str, binary: str = "chromium") -> list[str]:
    return [binary, *CHROMIUM_FLAGS, *urls]


def _is_chromium(argv: list[str]) -> bool:
    return bool(argv) and argv[0].rsplit("/", 1)[-1] in ("chromium", "chromium-browser", "google-chrome")


def _with_switch_value(argv: list[str], switch: str, value: str, sep: str) -> list[str]:
    """`argv` with `value` in the list switch `--switch=a<sep>b`: merged into the one it
    has (Chromium reads only one of a repeated switch), else added after the binary."""
    prefix = f"--{switch}="
    for i, arg in enumerate(argv):
        if arg.startswith(prefix):
            if value in arg[len(prefix):].split(sep):
                return argv
            return [*argv[:i], f"{arg}{sep}{value}", *argv[i + 1:]]
    return [argv[0], prefix + value, *argv[1:]]


def chromium_for_vm(argv: list[str]) -> list[str]:
    """A Chromium argv for the vm kind's guests: V8's JIT off (`--jitless` in its
    `--js-flags`) and the network service inside the browser process.

    In the TCG guests every renderer died at start with "V8 process OOM (Failed to
    reserve virtual memory for CodeRange)", on 512 MiB to 4 GiB of guest RAM and with
    `-cpu max`, although the guest could reserve 1 TiB of address space; with `--jitless`,
    V8 reserves no code range and the renderer lives. An interpreter costs little there,
    where a JIT's compiled code would be emulated too. Then the network service process
    crashed and restarted in a loop, and no page (file:// included) loaded; in the browser
    process it does not, and the page's title comes within a minute.
    """
    if not _is_chromium(argv):
        return argv
    argv = _with_switch_value(argv, "js-flags", "--jitless", " ")
    for feature in ("NetworkServiceInProcess", "NetworkServiceInProcess2"):
        argv = _with_switch_value(argv, "enable-features", feature, ",")
    return argv


class AppSpec(BaseModel):
    """An app started in the desktop at create, reset and restore.

    Given as a preset name ("mousepad"), or a dict; a dict naming a preset without `argv`
    takes the preset's, and `args` are appended (files to open, a URL).
    """

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    argv: list[str] = Field(min_length=1)
    env: dict[str, str] = Field(default_factory=dict)
    #: Working directory (relative to $HOME).
    cwd: str | None = None
    #: Wait for a window of this WM_CLASS (case-insensitive substring) after starting;
    #: None waits for a window owned by the process.
    window_class: str | None = None
    #: Whether to wait for the window at all (a background helper has none).
    wait_window: bool = True
    start_timeout: float = Field(APP_START_TIMEOUT, gt=0, le=3600)


APP_PRESETS: dict[str, dict[str, Any]] = {
    "xterm": {"argv": ["xterm", "-fa", "DejaVu Sans Mono", "-fs", "11", "-geometry", "100x30"],
              "window_class": "xterm"},
    "mousepad": {"argv": ["mousepad"], "window_class": "mousepad"},
    "pcmanfm": {"argv": ["pcmanfm", "--new-win", "."], "window_class": "pcmanfm"},
    "chromium": {"argv": chromium_argv(), "window_class": "chromium"},
}


class SettleSpec(BaseModel):
    """How the guest decides the screen has settled after an action (all bounds in ms)."""

    model_config = ConfigDict(extra="forbid")
    #: No screen update this soon after the action, with the apps idle, means it drew
    #: nothing. An app still working on the input (building a dialog, waiting for its
    #: next frame-clock tick after a burst of work) shows as CPU use and is waited for.
    first_ms: float = Field(15.0, ge=0, le=5000)
    #: After an update, the screen must stay unchanged this long.
    quiet_ms: float = Field(25.0, ge=0, le=5000)
    #: Give up waiting (the observation says settled=false) after this long.
    timeout_ms: float = Field(2000.0, ge=0, le=60000)


class DesktopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: The X screen size (also accepted as `viewport`, the task format's name for it).
    screen: Size = Field(default_factory=lambda: Size(width=1280, height=720))
    #: Apps to start, by preset name (xterm, mousepad, pcmanfm, chromium) or full spec.
    apps: list[AppSpec] = Field(default_factory=lambda: [AppSpec(name="xterm", **APP_PRESETS["xterm"])])
    #: Files to create in $HOME before the apps start: path (relative to $HOME, or
    #: absolute under /home/user) -> text.
    files: dict[str, str] = Field(default_factory=dict)
    #: Binary files, the same way: path -> base64 of the bytes (spreadsheets, images).
    binary_files: dict[str, str] = Field(default_factory=dict)
    window_manager: list[str] | None = Field(default_factory=lambda: ["openbox"])
    #: The desktop session: "openbox" (the window manager above, nothing else) or "xfce"
    #: (xfwm4, xfce4-panel, xfdesktop and xfsettingsd; `window_manager` is then left unset).
    session: Literal["openbox", "xfce"] = "openbox"
    #: GTK and icon themes: light (Adwaita), dark (Adwaita-dark, Tango icons), contrast
    #: (HighContrast); None keeps the toolkit's defaults (the look before looks existed).
    look: Literal["light", "dark", "contrast"] | None = None
    #: Container limits (cgroup v1 when the host lets us; info().details says if applied).
    memory_mb: int | None = Field(3072, ge=64)
    pids: int | None = Field(1024, ge=16)
    #: "none": a private network namespace with only loopback; "host": the host's network.
    network: Literal["none", "host"] = "none"
    input: Literal["auto", "xtest", "xdotool", "pyautogui"] = "auto"
    #: Run a D-Bus session bus and let GTK apps expose their AT-SPI accessibility tree
    #: (`A11yQuery`, `ObserveOptions(axtree=True)`); costs a bus and slower app start-up.
    accessibility: bool = False
    settle: SettleSpec = Field(default_factory=SettleSpec)
    #: Python that runs the guest agent (default: this interpreter).
    agent_python: str | None = None
    start_timeout: float = Field(60.0, gt=0, le=600)

    _viewport = model_validator(mode="before")(staticmethod(screen_from_viewport))

    @model_validator(mode="after")
    def _session_fits_window_manager(self) -> "DesktopConfig":
        """An xfce session runs xfwm4: a window manager named besides it contradicts it."""
        if self.session == "xfce" and "window_manager" in self.model_fields_set \
                and self.window_manager not in (None, ["xfwm4"]):
            # an error located at `session`, so the BadRequest names the field
            reason = PydanticCustomError("session_conflict", "session 'xfce' runs its own window manager (xfwm4); "
                                         "window_manager {wm} contradicts it: leave window_manager out",
                                         {"wm": repr(self.window_manager)})
            raise ValidationError.from_exception_data(type(self).__name__, [
                InitErrorDetails(type=reason, loc=("session",), input=self.session)])
        return self

    @property
    def wm_argv(self) -> list[str] | None:
        """The window manager the agent starts itself (--wm): none in an xfce session."""
        return None if self.session == "xfce" else self.window_manager

    @field_validator("apps", mode="before")
    @classmethod
    def _presets(cls, value: Any) -> Any:
        return expand_apps(value)


def expand_apps(value: Any) -> Any:
    """App entries as AppSpec dicts: a preset name ("mousepad"), or a dict naming a preset
    (its argv taken when the dict has none) with `args` appended. The VM kind reads its
    apps through this too, so a task's app list means the same on both kinds."""
    if not isinstance(value, list):
        return value
    out = []
    for item in value:
        if isinstance(item, str):
            if item not in APP_PRESETS:
                raise ValueError(f"unknown app preset {item!r}; known: {', '.join(sorted(APP_PRESETS))}")
            out.append({"name": item, **APP_PRESETS[item]})
        elif isinstance(item, dict):
            item = dict(item)
            if "argv" not in item and item.get("name") in APP_PRESETS:
                item = {**APP_PRESETS[item["name"]], **item}
            args = item.pop("args", None) or []
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise ValueError("app args must be a list of strings")
            if "argv" in item:
                item["argv"] = [*item["argv"], *args]
            out.append(item)
        else:
            out.append(item)
    return out
