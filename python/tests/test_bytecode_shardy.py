"""Kiln's bytecode reader against JAX's own printer, on Shardy attributes.

JAX serializes its programs with Shardy (`sdy`) ops and attributes mixed into
the portable artifact, in Shardy's own bytecode encoding. Kiln decodes them
back to their assembly text; here every mesh and sharding JAX prints for an
exported program must come out of `kiln print` of its serialized artifact.
"""

import os
import re
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

HERE = os.path.dirname(os.path.abspath(__file__))
KILN = os.path.join(os.environ.get("KILN_BUILD_DIR",
                                   os.path.join(HERE, "..", "..", "build")),
                    "bin", "kiln")


def _bodies(text: str, start: str) -> list[str]:
    """Every balanced `<...>` that begins with `start` in `text`."""
    found = []
    for match in re.finditer(re.escape(start), text):
        depth, i = 0, match.start()
        while i < len(text):
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        found.append(text[match.start():i])
    return sorted(found)


def _programs():
    mesh = Mesh(np.array(jax.devices("cpu")[:1]).reshape(1, 1), ("x", "y"))

    def constrained(a, b):
        c = jax.lax.with_sharding_constraint(a @ b, NamedSharding(mesh, P("x", None)))
        return jnp.tanh(c)

    shardings = (NamedSharding(mesh, P("x", "y")), NamedSharding(mesh, P(None, "y")))
    yield "named mesh, argument and constraint shardings", jax.jit(
        constrained, in_shardings=shardings), (jnp.ones((4, 4)), jnp.ones((4, 4)))
    keys = jax.random.split(jax.random.key(0), 3)
    yield "PRNG keys (open and closed dimensions)", jax.jit(
        lambda k: jnp.expand_dims(k, 1)), (keys,)


@pytest.mark.skipif(not os.path.exists(KILN),
                    reason="the kiln command line is not built (KILN_BUILD_DIR)")
@pytest.mark.parametrize("index", [0, 1])
def test_kiln_decodes_the_shardy_attributes_jax_prints(index, tmp_path):
    name, jitted, args = list(_programs())[index]
    exported = jax.export.export(jitted, platforms=["cpu"])(*args)
    path = tmp_path / "program.mlirbc"
    path.write_bytes(exported.mlir_module_serialized)
    printed = subprocess.run([KILN, "print", str(path)], capture_output=True,
                             text=True, check=True).stdout
    expected = exported.mlir_module()
    # JAX prints a sharding_constraint's attribute without its prefix
    # (`<@mesh, ...>`), Kiln's generic form with it; compare the bodies.
    for start in ("<@", "<["):
        assert _bodies(printed, start) == _bodies(expected, start), name
    assert _bodies(expected, "<@"), f"{name}: the program has no sharding"
