// Dense math, f32, in one run so the numbers share the machine's state:
//
//   BM_Sgemm/<n>          dnnl_sgemm on n x n operands, called directly: the
//                         ceiling Kiln's dot is measured against
//   BM_DotPlan/<n>        a compiled program of one n x n dot_general, run
//                         by exec::Execute (oneDNN's matmul)
//   BM_DotPlanReference/<n>
//                         the same program compiled with use_onednn off:
//                         Kiln's own matmul (the reference tier)
//   BM_DotPlanSmall/<n>, BM_DotPlanSmallReference/<n>
//                         the same for small n, with oneDNN taking every
//                         size (CompileOptions::onednn_min_multiply_adds 0):
//                         where a oneDNN call's fixed cost shows
//   BM_ConvPlan/<shape>   a compiled program of one NHWC / HWIO convolution
//                         (the shapes of ResNet-50's stages, batch 1)
//   BM_ConvPlanReference/<shape>
//                         the same with use_onednn off (transposes into
//                         Kiln's canonical layout and its direct loop)
//   BM_ConvKernel/<shape>/<layouts>
//                         the oneDNN convolution kernel alone, with
//                         exec::OneDnnLayouts 0 (program layouts), 1 (blocked
//                         weights) or 2 (all blocked, reordered per run)
//
//   build/bin/dense_bench --benchmark_filter='Sgemm|DotPlan'
//
// Counters: GFLOPS, two per multiply-add, over wall time.
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/strings.h"
#include "compile/compiler.h"
#include "exec/executor.h"
#include "exec/kernels/onednn.h"
#include "parse/parse.h"

