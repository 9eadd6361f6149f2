"""Puts the plugin library into the wheel and marks the wheel as platform-specific.

The library is built by CMake, not by setuptools: `scripts/build_wheel.sh` builds it
and passes its path in KILN_PLUGIN_LIBRARY (default: ../build/lib/libpjrt_kiln.so),
and in KILN_PLUGIN_BUNDLE a folder of the shared libraries it needs (oneDNN, Gloo
and theirs), which go next to it: the plugin finds them through RUNPATH $ORIGIN.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY_NAME = "libpjrt_kiln.so"


class BuildPyWithPlugin(build_py):
    """Copies the CMake-built plugin library next to kiln_pjrt's modules."""

    def run(self):
        super().run()
        source = os.environ.get(
            "KILN_PLUGIN_LIBRARY",
            os.path.join(HERE, "..", "build", "lib", LIBRARY_NAME))
        if not os.path.isfile(source):
            raise SystemExit(
                f"kiln-pjrt: no plugin library at {source}; build it first "
                "(scripts/build_wheel.sh does) or set KILN_PLUGIN_LIBRARY")
        package = os.path.join(self.build_lib, "kiln_pjrt")
        os.makedirs(package, exist_ok=True)
        shutil.copyfile(source, os.path.join(package, LIBRARY_NAME))
        bundle = os.environ.get("KILN_PLUGIN_BUNDLE")
        if bundle:
            for name in sorted(os.listdir(bundle)):
                if (name != LIBRARY_NAME and ".so" in name) or name in (
                        "LICENSE", "THIRD_PARTY_NOTICES.txt"):
                    shutil.copyfile(os.path.join(bundle, name),
                                    os.path.join(package, name))


class PlatformWheel(bdist_wheel):
    """The wheel holds a native library: one Python-independent wheel per platform."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildPyWithPlugin, "bdist_wheel": PlatformWheel})
