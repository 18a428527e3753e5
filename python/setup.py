"""Builds and installs the runlab Python package (runlab._runlab in C, the rest in Python).

    pip install --no-build-isolation ./python

finds librunlab, in this order:
  1. RUNLAB_BUILD_DIR=<a CMake build tree of this repository>: links its static
     librunlab.a (headers from ../include), with the libraries it needs from pkg-config;
  2. pkg-config runlab (an installed librunlab, `make install` / the Debian package);
  3. RUNLAB_PREFIX=<prefix>: <prefix>/include and <prefix>/lib*/librunlab.so.
Nothing is downloaded: numpy's headers come from the installed numpy (python3-numpy).
"""

import glob
import os
import shlex
import subprocess
import sys

import numpy
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
# What librunlab.a links against (CMakeLists.txt, pkg_check_modules(DEPS ...)).
DEPS = ["libzstd", "liblz4", "libdeflate", "zlib", "libcrypto", "json-c", "libfyaml",
        "sqlite3", "cairo", "expat", "CycloneDDS"]


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"runlab setup.py: pkg-config {' '.join(args)} failed: "
                         f"{getattr(e, 'stderr', e)}")
    return shlex.split(out.stdout)


def split_flags(flags):
    inc = [f[2:] for f in flags if f.startswith("-I")]
    libdirs = [f[2:] for f in flags if f.startswith("-L")]
    libs = [f[2:] for f in flags if f.startswith("-l")]
    other = [f for f in flags if not f.startswith(("-I", "-L", "-l"))]
    return inc, libdirs, libs, other


def librunlab():
    build = os.environ.get("RUNLAB_BUILD_DIR")
    if build:
        archive = os.path.join(build, "lib", "librunlab.a")
        if not os.path.exists(archive):
            raise SystemExit(f"runlab setup.py: {archive} not found (build runlab first)")
        inc, libdirs, libs, other = split_flags(pkg_config("--cflags", "--libs", *DEPS))
        return dict(include_dirs=[os.path.join(HERE, "..", "include")] + inc,
                    extra_objects=[archive], library_dirs=libdirs,
                    libraries=libs + ["pthread", "m"], extra_link_args=other)
    if subprocess.run(["pkg-config", "--exists", "runlab"]).returncode == 0:
        inc, libdirs, libs, other = split_flags(pkg_config("--cflags", "--libs", "runlab"))
        return dict(include_dirs=inc, library_dirs=libdirs, libraries=libs,
                    extra_link_args=other + [f"-Wl,-rpath,{d}" for d in libdirs])
    prefix = os.environ.get("RUNLAB_PREFIX")
    if prefix:
        libdirs = [d for d in glob.glob(os.path.join(prefix, "lib*"))
                   if glob.glob(os.path.join(d, "librunlab.so*"))]
        inc, _, _, _ = split_flags(pkg_config("--cflags", *DEPS))
        return dict(include_dirs=[os.path.join(prefix, "include")] + inc,
                    library_dirs=libdirs, libraries=["runlab"],
                    extra_link_args=[f"-Wl,-rpath,{d}" for d in libdirs])
    raise SystemExit("runlab setup.py: librunlab not found: set RUNLAB_BUILD_DIR to a build "
                     "tree, install runlab (pkg-config runlab), or set RUNLAB_PREFIX")


def header_version():
    """The project's version, from the macros CMakeLists.txt reads too."""
    text = open(os.path.join(HERE, "..", "include", "runlab", "version.h"), encoding="utf-8").read()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        for line in text.splitlines():
            if line.startswith(f"#define RUNLAB_VERSION_{part} "):
                parts.append(line.split()[2])
    if len(parts) != 3:
        raise SystemExit("runlab setup.py: RUNLAB_VERSION_MAJOR/MINOR/PATCH not found in "
                         "include/runlab/version.h")
    return ".".join(parts)


ext = Extension("runlab._runlab", sources=sorted(glob.glob(os.path.join("src", "*.c"))),
                depends=glob.glob(os.path.join("src", "*.h")),
                extra_compile_args=["-std=c17", "-D_GNU_SOURCE", "-fvisibility=hidden"],
                **librunlab())
ext.include_dirs.append(numpy.get_include())

setup(
    name="runlab",
    version=header_version(),
    description="runlab's runs, benchmarks, recordings and evaluations in numpy and pandas",
    packages=["runlab"],
    ext_modules=[ext],
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"pandas": ["pandas"]},
)
