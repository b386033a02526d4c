"""The C extension of the nextstate package: the library's src/<layer>/*.c
(every layer but the CLI) compiled together with python/nextstate/_core.c,
linked against the Debian libraries the project already uses (OpenBLAS,
libxgboost).  Everything else is in pyproject.toml."""
import glob
import os
import shutil
import subprocess

import numpy  # noqa: F401  (build requirement; the extension itself uses the buffer protocol)
from setuptools import Extension, setup

LAYERS = ["util", "core", "data", "encode", "learn", "eval", "planner"]
HERE = os.path.dirname(os.path.abspath(__file__))


def rel(p):
    return os.path.relpath(p, HERE)


sources = [rel(p) for layer in LAYERS for p in sorted(glob.glob(os.path.join(HERE, "src", layer, "*.c")))]
sources.append("python/nextstate/_core.c")
# setuptools rebuilds the extension only when a file of sources + depends is
# newer than it: without the headers a header-only change left it stale.
headers = sorted(rel(p) for d in ("include", "src") for p in glob.glob(os.path.join(HERE, d, "**", "*.h"),
                                                                        recursive=True))


def openblas_include():
    if shutil.which("pkg-config"):
        r = subprocess.run(["pkg-config", "--cflags-only-I", "openblas"], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            return [f[2:] for f in r.stdout.split() if f.startswith("-I")]
    return ["/usr/include/x86_64-linux-gnu/openblas-pthread"]


ext = Extension(
    "nextstate._core",
    sources=sources,
    depends=headers,
    include_dirs=["include", "src"] + openblas_include(),
    define_macros=[("_POSIX_C_SOURCE", "200809L")],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
    libraries=["openblas", "xgboost", "m"],
)

setup(ext_modules=[ext])
