// The plugin under load: 8 threads share one client of 4 devices and run
// random sequences of uploads (every host-buffer semantics), executes with
// and without donation, copies between devices and memories, host reads,
// deletions and destructions. Every value read back is checked against a
// model each thread keeps on the host, computed independently of Kiln.
//
// The programs keep every value a small integer in f32, so that the model
// is exact: x*2+y clamped to [-1000, 1000], a loop adding 1 ten times, and
// a max reduction.
//
// The default run is short (it is in the unit tests, and runs under
// ThreadSanitizer in CI). Soak mode: KILN_STRESS_SECONDS=N runs each
// thread until N seconds have passed (scripts/stress.sh), and
// KILN_STRESS_SEED picks the seed (printed by every run).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "plugin_harness.h"

namespace kiln::testing {
namespace {

constexpr int kThreads = 8;
constexpr int kDevices = 4;
constexpr int kDefaultOpsPerThread = 300;
constexpr size_t kMaxPool = 10;
// Sizes on both sides of the engine's thresholds: inline runs, one tile,
// several tiles, and work split over the pool.
constexpr int64_t kSizes[] = {1, 7, 1024, 5003, 300000};

std::string AxpyClamp(int64_t n) {
  const std::string t = "tensor<" + std::to_string(n) + "xf32>";
  return "module @stress_axpy {\n"
         "  func.func public @main(%x: " + t + " {jax.buffer_donor = true}, %y: " + t +
         ") -> " + t + " {\n"
         "    %two = stablehlo.constant dense<2.0> : " + t + "\n"
         "    %lo = stablehlo.constant dense<-1000.0> : tensor<f32>\n"
         "    %hi = stablehlo.constant dense<1000.0> : tensor<f32>\n"
         "    %m = stablehlo.multiply %x, %two : " + t + "\n"
         "    %s = stablehlo.add %m, %y : " + t + "\n"
         "    %c = stablehlo.clamp %lo, %s, %hi : (tensor<f32>, " + t + ", tensor<f32>) -> " + t + "\n"
         "    return %c : " + t + "\n"
         "  }\n"
         "}\n";
}

std::string AddTenInLoop(int64_t n) {
  const std::string t = "tensor<" + std::to_string(n) + "xf32>";
  return "module @stress_loop {\n"
         "  func.func public @main(%x: " + t + " {jax.buffer_donor = true}) -> " + t + " {\n"
         "    %zero = stablehlo.constant dense<0> : tensor<i32>\n"
         "    %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, " + t + "\n"
         "     cond {\n"
         "      %ten = stablehlo.constant dense<10> : tensor<i32>\n"
         "      %lt = stablehlo.compare LT, %i, %ten : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
         "      stablehlo.return %lt : tensor<i1>\n"
         "    } do {\n"
         "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
         "      %onef = stablehlo.constant dense<1.0> : " + t + "\n"
         "      %j = stablehlo.add %i, %one : tensor<i32>\n"
         "      %w = stablehlo.add %v, %onef : " + t + "\n"
         "      stablehlo.return %j, %w : tensor<i32>, " + t + "\n"
         "    }\n"
         "    return %r#1 : " + t + "\n"
         "  }\n"
         "}\n";
}

std::string MaxReduce(int64_t n) {
  const std::string t = "tensor<" + std::to_string(n) + "xf32>";
  return "module @stress_max {\n"
         "  func.func public @main(%x: " + t + ") -> tensor<f32> {\n"
         "    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
         "    %r = stablehlo.reduce(%x init: %init) applies stablehlo.maximum "
         "across dimensions = [0] : (" + t + ", tensor<f32>) -> tensor<f32>\n"
         "    return %r : tensor<f32>\n"
         "  }\n"
         "}\n";
}

// One buffer a thread holds, with the values it must have.
struct Held {
  PJRT_Buffer* buffer = nullptr;
  int device = 0;
  std::vector<float> expected;
};

// Host memory lent to Kiln (zero-copy uploads, uploads that read until the
// transfer completes), kept until the plugin says it is done with it.
struct Lent {
  std::unique_ptr<std::vector<float>> data;
  PJRT_Event* done = nullptr;
};

// The programs, compiled once per size.
struct Programs {
  PJRT_LoadedExecutable* axpy = nullptr;
  PJRT_LoadedExecutable* loop = nullptr;
  PJRT_LoadedExecutable* max = nullptr;
};

class StressTest : public PluginTest {
 protected:
  StressTest() : PluginTest(kDevices) {}

