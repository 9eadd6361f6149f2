// One process of a multi-process job through Kiln's client and plugin, for
// the multi-process tests and benchmark (launcher.h starts several).
//
//   worker plugin=PATH store=DIR process=I processes=N [devices=K]
//          op=OP bytes=B [iterations=T] [timeout_s=S] [forever=1]
//          [mode=kiln|replicated|gloo]
//
// mode=kiln (default): creates a client of process I of N (K devices
// each) sharing the file store DIR, compiles OP over every global device
// (one replica each), runs it T times on inputs computed from each
// device's global id, and checks the outputs against values computed here
// element by element. OP is all_reduce (f32 sum), all_reduce_max_i32,
// all_reduce_f64, all_gather, all_to_all, reduce_scatter, permute (a ring
// shift) or broadcast; B is one device's input in bytes. Prints
// "seconds=<per iteration>" and exits 0 when every output matches.
// forever=1 runs the collective until it fails (writing DIR/ready.I after
// the first success) and exits 3 when the failure is UNAVAILABLE or
// DEADLINE_EXCEEDED, 4 for any other error.
//
// mode=replicated: the same through PjrtComputationClient (Compile over
// every device of the job, ExecuteReplicated on this process's).
//
// mode=gloo: the same f32 sum of B bytes through gloo::allreduce directly
// (Gloo's own file store in DIR, one rank per process): the peer figure
// for the benchmark.
#ifndef KILN_TESTS_CLIENT_MULTIPROCESS_WORKER_H_
#define KILN_TESTS_CLIENT_MULTIPROCESS_WORKER_H_

namespace kiln::multiprocess {

int RunWorker(int argc, char** argv);

}  // namespace kiln::multiprocess

#endif  // KILN_TESTS_CLIENT_MULTIPROCESS_WORKER_H_
