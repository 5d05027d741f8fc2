"""QEMU virtual machine sandboxes (kind "vm") with memory snapshots, and their images.

`VMSandbox` boots a desktop VM built from a recipe in `vm-images/` (see `image.py` and
`vm-images/README.md`); snapshots keep memory and disk, so a restore resumes the running
desktop without a boot, and a fork starts another VM from the same snapshot.
"""

from cua.sandboxes.vm.config import VMConfig
from cua.sandboxes.vm.sandbox import VMSandbox

__all__ = ["VMConfig", "VMSandbox"]