  void CompileAll() {
    for (int64_t n : kSizes) {
      Programs p;
      p.axpy = Compile(AxpyClamp(n));
      p.loop = Compile(AddTenInLoop(n));
      p.max = Compile(MaxReduce(n));
      ASSERT_TRUE(p.axpy && p.loop && p.max);
      programs_.push_back(p);
    }
  }

  void DestroyAll() {
    for (Programs& p : programs_) {
      DestroyLoadedExecutable(p.axpy);
      DestroyLoadedExecutable(p.loop);
      DestroyLoadedExecutable(p.max);
    }
  }

  std::vector<Programs> programs_;
  std::vector<PJRT_Device*> devices_;
  std::vector<std::vector<PJRT_Memory*>> memories_;
  std::atomic<int64_t> executes_{0};
  std::atomic<int64_t> reads_{0};
  std::atomic<int64_t> copies_{0};
  std::atomic<int64_t> donations_{0};
};

// Everything one thread does; the model is its `pool`.
class Worker {
 public:
  Worker(const PJRT_Api* api, PJRT_Client* client, uint64_t seed)
      : api_(api), client_(client), rng_(seed) {}

  ~Worker() {
    for (Held& held : pool_) Destroy(held.buffer);
    for (Lent& lent : lent_) Await(lent.done);
  }

  // One random action; false (with a test failure) when something went wrong.
  bool Step(std::atomic<int64_t>& executes, std::atomic<int64_t>& reads,
            std::atomic<int64_t>& copies, std::atomic<int64_t>& donations) {
    ReleaseLent(/*wait=*/false);
    const int choice = Uniform(0, 99);
    if (pool_.size() < 3 || choice < 15) return Upload(Uniform(0, 4));
    if (choice < 40) {
      executes.fetch_add(1);
      return Axpy(donations);
    }
    if (choice < 50) {
      executes.fetch_add(1);
      return Loop(donations);
    }
    if (choice < 58) {
      executes.fetch_add(1);
      return Max();
    }
    if (choice < 72) {
      copies.fetch_add(1);
      return Copy();
    }
    if (choice < 88) {
      reads.fetch_add(1);
      return Read(Pick());
    }
    // Drop a buffer: delete it first (its handle stays valid), or not.
    size_t i = Pick();
    if (Uniform(0, 1) == 0) {
      auto args = KILN_ARGS(PJRT_Buffer_Delete_Args);
      args.buffer = pool_[i].buffer;
      if (!Ok(api_->PJRT_Buffer_Delete(&args), "Buffer_Delete")) return false;
    }
    Drop(i);
    return true;
  }

  void Finish() {
    while (!pool_.empty()) {
      Read(0);
      Drop(0);
    }
    ReleaseLent(/*wait=*/true);
  }

 private:
  // An index into the pool, when `ok`.
  struct StatusOrIndex {
    bool ok;
    size_t index;
  };

  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  size_t Pick() { return static_cast<size_t>(Uniform(0, pool_.size() - 1)); }

  bool Ok(PJRT_Error* error, const char* what) {
    ErrorInfo info = TakeError(api_, error);
    EXPECT_EQ(info.code, PJRT_Error_Code_OK) << what << ": " << Describe(info);
    return info.code == PJRT_Error_Code_OK;
  }

  void Await(PJRT_Event* event) {
    if (event == nullptr) return;
    auto await = KILN_ARGS(PJRT_Event_Await_Args);
    await.event = event;
    TakeError(api_, api_->PJRT_Event_Await(&await));
    auto destroy = KILN_ARGS(PJRT_Event_Destroy_Args);
    destroy.event = event;
    TakeError(api_, api_->PJRT_Event_Destroy(&destroy));
  }

  void Destroy(PJRT_Buffer* buffer) {
    auto args = KILN_ARGS(PJRT_Buffer_Destroy_Args);
    args.buffer = buffer;
    TakeError(api_, api_->PJRT_Buffer_Destroy(&args));
  }

