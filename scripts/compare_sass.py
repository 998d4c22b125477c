"""Which kernels two builds of libct3d.so compile differently: every kernel's SASS, per
architecture, instruction by instruction (addresses and encodings aside). A refactor
that should change no default path shows its kernels identical without a GPU; a
kernel that changes, appears or goes is listed by name.

    python3 scripts/compare_sass.py BEFORE/libct3d.so AFTER/libct3d.so [--rename A=B ...]

--rename rewrites a demangled name of the first build before matching (a regular
expression and its replacement), for kernels whose template parameters changed but
whose code should not. It needs cuobjdump and nvdisasm on PATH (the CUDA toolkit's, or
pip's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels).
"""

import argparse
import re
import shutil
import subprocess
import sys

INSTRUCTION = re.compile(r"\s*/\*[0-9a-f]{4,}\*/")


def kernels(library: str) -> dict:
    """{(arch, mangled name): [instructions]} of every kernel in the library."""
    text = subprocess.run(["cuobjdump", "-sass", library], capture_output=True, text=True,
                          check=True).stdout
    found, current, arch = {}, None, None
    for line in text.splitlines():
        if match := re.match(r"\s*arch = (sm_\w+)", line):
            arch, current = match.group(1), None
        elif match := re.match(r"\s*Function : (\S+)", line):
            current = (arch, match.group(1))
            found.setdefault(current, [])
        elif current and INSTRUCTION.match(line):
            instruction = re.sub(r"/\*[0-9a-f]{4,}\*/|/\* 0x[0-9a-f]+ \*/", "", line).strip()
            found[current].append(instruction)
    return found


def by_name(found: dict, renames: list) -> dict:
    """The kernels keyed by (arch, demangled name without its parameter list)."""
    keys = list(found)
    demangled = subprocess.run(["c++filt"], input="\n".join(name for _, name in keys),
                               capture_output=True, text=True, check=True).stdout.split("\n")
    named = {}
    for key, name in zip(keys, demangled):
        name = name.removeprefix("void ").replace("(anonymous namespace)", "{anon}")
        name = name.split("(")[0]
        for pattern, replacement in renames:
            name = re.sub(pattern, replacement, name)
        named[(key[0], name)] = found[key]
    return named


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rename", action="append", default=[],
                        help="PATTERN=REPLACEMENT applied to the first build's names")
    args = parser.parse_args()
    for tool in ("cuobjdump", "nvdisasm", "c++filt"):
        if shutil.which(tool) is None:
            sys.exit(f"compare_sass: {tool} is not on PATH")
    renames = [tuple(rule.split("=", 1)) for rule in args.rename]
    before = by_name(kernels(args.before), renames)
    after = by_name(kernels(args.after), [])
    both = set(before) & set(after)
    changed = sorted(k for k in both if before[k] != after[k])
    gone, new = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    print(f"{len(before)} kernels before, {len(after)} after: {len(both) - len(changed)} "
          f"identical, {len(changed)} changed, {len(gone)} gone, {len(new)} new")
    for title, names in (("changed", changed), ("gone", gone), ("new", new)):
        for arch, name in names:
            counts = (f" ({len(before[(arch, name)])} -> {len(after[(arch, name)])} instructions)"
                      if title == "changed" else "")
            print(f"  {title:8} {arch:7} {name}{counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
