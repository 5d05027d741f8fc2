"""Package layout: `sandboxes/`, `tasks/` and `judges/` install as `cua.sandboxes`, `cua.tasks`
and `cua.judges`, so the wheel creates no generic top-level import names. The list of
packages is computed here because setuptools' automatic discovery cannot follow a
package-dir mapping."""

from setuptools import find_packages, setup

MAPPED = {"cua.sandboxes": "sandboxes", "cua.tasks": "tasks", "cua.judges": "judges"}

packages = ["cua", *(f"cua.{p}" for p in find_packages("cua"))]
for name, folder in MAPPED.items():
    packages += [name, *(f"{name}.{p}" for p in find_packages(folder))]

setup(packages=packages, package_dir={"cua": "cua", **MAPPED})
