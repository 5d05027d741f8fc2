"""The typed errors of a real product (`cua.tasks.products`): whose fault each is, as
`cua.errors` says (a product not installed or failing to build or start is the
machinery's; a product asked to be something it cannot be is the client's)."""

from __future__ import annotations

from cua.errors import BadRequest, InfraError

__all__ = ["ProductBuildFailed", "ProductConfigError", "ProductMissing", "ProductStartFailed"]


class ProductMissing(InfraError):
    """The product is not installed on this machine (scripts/setup.sh installs it)."""


class ProductBuildFailed(InfraError):
    """The product's installer or seeding failed while building an image."""


class ProductStartFailed(InfraError):
    """The product's server or its control socket did not come up, or stopped."""


class ProductConfigError(BadRequest):
    """The product was asked for something it cannot be (a bad seed, port or socket)."""