namespace kiln {
namespace {

template <typename T>
T Take(StatusOr<T> value) {
  if (!value.ok()) {
    std::fprintf(stderr, "dense_bench: %s\n",
                 value.status().ToString().c_str());
    std::abort();
  }
  return std::move(value).value();
}

std::vector<float> RandomFloats(int64_t count) {
  std::mt19937 engine(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = dist(engine);
  return values;
}

// Hands out one buffer allocated (and touched) once.
class FixedOutput : public exec::OutputAllocator {
 public:
  explicit FixedOutput(int64_t bytes)
      : buffer_(Take(exec::AllocateAligned(bytes))) {
    std::memset(buffer_.data(), 0, bytes);
  }
  StatusOr<void*> Allocate(int, const exec::ValueSpec&) override {
    return static_cast<void*>(buffer_.data());
  }

 private:
  exec::AlignedBuffer buffer_;
};

void SetFlops(benchmark::State& state, double flops) {
  state.counters["GFLOPS"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Compiles `text` and runs it on `inputs` once per iteration.
void RunProgram(benchmark::State& state, const std::string& text,
                const std::vector<const std::vector<float>*>& inputs,
                bool use_onednn, int64_t onednn_min_multiply_adds = 0) {
  auto module = Take(parse::ParseModule(text, "dense.mlir"));
  compile::CompileOptions options;
  options.use_onednn = use_onednn;
  options.onednn_min_multiply_adds = onednn_min_multiply_adds;
  auto plan = Take(compile::Compile(*module, options));
  FixedOutput output(plan->outputs()[0].byte_size());
  std::vector<const void*> arguments;
  for (const auto* input : inputs) arguments.push_back(input->data());
  for (auto _ : state) {
    auto outputs = Take(exec::Execute(*plan, arguments, output));
    benchmark::DoNotOptimize(outputs);
  }
}

std::string DotProgram(int64_t n) {
  std::string t = StrCat("tensor<", n, "x", n, "xf32>");
  return StrCat("func.func @main(%l: ", t, ", %r: ", t, ") -> ", t,
                " {\n  %d = stablehlo.dot_general %l, %r, contracting_dims = "
                "[1] x [0] : (",
                t, ", ", t, ") -> ", t, "\n  return %d : ", t, "\n}");
}

void DotPlan(benchmark::State& state, bool use_onednn) {
  const int64_t n = state.range(0);
  std::vector<float> lhs = RandomFloats(n * n), rhs = RandomFloats(n * n);
  RunProgram(state, DotProgram(n), {&lhs, &rhs}, use_onednn);
  SetFlops(state, 2.0 * n * n * n);
}

void BM_DotPlan(benchmark::State& state) { DotPlan(state, true); }
void BM_DotPlanReference(benchmark::State& state) { DotPlan(state, false); }

void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a = RandomFloats(n * n), b = RandomFloats(n * n), c(n * n);
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
               c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * n * n * n);
}

BENCHMARK(BM_Sgemm)->Arg(256)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(BM_DotPlan)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DotPlanReference)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// [m, k] x [k, n] products of the suite's models (BERT-base's projections
// and feed-forward block at 1024 tokens, the MLP's layers at batch 128),
// each as: 0 Kiln's compiled dot_general, 1 dnnl_sgemm, 2 oneDNN's matmul
// over weights it laid out itself once beforehand (format `any`; the
// reorder is not timed), 3 the same with the reorder in every run.
struct MatmulShape {
  int64_t m, k, n;
};
const MatmulShape kMatmulShapes[] = {{1024, 768, 768},
                                     {1024, 768, 3072},
                                     {1024, 3072, 768},
                                     {128, 784, 512},
                                     {128, 512, 512}};

std::string MatmulProgram(const MatmulShape& s) {
  std::string l = StrCat("tensor<", s.m, "x", s.k, "xf32>");
  std::string r = StrCat("tensor<", s.k, "x", s.n, "xf32>");
  std::string o = StrCat("tensor<", s.m, "x", s.n, "xf32>");
  return StrCat("func.func @main(%l: ", l, ", %r: ", r, ") -> ", o,
                " {\n  %d = stablehlo.dot_general %l, %r, contracting_dims = "
                "[1] x [0] : (",
                l, ", ", r, ") -> ", o, "\n  return %d : ", o, "\n}");
}

void BM_MatmulShape(benchmark::State& state) {
  const MatmulShape& s = kMatmulShapes[state.range(0)];
  std::vector<float> a = RandomFloats(s.m * s.k), b = RandomFloats(s.k * s.n);
  std::vector<float> c(s.m * s.n);
  switch (state.range(1)) {
    case 0:
      RunProgram(state, MatmulProgram(s), {&a, &b}, true);
      break;
    case 1:
      for (auto _ : state) {
        dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
                   0.0f, c.data(), s.n);
        benchmark::DoNotOptimize(c.data());
      }
      break;
    default: {
      using tag = dnnl::memory::format_tag;
      using dt = dnnl::memory::data_type;
      dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      dnnl::memory::desc a_desc({s.m, s.k}, dt::f32, tag::ab);
      dnnl::memory::desc b_plain({s.k, s.n}, dt::f32, tag::ab);
      dnnl::memory::desc b_any({s.k, s.n}, dt::f32, tag::any);
      dnnl::memory::desc c_desc({s.m, s.n}, dt::f32, tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc, b_any, c_desc),
                                      engine);
      dnnl::stream stream(engine);
      dnnl::memory a_mem(a_desc, engine, a.data());
      dnnl::memory b_user(b_plain, engine, b.data());
      dnnl::memory b_mem(pd.weights_desc(), engine);
      dnnl::reorder(b_user, b_mem).execute(stream, b_user, b_mem);
      stream.wait();
      dnnl::memory c_mem(c_desc, engine, c.data());
      dnnl::matmul matmul(pd);
      const bool reorder_each_run = state.range(1) == 3;
      dnnl::reorder reorder(b_user, b_mem);
      for (auto _ : state) {
        if (reorder_each_run) reorder.execute(stream, b_user, b_mem);
        matmul.execute(stream, {{DNNL_ARG_SRC, a_mem},
                                {DNNL_ARG_WEIGHTS, b_mem},
                                {DNNL_ARG_DST, c_mem}});
        stream.wait();
      }
      state.SetLabel(pd.impl_info_str());
    }
  }
  SetFlops(state, 2.0 * s.m * s.k * s.n);
}
BENCHMARK(BM_MatmulShape)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1, 2, 3}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Small products, where a oneDNN call's fixed cost shows.
void BM_DotPlanSmall(benchmark::State& state) { DotPlan(state, true); }
void BM_DotPlanSmallReference(benchmark::State& state) {
  DotPlan(state, false);
}
BENCHMARK(BM_DotPlanSmall)
    ->RangeMultiplier(2)
    ->Range(4, 64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DotPlanSmallReference)
    ->RangeMultiplier(2)
    ->Range(4, 64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// NHWC input [1, size, size, in], HWIO kernel [window, window, in, out],
// "same" padding.
struct ConvShape {
  int64_t size, in, out, window, stride;
};

// ResNet-50's 3x3 convolutions at stages 1 and 3, a 1x1 expansion, the
// stem, and the last stage's 1x1 reduction and 3x3 (weights large beside
// their 7x7 outputs: there a per-run weight reorder costs the most).
const ConvShape kConvShapes[] = {{56, 64, 64, 3, 1},   {14, 256, 256, 3, 1},
                                 {56, 64, 256, 1, 1},  {224, 3, 64, 7, 2},
                                 {7, 2048, 512, 1, 1}, {7, 512, 512, 3, 1}};

int64_t OutputSize(const ConvShape& c) {
  return (c.size + c.stride - 1) / c.stride;
}

int64_t LowPadding(const ConvShape& c) {
  int64_t total =
      std::max<int64_t>(0, (OutputSize(c) - 1) * c.stride + c.window - c.size);
  return total / 2;
}

int64_t HighPadding(const ConvShape& c) {
  int64_t total =
      std::max<int64_t>(0, (OutputSize(c) - 1) * c.stride + c.window - c.size);
  return total - total / 2;
}

double ConvFlops(const ConvShape& c) {
  return 2.0 * OutputSize(c) * OutputSize(c) * c.out * c.in * c.window *
         c.window;
}

std::string ConvProgram(const ConvShape& c) {
  int64_t o = OutputSize(c);
  std::string x = StrCat("tensor<1x", c.size, "x", c.size, "x", c.in, "xf32>");
  std::string k = StrCat("tensor<", c.window, "x", c.window, "x", c.in, "x",
                         c.out, "xf32>");
  std::string y = StrCat("tensor<1x", o, "x", o, "x", c.out, "xf32>");
  int64_t lo = LowPadding(c), hi = HighPadding(c);
  return StrCat(
      "func.func @main(%x: ", x, ", %k: ", k, ") -> ", y,
      " {\n  %c = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, "
      "f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [",
      c.stride, ", ", c.stride, "], pad = [[", lo, ", ", hi, "], [", lo, ", ",
      hi,
      "]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (", x,
      ", ", k, ") -> ", y, "\n  return %c : ", y, "\n}");
}

void ConvPlan(benchmark::State& state, bool use_onednn) {
  const ConvShape& c = kConvShapes[state.range(0)];
  std::vector<float> x = RandomFloats(c.size * c.size * c.in);
  std::vector<float> k = RandomFloats(c.window * c.window * c.in * c.out);
  RunProgram(state, ConvProgram(c), {&x, &k}, use_onednn);
  SetFlops(state, ConvFlops(c));
  state.SetLabel(StrCat(c.size, "x", c.size, "x", c.in, " ", c.window, "x",
                        c.window, "/", c.stride, " -> ", c.out));
}

void BM_ConvPlan(benchmark::State& state) { ConvPlan(state, true); }
void BM_ConvPlanReference(benchmark::State& state) { ConvPlan(state, false); }

void BM_ConvKernel(benchmark::State& state) {
  const ConvShape& c = kConvShapes[state.range(0)];
  const int64_t o = OutputSize(c);
  exec::OneDnnConvolutionParams p;
  // Logical [N, C, H, W] / [O, I, H, W] at NHWC / HWIO strides.
  p.input_dims = {1, c.in, c.size, c.size};
  p.input_strides = {c.size * c.size * c.in, 1, c.size * c.in, c.in};
  p.kernel_dims = {c.out, c.in, c.window, c.window};
  p.kernel_strides = {1, c.out, c.window * c.in * c.out, c.in * c.out};
  p.output_dims = {1, c.out, o, o};
  p.output_strides = {o * o * c.out, 1, o * c.out, c.out};
  p.window_strides = {c.stride, c.stride};
  p.padding_low = {LowPadding(c), LowPadding(c)};
  p.padding_high = {HighPadding(c), HighPadding(c)};
  p.rhs_dilation = {1, 1};
  p.layouts = static_cast<exec::OneDnnLayouts>(state.range(1));
  exec::OneDnnKernel made = exec::MakeOneDnnConvolutionKernel(p);
  if (!made.kernel) {
    state.SkipWithError("oneDNN has no kernel for these layouts");
    return;
  }
  std::vector<float> x = RandomFloats(c.size * c.size * c.in);
  std::vector<float> k = RandomFloats(c.window * c.window * c.in * c.out);
  std::vector<float> y(o * o * c.out);
  std::vector<std::byte> scratch(made.scratch_bytes + 64);
  std::vector<exec::Slot> slots(4);
  slots[0].shape = {ir::ElementType::kF32, {1, c.size, c.size, c.in}};
  slots[1].shape = {ir::ElementType::kF32, {c.window, c.window, c.in, c.out}};
  slots[2].shape = {ir::ElementType::kF32, {1, o, o, c.out}};
  slots[3].shape = {ir::ElementType::kUI8, {made.scratch_bytes}};
  exec::RunContext ctx(slots, exec::RunOptions{});
  ctx.set_slot(0, reinterpret_cast<std::byte*>(x.data()));
  ctx.set_slot(1, reinterpret_cast<std::byte*>(k.data()));
  ctx.set_slot(2, reinterpret_cast<std::byte*>(y.data()));
  // 64-byte aligned, as the arena's slots are.
  auto address = reinterpret_cast<uintptr_t>(scratch.data());
  ctx.set_slot(3, reinterpret_cast<std::byte*>((address + 63) / 64 * 64));
  exec::Step step;
  step.inputs = {0, 1};
  step.outputs = {2};
  if (made.scratch_bytes > 0) step.outputs.push_back(3);
  for (auto _ : state) {
    Status status = made.kernel->Run(ctx, step);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      return;
    }
  }
  SetFlops(state, ConvFlops(c));
  state.SetLabel(made.implementation);
}

BENCHMARK(BM_ConvPlan)
    ->DenseRange(0, 5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvPlanReference)
    ->DenseRange(0, 5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvKernel)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {0, 1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln

BENCHMARK_MAIN();
