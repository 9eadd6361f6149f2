#include "exec/kernels/rng.h"

#include <cmath>
#include <cstring>

#include "exec/executor.h"
#include "exec/kernels/element.h"

namespace kiln::exec {
namespace {

uint32_t RotateLeft(uint32_t v, int distance) {
  return (v << distance) | (v >> (32 - distance));
}

// Threefry-2x32 with 20 rounds (Salmon et al., SC 2011), as XLA runs it.
void ThreeFry2x32(const uint32_t key[2], uint32_t x[2]) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], kRotations[(group % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
}

// Philox-4x32 with 10 rounds, as XLA runs it.
void Philox4x32(uint32_t key0, uint32_t key1, uint32_t x[4]) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(x[0]) * 0xD2511F53u;
    uint64_t p1 = static_cast<uint64_t>(x[2]) * 0xCD9E8D57u;
    uint32_t y[4] = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key0,
                     static_cast<uint32_t>(p1),
                     static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key1,
                     static_cast<uint32_t>(p0)};
    std::memcpy(x, y, sizeof(y));
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
}

void StoreBits(std::byte* out, int64_t index, int bytes, uint64_t bits) {
  std::memcpy(out + index * bytes, &bits, bytes);  // little-endian low bytes
}

class RngBitGeneratorKernel : public Kernel {
 public:
  RngBitGeneratorKernel(RngAlgorithm algorithm, int64_t state_size,
                        ArrayShape output)
      : algorithm_(algorithm),
        state_size_(state_size),
        output_(std::move(output)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    std::vector<uint64_t> state(state_size_);
    std::memcpy(state.data(), ctx.slot(step.inputs[0]), state_size_ * 8);
    std::byte* out = ctx.slot(step.outputs[1]);
    std::vector<uint64_t> new_state = state;
    if (algorithm_ == RngAlgorithm::kThreeFry) {
      new_state[1] = ThreeFry(state[0], state[1], out);
    } else {
      // The 128-bit counter is state[1..2], or (state[1], state[0]) for a
      // 2-element state (XLA's expander).
      uint64_t low = state[1];
      uint64_t high = state_size_ >= 3 ? state[2] : state[0];
      uint64_t new_low = Philox(state[0], low, high, out);
      new_state[1] = new_low;
      if (state_size_ >= 3) {
        new_state[2] = high + (new_low < low ? 1 : 0);
      }
    }
    std::memcpy(ctx.slot(step.outputs[0]), new_state.data(), state_size_ * 8);
    return OkStatus();
  }

 private:
  // Returns the new counter.
  uint64_t ThreeFry(uint64_t key64, uint64_t counter, std::byte* out) const {
    uint32_t key[2] = {static_cast<uint32_t>(key64),
                       static_cast<uint32_t>(key64 >> 32)};
    int bits = ir::BitWidth(output_.type);
    int bytes = ir::StorageBytes(output_.type);
    int64_t count = output_.num_elements();
    auto block = [&](uint64_t input, uint32_t x[2]) {
      x[0] = static_cast<uint32_t>(input);
      x[1] = static_cast<uint32_t>(input >> 32);
      ThreeFry2x32(key, x);
    };
    if (bits == 64) {
      for (int64_t i = 0; i < count; ++i) {
        uint32_t x[2];
        block(counter + static_cast<uint64_t>(i), x);
        StoreBits(
            out, i, 8,
            static_cast<uint64_t>(x[0]) | (static_cast<uint64_t>(x[1]) << 32));
      }
      return counter + static_cast<uint64_t>(count);
    }
    // 32 bits and narrower: the shape is split in halves along one
    // dimension (the first even one, else the largest); each block gives
    // the element pair (2h, 2h + 1) of that dimension.
    const std::vector<int64_t>& dims = output_.dims;
    int64_t rank = output_.rank();
    if (rank == 0) {
      uint32_t x[2];
      block(counter, x);
      StoreBits(out, 0, bytes, x[0]);
      return counter + 1;
    }
    int64_t split = -1;
    for (int64_t d = 0; d < rank; ++d) {
      if (dims[d] % 2 == 0) {
        split = d;
        break;
      }
    }
    if (split < 0) {
      split = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (dims[d] > dims[split]) split = d;
      }
    }
    std::vector<int64_t> half = dims;
    half[split] = (dims[split] + 1) / 2;
    int64_t half_count = NumElements(half);
    std::vector<int64_t> half_strides = RowMajorStrides(half);
    std::vector<int64_t> strides = RowMajorStrides(dims);
    std::vector<int64_t> index(rank, 0);
    for (int64_t h = 0; h < half_count; ++h) {
      uint32_t x[2];
      block(counter + static_cast<uint64_t>(h), x);
      int64_t base = 0;
      for (int64_t d = 0; d < rank; ++d) {
        base += (d == split ? index[d] * 2 : index[d]) * strides[d];
      }
      StoreBits(out, base, bytes, x[0]);
      if (index[split] * 2 + 1 < dims[split]) {
        StoreBits(out, base + strides[split], bytes, x[1]);
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < half[d]) break;
        index[d] = 0;
      }
    }
    (void)half_strides;
    return counter + static_cast<uint64_t>(half_count);
  }

  // Returns the new low word of the counter.
  uint64_t Philox(uint64_t key64, uint64_t low, uint64_t high,
                  std::byte* out) const {
    uint32_t key0 = static_cast<uint32_t>(key64),
             key1 = static_cast<uint32_t>(key64 >> 32);
    int bits = ir::BitWidth(output_.type);
    int bytes = ir::StorageBytes(output_.type);
    int64_t count = output_.num_elements();
    int64_t words = bits == 64 ? count * 2 : count;  // 32-bit words needed
    int64_t blocks = (words + 3) / 4;
    for (int64_t b = 0; b < blocks; ++b) {
      uint64_t lo = low + static_cast<uint64_t>(b);
      uint64_t hi = high + (lo < low ? 1 : 0);
      uint32_t x[4] = {
          static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
          static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)};
      Philox4x32(key0, key1, x);
      if (bits == 64) {
        uint64_t pair[2] = {x[0] | (static_cast<uint64_t>(x[1]) << 32),
                            x[2] | (static_cast<uint64_t>(x[3]) << 32)};
        for (int j = 0; j < 2; ++j) {
          if (b * 2 + j < count) StoreBits(out, b * 2 + j, 8, pair[j]);
        }
      } else {
        for (int j = 0; j < 4; ++j) {
          if (b * 4 + j < count) StoreBits(out, b * 4 + j, bytes, x[j]);
        }
      }
    }
    return low + static_cast<uint64_t>(blocks);
  }

  RngAlgorithm algorithm_;
  int64_t state_size_;
  ArrayShape output_;
};

