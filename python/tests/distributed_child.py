"""One process of test_distributed.py: JAX on Kiln across processes.

    distributed_child.py COORDINATOR_ADDRESS NUM_PROCESSES PROCESS_ID [BYTES]

Joins the job through jax.distributed, then checks the global device list,
a psum over every global device (through jax.jit with a NamedSharding and
through shard_map), and an all_gather and an all_to_all of BYTES per device
(default 1024) through shard_map. Prints "ok" at the end; any failure
raises.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def main() -> None:
    address, num_processes, process_id = sys.argv[1], int(sys.argv[2]), int(
        sys.argv[3])
    jax.distributed.initialize(coordinator_address=address,
                               num_processes=num_processes,
                               process_id=process_id)
    assert jax.process_index() == process_id, jax.process_index()
    assert jax.process_count() == num_processes, jax.process_count()
    local = jax.local_device_count()
    devices = jax.devices()
    assert len(devices) == local * num_processes, devices
    assert all(d.platform == "kiln" for d in devices), devices
    assert sorted(d.id for d in devices) == list(range(len(devices))), devices
    assert [d.process_index for d in jax.local_devices()] == [process_id] * local

    mesh = Mesh(np.array(devices), ("x",))
    sharding = NamedSharding(mesh, P("x"))
    n = len(devices)
    # Row i (device i's shard) holds i+1 in every element.
    global_shape = (n, 4)

    def shard(index):
        row = index[0].start or 0
        return np.full((1, 4), row + 1, dtype=np.float32)

    x = jax.make_array_from_callback(global_shape, sharding, shard)
    expected = float(n * (n + 1) // 2)

    # jit with a NamedSharding: the sum over the sharded axis is an
    # all-reduce across every device of every process.
    total = jax.jit(lambda a: jnp.sum(a, axis=0),
                    out_shardings=NamedSharding(mesh, P()))(x)
    for piece in total.addressable_shards:
        np.testing.assert_array_equal(np.asarray(piece.data),
                                      np.full((4,), expected, np.float32))

    # shard_map with an explicit psum.
    from jax.experimental.shard_map import shard_map

    psum = jax.jit(shard_map(lambda a: jax.lax.psum(a, "x"), mesh=mesh,
                             in_specs=P("x"), out_specs=P("x")))
    summed = psum(x)
    for piece in summed.addressable_shards:
        np.testing.assert_array_equal(np.asarray(piece.data),
                                      np.full((1, 4), expected, np.float32))
    # all_gather and all_to_all of BYTES per device through shard_map,
    # checked against numpy on the global array.
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 1024
    columns = size // 4
    def block(index):
        row = index[0].start or 0
        return (np.arange(columns, dtype=np.float32)[None, :] % 1000 +
                np.float32(row * 7))
    y = jax.make_array_from_callback((n, columns), sharding, block)
    whole = np.stack([block((slice(r, r + 1),))[0] for r in range(n)])

    gather = jax.jit(shard_map(
        lambda a: jax.lax.all_gather(a, "x", tiled=True), mesh=mesh,
        in_specs=P("x"), out_specs=P("x")))
    gathered = gather(y)
    for piece in gathered.addressable_shards:
        np.testing.assert_array_equal(np.asarray(piece.data), whole)

    # Each device's row is cut into n parts along the columns; part k goes
    # to device k, which stacks the parts it receives along the rows.
    exchange = jax.jit(shard_map(
        lambda a: jax.lax.all_to_all(a, "x", 1, 0, tiled=True), mesh=mesh,
        in_specs=P("x"), out_specs=P("x")))
    exchanged = exchange(y)
    part = columns // n
    for piece in exchanged.addressable_shards:
        k = piece.index[0].start // n
        np.testing.assert_array_equal(np.asarray(piece.data),
                                      whole[:, k * part:(k + 1) * part])
    print("ok", flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