  void Drop(size_t i) {
    Destroy(pool_[i].buffer);
    pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void Keep(Held held) {
    if (pool_.size() >= kMaxPool) Drop(Pick());
    pool_.push_back(std::move(held));
  }

  // Frees lent host memory whose done event has fired (all of it, waiting,
  // with `wait`).
  void ReleaseLent(bool wait) {
    for (size_t i = 0; i < lent_.size();) {
      bool ready = wait;
      if (!wait) {
        auto args = KILN_ARGS(PJRT_Event_IsReady_Args);
        args.event = lent_[i].done;
        TakeError(api_, api_->PJRT_Event_IsReady(&args));
        ready = args.is_ready;
      }
      if (!ready) {
        ++i;
        continue;
      }
      Await(lent_[i].done);
      lent_.erase(lent_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  bool Upload(int size_index) {
    const int64_t n = kSizes[size_index];
    auto data = std::make_unique<std::vector<float>>(n);
    for (float& v : *data) v = static_cast<float>(Uniform(-8, 8));
    const int device = Uniform(0, kDevices - 1);
    static constexpr PJRT_HostBufferSemantics kSemantics[] = {
        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
        PJRT_HostBufferSemantics_kImmutableZeroCopy,
        PJRT_HostBufferSemantics_kMutableZeroCopy,
    };
    const PJRT_HostBufferSemantics semantics = kSemantics[Uniform(0, 3)];
    std::vector<int64_t> dims = {n};
    auto args = KILN_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_;
    args.data = data->data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims.data();
    args.num_dims = 1;
    args.host_buffer_semantics = semantics;
    args.device = test_devices_[device];
    if (!Ok(api_->PJRT_Client_BufferFromHostBuffer(&args), "BufferFromHostBuffer")) {
      return false;
    }
    Held held{args.buffer, device, *data};
    if (semantics == PJRT_HostBufferSemantics_kImmutableOnlyDuringCall) {
      Await(args.done_with_host_buffer);
    } else {
      // The memory stays ours to keep alive until Kiln is done with it
      // (for zero-copy: until the buffer and whatever reuses its bytes are
      // gone).
      lent_.push_back({std::move(data), args.done_with_host_buffer});
    }
    Keep(std::move(held));
    return true;
  }

  // A buffer of size `n` on `device` from the pool (copied there when the
  // one picked is elsewhere), or a new upload. Returns its index.
  StatusOrIndex Operand(int64_t n, int device) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < pool_.size(); ++i) {
      if (static_cast<int64_t>(pool_[i].expected.size()) == n) {
        candidates.push_back(i);
      }
    }
    if (candidates.empty()) {
      int size_index = 0;
      while (kSizes[size_index] != n) ++size_index;
      if (!Upload(size_index)) return {false, 0};
      candidates.push_back(pool_.size() - 1);
    }
    size_t i = candidates[Uniform(0, candidates.size() - 1)];
    if (pool_[i].device == device) return {true, i};
    if (!CopyTo(i, device, nullptr)) return {false, 0};
    return {true, pool_.size() - 1};
  }
  bool CopyTo(size_t i, int device, PJRT_Memory* memory) {
    PJRT_Buffer* copy = nullptr;
    if (memory != nullptr) {
      auto args = KILN_ARGS(PJRT_Buffer_CopyToMemory_Args);
      args.buffer = pool_[i].buffer;
      args.dst_memory = memory;
      if (!Ok(api_->PJRT_Buffer_CopyToMemory(&args), "CopyToMemory")) return false;
      copy = args.dst_buffer;
    } else {
      auto args = KILN_ARGS(PJRT_Buffer_CopyToDevice_Args);
      args.buffer = pool_[i].buffer;
      args.dst_device = test_devices_[device];
      if (!Ok(api_->PJRT_Buffer_CopyToDevice(&args), "CopyToDevice")) return false;
      copy = args.dst_buffer;
    }
    Held held{copy, device, pool_[i].expected};
    Keep(std::move(held));
    return true;
  }

  bool Copy() {
    size_t i = Pick();
    const int device = Uniform(0, kDevices - 1);
    PJRT_Memory* memory = nullptr;
    if (Uniform(0, 2) == 0) {
      const auto& memories = test_memories_[device];
      memory = memories[Uniform(0, memories.size() - 1)];
    }
    return CopyTo(i, device, memory);
  }

  // Executes `program` on `device` over the pool entries `inputs`; the
  // first may be donated. Keeps the output with `expected`.
  bool Run(PJRT_LoadedExecutable* program, int device,
           std::vector<size_t> inputs, std::vector<float> expected,
           std::atomic<int64_t>& donations) {
    std::vector<PJRT_Buffer*> arguments;
    for (size_t i : inputs) arguments.push_back(pool_[i].buffer);
    const bool shared_input = inputs.size() > 1 && inputs[0] == inputs[1];
    // Donate the first argument half the time (never when it is also the
    // second: a donated buffer cannot be read again by the same call).
    const bool donate = !shared_input && Uniform(0, 1) == 0;
    std::vector<int64_t> non_donatable;
    if (!donate) non_donatable.push_back(0);
    std::vector<PJRT_Buffer*> outputs(1, nullptr);
    PJRT_Buffer** output_list = outputs.data();
    PJRT_Buffer* const* argument_list = arguments.data();
    PJRT_Event* complete = nullptr;
    const bool want_event = Uniform(0, 1) == 0;
    auto options = KILN_ARGS(PJRT_ExecuteOptions);
    options.non_donatable_input_indices = non_donatable.data();
    options.num_non_donatable_input_indices = non_donatable.size();
    auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = program;
    args.options = &options;
    args.argument_lists = &argument_list;
    args.num_devices = 1;
    args.num_args = arguments.size();
    args.output_lists = &output_list;
    args.device_complete_events = want_event ? &complete : nullptr;
    args.execute_device = test_devices_[device];
    if (!Ok(api_->PJRT_LoadedExecutable_Execute(&args), "Execute")) return false;
    if (want_event) {
      // Await it, or let it go unobserved.
      if (Uniform(0, 1) == 0) {
        Await(complete);
      } else {
        auto destroy = KILN_ARGS(PJRT_Event_Destroy_Args);
        destroy.event = complete;
        TakeError(api_, api_->PJRT_Event_Destroy(&destroy));
      }
    }
    if (donate) {
      // A donated argument is gone for every later use.
      auto deleted = KILN_ARGS(PJRT_Buffer_IsDeleted_Args);
      deleted.buffer = arguments[0];
      if (!Ok(api_->PJRT_Buffer_IsDeleted(&deleted), "IsDeleted")) return false;
      if (donations_expected_) {
        EXPECT_TRUE(deleted.is_deleted) << "a donated argument is not deleted";
        if (!deleted.is_deleted) return false;
      }
      if (deleted.is_deleted) {
        donations.fetch_add(1);
        Drop(inputs[0]);
      }
    }
    Keep(Held{outputs[0], device, std::move(expected)});
    return true;
  }

  int64_t PickSize() {
    // The largest size rarely: it is 300k elements.
    return kSizes[Uniform(0, 9) == 0 ? 4 : Uniform(0, 3)];
  }

  const Programs& ProgramsFor(int64_t n) {
    size_t k = 0;
    while (kSizes[k] != n) ++k;
    return (*programs_)[k];
  }

  bool Axpy(std::atomic<int64_t>& donations) {
    const int64_t n = PickSize();
    const int device = Uniform(0, kDevices - 1);
    StatusOrIndex x = Operand(n, device);
    if (!x.ok) return false;
    PJRT_Buffer* x_buffer = pool_[x.index].buffer;
    StatusOrIndex y = Operand(n, device);
    if (!y.ok) return false;
    // Operand may have added entries or dropped some from a full pool.
    size_t xi = 0;
    while (xi < pool_.size() && pool_[xi].buffer != x_buffer) ++xi;
    if (xi == pool_.size()) return true;  // dropped meanwhile
    std::vector<float> expected(n);
    for (int64_t k = 0; k < n; ++k) {
      float v = pool_[xi].expected[k] * 2 + pool_[y.index].expected[k];
      expected[k] = std::min(1000.0f, std::max(-1000.0f, v));
    }
    return Run(ProgramsFor(n).axpy, device, {xi, y.index}, std::move(expected),
               donations);
  }

  bool Loop(std::atomic<int64_t>& donations) {
    const int64_t n = PickSize();
    const int device = Uniform(0, kDevices - 1);
    StatusOrIndex x = Operand(n, device);
    if (!x.ok) return false;
    std::vector<float> expected = pool_[x.index].expected;
    for (float& v : expected) v += 10;
    return Run(ProgramsFor(n).loop, device, {x.index}, std::move(expected),
               donations);
  }

  bool Max() {
    const int64_t n = PickSize();
    const int device = Uniform(0, kDevices - 1);
    StatusOrIndex x = Operand(n, device);
    if (!x.ok) return false;
    const std::vector<float>& in = pool_[x.index].expected;
    float expected = *std::max_element(in.begin(), in.end());
    std::vector<PJRT_Buffer*> arguments = {pool_[x.index].buffer};
    std::vector<PJRT_Buffer*> outputs(1, nullptr);
    PJRT_Buffer** output_list = outputs.data();
    PJRT_Buffer* const* argument_list = arguments.data();
    auto options = KILN_ARGS(PJRT_ExecuteOptions);
    auto args = KILN_ARGS(PJRT_LoadedExecutable_Execute_Args);
    args.executable = ProgramsFor(n).max;
    args.options = &options;
    args.argument_lists = &argument_list;
    args.num_devices = 1;
    args.num_args = 1;
    args.output_lists = &output_list;
    args.execute_device = test_devices_[device];
    if (!Ok(api_->PJRT_LoadedExecutable_Execute(&args), "Execute max")) {
      return false;
    }
    // A scalar: checked now rather than kept with the vectors.
    pool_.push_back(Held{outputs[0], device, {expected}});
    const bool ok = Read(pool_.size() - 1);
    Drop(pool_.size() - 1);
    return ok;
  }

  bool Read(size_t i) {
    const Held& held = pool_[i];
    std::vector<float> host(held.expected.size());
    auto args = KILN_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.src = held.buffer;
    args.dst = host.data();
    args.dst_size = host.size() * sizeof(float);
    if (!Ok(api_->PJRT_Buffer_ToHostBuffer(&args), "ToHostBuffer")) return false;
    auto await = KILN_ARGS(PJRT_Event_Await_Args);
    await.event = args.event;
    ErrorInfo done = TakeError(api_, api_->PJRT_Event_Await(&await));
    auto destroy = KILN_ARGS(PJRT_Event_Destroy_Args);
    destroy.event = args.event;
    TakeError(api_, api_->PJRT_Event_Destroy(&destroy));
    EXPECT_EQ(done.code, PJRT_Error_Code_OK) << Describe(done);
    if (done.code != PJRT_Error_Code_OK) return false;
    for (size_t k = 0; k < host.size(); ++k) {
      if (host[k] != held.expected[k]) {
        ADD_FAILURE() << "element " << k << " of " << host.size() << " is "
                      << host[k] << ", the model says " << held.expected[k];
        return false;
      }
    }
    return true;
  }

 public:
  std::vector<PJRT_Device*> test_devices_;
  std::vector<std::vector<PJRT_Memory*>> test_memories_;
  const std::vector<Programs>* programs_ = nullptr;
  bool donations_expected_ = true;

 private:
  const PJRT_Api* api_;
  PJRT_Client* client_;
  std::mt19937_64 rng_;
  std::vector<Held> pool_;
  std::vector<Lent> lent_;
};

TEST_F(StressTest, ThreadsRunRandomWorkOnFourDevicesAndEveryValueMatchesTheModel) {
  devices_ = Devices();
  ASSERT_EQ(devices_.size(), static_cast<size_t>(kDevices));
  for (PJRT_Device* device : devices_) memories_.push_back(Memories(device));
  ASSERT_NO_FATAL_FAILURE(CompileAll());

  const char* seconds_text = std::getenv("KILN_STRESS_SECONDS");
  const double seconds = seconds_text ? std::atof(seconds_text) : 0;
  const char* seed_text = std::getenv("KILN_STRESS_SEED");
  const uint64_t seed = seed_text ? std::strtoull(seed_text, nullptr, 10)
                                  : std::random_device{}();
  std::printf("stress: seed %llu (KILN_STRESS_SEED), %s\n",
              static_cast<unsigned long long>(seed),
              seconds > 0 ? (std::to_string(seconds) + " s per thread").c_str()
                          : (std::to_string(kDefaultOpsPerThread) +
                             " actions per thread")
                                .c_str());
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(seconds);
  std::atomic<int> failures{0};
  std::atomic<int64_t> actions{0};
  auto work = [&](int thread) {
    Worker worker(api_, client_, seed * 1000003u + thread);
    worker.test_devices_ = devices_;
    worker.test_memories_ = memories_;
    worker.programs_ = &programs_;
    for (int i = 0;; ++i) {
      if (seconds > 0 ? std::chrono::steady_clock::now() >= deadline
                      : i >= kDefaultOpsPerThread) {
        break;
      }
      if (!worker.Step(executes_, reads_, copies_, donations_)) {
        failures.fetch_add(1);
        break;
      }
      actions.fetch_add(1);
    }
    worker.Finish();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& thread : threads) thread.join();
  std::printf("stress: %lld actions: %lld executes (%lld donating), %lld "
              "copies, %lld host reads checked\n",
              static_cast<long long>(actions.load()),
              static_cast<long long>(executes_.load()),
              static_cast<long long>(donations_.load()),
              static_cast<long long>(copies_.load()),
              static_cast<long long>(reads_.load()));
  EXPECT_EQ(failures.load(), 0) << "seed " << seed;
  EXPECT_GT(executes_.load(), 0);
  DestroyAll();
}

}  // namespace
}  // namespace kiln::testing