class RngKernel : public Kernel {
 public:
  RngKernel(bool normal, ArrayShape shape)
      : normal_(normal), shape_(std::move(shape)) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    ElementType type = shape_.type;
    const std::byte* a = ctx.slot(step.inputs[0]);
    const std::byte* b = ctx.slot(step.inputs[1]);
    std::byte* out = ctx.slot(step.outputs[0]);
    int64_t count = shape_.num_elements();
    for (int64_t i = 0; i < count; ++i) {
      uint32_t x[4] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                       0, 0};
      Philox4x32(0x2545F491u, 0x9E3779B9u, x);
      double u1 = (x[0] >> 8) * (1.0 / 16777216.0);
      double u2 = (x[1] >> 8) * (1.0 / 16777216.0);
      if (ir::IsFloat(type)) {
        double lo = LoadDouble(type, a, 0), hi = LoadDouble(type, b, 0);
        double value;
        if (normal_) {
          double radius = std::sqrt(-2.0 * std::log(std::max(u1, 1e-12)));
          value = lo + hi * radius * std::cos(6.283185307179586 * u2);
        } else {
          value = lo + (hi - lo) * u1;
          if (value >= hi && hi > lo) value = lo;
        }
        StoreDouble(type, out, i, value);
      } else {
        int64_t lo = LoadInt(type, a, 0), hi = LoadInt(type, b, 0);
        uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
        uint64_t bits = (static_cast<uint64_t>(x[2]) << 32) | x[3];
        int64_t value =
            range == 0 ? lo : lo + static_cast<int64_t>(bits % range);
        StoreInt(type, out, i, value);
      }
    }
    return OkStatus();
  }

 private:
  bool normal_;
  ArrayShape shape_;
};

class Threefry2x32Kernel : public Kernel {
 public:
  explicit Threefry2x32Kernel(int64_t count) : count_(count) {}
  Status Run(RunContext& ctx, const Step& step) const override {
    const uint32_t* key0 = ctx.In<uint32_t>(step, 0);
    const uint32_t* key1 = ctx.In<uint32_t>(step, 1);
    const uint32_t* x0 = ctx.In<uint32_t>(step, 2);
    const uint32_t* x1 = ctx.In<uint32_t>(step, 3);
    uint32_t* y0 = ctx.Out<uint32_t>(step, 0);
    uint32_t* y1 = ctx.Out<uint32_t>(step, 1);
    for (int64_t i = 0; i < count_; ++i) {
      const uint32_t key[2] = {key0[i], key1[i]};
      uint32_t x[2] = {x0[i], x1[i]};
      ThreeFry2x32(key, x);
      y0[i] = x[0];
      y1[i] = x[1];
    }
    return OkStatus();
  }

 private:
  int64_t count_;
};

}  // namespace

std::unique_ptr<Kernel> MakeThreefry2x32Kernel(int64_t count) {
  return std::make_unique<Threefry2x32Kernel>(count);
}

std::unique_ptr<Kernel> MakeRngBitGeneratorKernel(RngAlgorithm algorithm,
                                                  int64_t state_size,
                                                  ArrayShape output) {
  return std::make_unique<RngBitGeneratorKernel>(algorithm, state_size,
                                                 std::move(output));
}

std::unique_ptr<Kernel> MakeRngKernel(bool normal, ArrayShape shape) {
  return std::make_unique<RngKernel>(normal, std::move(shape));
}

}  // namespace kiln::exec
