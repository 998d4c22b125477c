"""Pins ct3d's kernel forms for one test through the library's one test hook, the option
force_form (ops/options/forced_form.cpp names the forms: "tap-columns", "half-widened", ...).
conftest.py restores every option to the environment's after each test."""

import os

import ct3d


def force(*forms, winograd="auto"):
    """The forms, in order (a later one's choices override an earlier one's); winograd:
    the user's option, "off" in the engine's own form suites so that Winograd does not
    take their wide stride-1 cases (forcing "winograd" overrides it)."""
    ct3d.set_option("winograd", winograd)
    ct3d.set_option("force_form", ",".join(forms))


def restore_environment_options():
    """Every option as its environment variable (CT3D_<NAME>) sets it, or its default."""
    for name in ct3d.options():
        ct3d.set_option(name, os.environ.get("CT3D_" + name.upper(), ""))
