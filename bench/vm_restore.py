"""Restore latency of a running 512 MiB desktop VM under TCG, against a cold boot.

A VM of the `desktop` recipe (image built or taken from the cache) boots, starts an
xterm and is snapshotted. Each round runs a command in the xterm (changing memory and
the screen) and restores the snapshot; the time counted is the VM's `restore` timing,
from the call until the guest agent and its X server answered (`timings_ms["restore"]`).
Two figures are measured:

- with the standby VM (the default): after each snapshot and restore, a QEMU with a
  copy-on-write map of the snapshot's RAM, a copy of its disk and its device state loaded
  waits, paused, in the background; the benchmark waits for it to be ready before the
  next round (as an RL loop's steps would), so a restore is "stop the old VM, continue
  the new one, ping its agent and list its windows";
- without it: every restore copies the RAM file and the overlay and starts QEMU first.

The cold boot is QEMU start to a guest agent that answers (kernel, init, Xvfb, window
manager, agent), measured on fresh VMs.

    python bench/vm_restore.py [--rounds 10] [--boots 3]

Each round also snapshots the running desktop (the guest is frozen only for the end of a
live save: `pause_ms` from QEMU's STOP/RESUME events) and, in the first rounds, forks it
twice: at once, when the fork waits for the live save's stream to become the snapshot's
files (a QEMU loads it into a RAM file, about a second under TCG), and again, from those
files (a QEMU mapping the RAM file copy-on-write, device state loaded, guest healthy).

Last line: vm_restore_p50_s=<x> vm_boot_p50_s=<y> vm_fork_p50_s=<z> vm_fork_complete_p50_s=<c>
vm_snapshot_pause_ms=<p>
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from cua.actions import Type
from cua.observation import ObserveOptions
from cua.sandboxes.vm import VMConfig, VMSandbox
from cua.sandboxes.vm.image import image_for

NO_SHOT = ObserveOptions(screenshot=False)


PAUSES_MS: list[float] = []
FORKS_S: list[float] = []
#: Forks of a snapshot whose files are complete (the first fork waited for that).
FORKS_COMPLETE_S: list[float] = []
#: Per restore with standby: ms waiting for the standby, ms from it to an answering agent.
PHASES_MS: dict[str, list[float]] = {"restore_wait_standby": [], "restore_run": []}


async def restore_rounds(config: VMConfig, rounds: int, label: str) -> list[float]:
    sb = await VMSandbox.create(config, sandbox_id=f"bench-restore-{label}")
    try:
        ref = await sb.snapshot()
        times = []
        for i in range(rounds):
            await sb.act(Type(text=f"echo round {i}\n"), observe=NO_SHOT)
            # a snapshot of the running, just-changed desktop: how long is the guest frozen?
            extra = await sb.snapshot()
            PAUSES_MS.append(float(extra.meta["pause_ms"]))
            if label == "standby" and i < 3:
                child = await sb.fork(extra, sandbox_id=f"bench-fork-{i}")
                FORKS_S.append(child.info().timings_ms["fork"] / 1000)
                await child.close()
                child = await sb.fork(extra, sandbox_id=f"bench-fork-again-{i}")
                FORKS_COMPLETE_S.append(child.info().timings_ms["fork"] / 1000)
                await child.close()
            await sb.delete_snapshot(extra)
            await sb.standby_ready()
            await sb.restore(ref, observe=NO_SHOT)
            timings = sb.info().timings_ms
            times.append(timings["restore"] / 1000)
            if label == "standby":
                for phase, seen in PHASES_MS.items():
                    seen.append(float(timings[phase]))
            print(f"  {label} round {i + 1}/{rounds}: restore {times[-1]:.3f} s, snapshot pause "
                  f"{PAUSES_MS[-1]:.0f} ms", file=sys.stderr, flush=True)
        snap_ms = sb.info().timings_ms["snapshot"]
        print(f"  snapshot of the running VM: {snap_ms:.0f} ms (pause {sb.info().timings_ms['snapshot_pause']:.0f} ms)",
              file=sys.stderr)
        return times
    finally:
        await sb.close()


async def boots(config: VMConfig, n: int) -> list[float]:
    times = []
    for i in range(n):
        sb = await VMSandbox.create(config.model_copy(update={"apps": [], "standby": False}),
                                    sandbox_id=f"bench-boot-{i}")
        times.append(sb.info().timings_ms["boot"] / 1000)
        await sb.close()
        print(f"  cold boot {i + 1}/{n}: {times[-1]:.2f} s", file=sys.stderr, flush=True)
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--image", default="desktop")
    args = parser.parse_args()

    t0 = time.monotonic()
    image = await asyncio.to_thread(image_for, args.image, log=lambda m: print(m, file=sys.stderr))
    print(f"image {image.name} {image.hash}: {image.size_bytes / 2**20:.0f} MiB "
          f"(ready in {time.monotonic() - t0:.1f} s)", file=sys.stderr)
    config = VMConfig(image=args.image, accel="tcg", memory_mb=512, apps=[["xterm", "-geometry", "80x20+60+60"]],
                      screen={"width": 1024, "height": 768},
                      boot_timeout=900, app_timeout=300)

    boot = await boots(config, args.boots)
    with_standby = await restore_rounds(config, args.rounds, "standby")
    without = await restore_rounds(config.model_copy(update={"standby": False}), max(3, args.rounds // 2),
                                   "no-standby")

    boot_p50 = statistics.median(boot)
    restore_p50 = statistics.median(with_standby)
    print(f"cold boot to a ready agent: p50 {boot_p50:.2f} s over {len(boot)}")
    print(f"restore with standby:    p50 {restore_p50:.3f} s over {len(with_standby)} "
          f"({boot_p50 / restore_p50:.0f}x faster than a cold boot)")
    print(f"restore without standby: p50 {statistics.median(without):.3f} s over {len(without)}")
    print("restore with standby, phases (p50 ms): " + ", ".join(
        f"{phase} {statistics.median(seen):.1f}" for phase, seen in PHASES_MS.items()))
    pause_p50 = statistics.median(PAUSES_MS)
    print(f"snapshot pause (guest frozen): p50 {pause_p50:.0f} ms, max {max(PAUSES_MS):.0f} ms over {len(PAUSES_MS)}")
    print(f"fork ready, right after the live snapshot: p50 {statistics.median(FORKS_S):.3f} s over {len(FORKS_S)}")
    print(f"fork ready, of the same snapshot again (its files complete): "
          f"p50 {statistics.median(FORKS_COMPLETE_S):.3f} s over {len(FORKS_COMPLETE_S)}")
    print(f"vm_restore_p50_s={restore_p50:.3f} vm_boot_p50_s={boot_p50:.2f} "
          f"vm_fork_p50_s={statistics.median(FORKS_S):.3f} vm_fork_complete_p50_s={statistics.median(FORKS_COMPLETE_S):.3f} "
          f"vm_snapshot_pause_ms={pause_p50:.0f}")


if __name__ == "__main__":
    asyncio.run(main())
