"""The options a user sets on purpose (README, "Options"), in the library's one options
structure: each is read from its environment variable (CT3D_ and the name in upper case)
when the library loads, and may be changed between calls here.

    ct3d.set_option("winograd", "off")   # as CT3D_WINOGRAD=off
    ct3d.options()                        # {"max_capability": "device", "winograd": "off", ...}

An unknown name or value raises an error that lists what is valid; an empty value
restores the default.
"""

from __future__ import annotations

import torch


def set_option(name: str, value) -> None:
    """Sets one option (max_capability, winograd, winograd_workspace_mib, cpu_isa, or
    the tests' force_form) from its text or number; "" or None restores its default."""
    torch.ops.ct3d.set_option(name, "" if value is None else str(value))


def options() -> dict:
    """Every option's current value, as text."""
    text = torch.ops.ct3d.options()
    return dict(line.split("=", 1) for line in text.splitlines() if line)
