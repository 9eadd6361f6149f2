#include "runtime/gloo_collectives.h"

#include <signal.h>

#include <cstring>
#include <exception>
#include <string_view>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "base/strings.h"
#include "exec/kernels/element.h"

namespace kiln::runtime {
namespace {

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);

// Gloo's reduction for `reduction` over T.
template <typename T>
ReduceFunction ReductionFor(exec::ProcessReduction reduction) {
  switch (reduction) {
    case exec::ProcessReduction::kSum:
      return &gloo::sum<T>;
    case exec::ProcessReduction::kProduct:
      return &gloo::product<T>;
    case exec::ProcessReduction::kMax:
      return &gloo::max<T>;
    case exec::ProcessReduction::kMin:
      return &gloo::min<T>;
  }
  return nullptr;
}

// One all_reduce over T, in place on `out`: Gloo reduces the outputs when
// no input is set, and counts elements by the pointer's type, which the
// reduction function must agree with.
template <typename T>
void RunAllReduce(const std::shared_ptr<gloo::Context>& context,
                  exec::ProcessReduction reduction, std::byte* out,
                  int64_t count, std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions options(context);
  options.setOutput(reinterpret_cast<T*>(out), static_cast<size_t>(count));
  options.setReduceFunction(ReductionFor<T>(reduction));
  options.setTimeout(timeout);
  gloo::allreduce(options);
}

using AllReduceRunner = void (*)(const std::shared_ptr<gloo::Context>&,
                                 exec::ProcessReduction, std::byte*, int64_t,
                                 std::chrono::milliseconds);

// The runner for `type`, or null for a type Gloo cannot reduce.
AllReduceRunner AllReduceRunnerFor(ir::ElementType type) {
  switch (type) {
    case ir::ElementType::kI8:
      return &RunAllReduce<int8_t>;
    case ir::ElementType::kI16:
      return &RunAllReduce<int16_t>;
    case ir::ElementType::kI32:
      return &RunAllReduce<int32_t>;
    case ir::ElementType::kI64:
      return &RunAllReduce<int64_t>;
    case ir::ElementType::kUI8:
      return &RunAllReduce<uint8_t>;
    case ir::ElementType::kUI16:
      return &RunAllReduce<uint16_t>;
    case ir::ElementType::kUI32:
      return &RunAllReduce<uint32_t>;
    case ir::ElementType::kUI64:
      return &RunAllReduce<uint64_t>;
    case ir::ElementType::kF32:
      return &RunAllReduce<float>;
    case ir::ElementType::kF64:
      return &RunAllReduce<double>;
    default:
      return nullptr;
  }
}

std::string GroupName(const std::vector<int>& devices) {
  return StrCat("[", StrJoin(devices, ","), "]");
}

// Turns what Gloo throws into a Status: a timeout is DEADLINE_EXCEEDED,
// any other transport failure (a peer that closed its sockets) UNAVAILABLE.
template <typename Body>
Status CatchGloo(std::string_view what, const std::vector<int>& devices,
                 int rank, Body body) {
  try {
    body();
    return OkStatus();
  } catch (const gloo::IoException& error) {
    std::string_view message = error.what();
    const std::string context =
        StrCat(what, " of rank ", rank, " of devices ", GroupName(devices),
               " across processes: ");
    if (message.find("Timed out") != std::string_view::npos ||
        message.find("timed out") != std::string_view::npos) {
      return DeadlineExceededError(context, message);
    }
    return UnavailableError(context, message);
  } catch (const std::exception& error) {
    return UnavailableError(what, " of rank ", rank, " of devices ",
                            GroupName(devices),
                            " across processes failed: ", error.what());
  }
}

}  // namespace

// Gloo's rendezvous store over the job's key-value store. Gloo expects
// failures as exceptions; they are caught again in CatchGloo.
class GlooCollectives::StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(std::shared_ptr<KeyValueStore> store,
               std::chrono::milliseconds timeout)
      : store_(std::move(store)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    Status status =
        store_->Put(key, std::string_view(data.data(), data.size()));
    if (!status.ok()) throw gloo::IoException(status.ToString());
  }

  std::vector<char> get(const std::string& key) override {
    StatusOr<std::string> value = store_->Get(key, timeout_);
    if (!value.ok()) Throw(key, value.status());
    return std::vector<char>(value->begin(), value->end());
  }

  void wait(const std::vector<std::string>& keys) override {
    wait(keys, timeout_);
  }

  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    for (const std::string& key : keys) {
      StatusOr<std::string> value = store_->Get(key, timeout);
      if (!value.ok()) Throw(key, value.status());
    }
  }

 private:
  [[noreturn]] static void Throw(const std::string& key, const Status& status) {
    const bool timed_out = status.code() == StatusCode::kDeadlineExceeded;
    throw gloo::IoException(
        StrCat(timed_out ? "Timed out" : "failed", " waiting for key ", key,
               " in the key-value store: ", status.ToString()));
  }

  std::shared_ptr<KeyValueStore> store_;
  std::chrono::milliseconds timeout_;
};

StatusOr<std::shared_ptr<GlooCollectives>> GlooCollectives::Create(
    std::shared_ptr<KeyValueStore> store, const std::string& hostname,
    std::chrono::milliseconds timeout) {
  if (store == nullptr) {
    return InvalidArgumentError(
        "collectives between processes need a key-value store");
  }
  // A write to a peer that died raises SIGPIPE, whose default action ends
  // the process; ignored, the write fails and the collective reports it.
  // A handler the host installed is left alone.
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 &&
      current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
  std::shared_ptr<GlooCollectives> collectives(new GlooCollectives());
  collectives->store_ = store;
  collectives->adapter_ = std::make_unique<StoreAdapter>(store, timeout);
  collectives->timeout_ = timeout;
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    collectives->device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& error) {
    return UnavailableError("cannot open Gloo's TCP transport on \"", hostname,
                            "\": ", error.what());
  }
  return collectives;
}

GlooCollectives::~GlooCollectives() {
  // Contexts close their pairs before the device goes.
  slots_.clear();
}

StatusOr<std::shared_ptr<gloo::Context>> GlooCollectives::ContextFor(
    const std::vector<int>& devices, int rank) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot>& entry = slots_[Key{devices, rank}];
    if (entry == nullptr) entry = std::make_shared<Slot>();
    slot = entry;
  }
  // Only this rank's creation waits here; the group's other ranks in this
  // process make theirs at the same time under their own slots.
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->context != nullptr) return slot->context;
  const int size = static_cast<int>(devices.size());
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(timeout_);
  const std::string prefix =
      StrCat("kiln/gloo/", StrJoin(devices, ","), "/", slot->generation);
  RETURN_IF_ERROR(CatchGloo("connecting", devices, rank, [&] {
    gloo::rendezvous::PrefixStore store(prefix, *adapter_);
    context->connectFullMesh(store, device_);
  }));
  slot->context = context;
  return slot->context;
}

void GlooCollectives::Drop(const std::vector<int>& devices, int rank) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = slots_.find(Key{devices, rank});
    if (it == slots_.end()) return;
    slot = it->second;
  }
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->context == nullptr) return;
  slot->context.reset();
  ++slot->generation;
}

Status GlooCollectives::AllReduce(const std::vector<int>& devices, int rank,
                                  ir::ElementType type,
                                  exec::ProcessReduction reduction,
                                  const std::byte* in, std::byte* out,
                                  int64_t count) {
  if (type == ir::ElementType::kBF16 || type == ir::ElementType::kF16) {
    // Gloo reduces no 16-bit floats: they cross as f32 (exactly) and each
    // result rounds once to the type, to nearest even. (The devices of one
    // process round after every addition; this is never further from the
    // exact sum.)
    const bool bf16 = type == ir::ElementType::kBF16;
    std::vector<float> wide(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, in + 2 * i, 2);
      wide[i] = bf16 ? exec::BF16ToFloat(bits) : exec::HalfToFloat(bits);
    }
    auto* data = reinterpret_cast<std::byte*>(wide.data());
    RETURN_IF_ERROR(AllReduce(devices, rank, ir::ElementType::kF32, reduction,
                              data, data, count));
    for (int64_t i = 0; i < count; ++i) {
      const uint16_t bits =
          bf16 ? exec::FloatToBF16(wide[i]) : exec::FloatToHalf(wide[i]);
      std::memcpy(out + 2 * i, &bits, 2);
    }
    return OkStatus();
  }
  AllReduceRunner runner = AllReduceRunnerFor(type);
  if (runner == nullptr) {
    return UnimplementedError(
        "a reduction between processes supports 8-64-bit integers, f16, "
        "bf16, f32 and f64; not ",
        ir::ElementTypeName(type));
  }
  const int64_t bytes = count * ir::StorageBytes(type);
  if (in != out && bytes > 0) std::memcpy(out, in, bytes);
  if (count == 0) return OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<gloo::Context> context,
                   ContextFor(devices, rank));
  Status status = CatchGloo("all_reduce", devices, rank, [&] {
    runner(context, reduction, out, count, timeout_);
  });
  if (!status.ok()) Drop(devices, rank);
  return status;
}

Status GlooCollectives::AllGather(const std::vector<int>& devices, int rank,
                                  const std::byte* in, std::byte* out,
                                  int64_t bytes) {
  if (bytes == 0) return OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<gloo::Context> context,
                   ContextFor(devices, rank));
  Status status = CatchGloo("all_gather", devices, rank, [&] {
    gloo::AllgatherOptions options(context);
    options.setInput(reinterpret_cast<uint8_t*>(const_cast<std::byte*>(in)),
                     static_cast<size_t>(bytes));
    options.setOutput(reinterpret_cast<uint8_t*>(out),
                      static_cast<size_t>(bytes) * devices.size());
    options.setTimeout(timeout_);
    gloo::allgather(options);
  });
  if (!status.ok()) Drop(devices, rank);
  return status;
}

Status GlooCollectives::AllToAll(const std::vector<int>& devices, int rank,
                                 const std::byte* in, std::byte* out,
                                 int64_t bytes) {
  if (bytes == 0) return OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<gloo::Context> context,
                   ContextFor(devices, rank));
  const size_t total = static_cast<size_t>(bytes) * devices.size();
  Status status = CatchGloo("all_to_all", devices, rank, [&] {
    gloo::AlltoallOptions options(context);
    options.setInput(reinterpret_cast<uint8_t*>(const_cast<std::byte*>(in)),
                     total);
    options.setOutput(reinterpret_cast<uint8_t*>(out), total);
    options.setTimeout(timeout_);
    gloo::alltoall(options);
  });
  if (!status.ok()) Drop(devices, rank);
  return status;
}

Status GlooCollectives::Broadcast(const std::vector<int>& devices, int rank,
                                  int root, std::byte* data, int64_t bytes) {
  if (bytes == 0) return OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<gloo::Context> context,
                   ContextFor(devices, rank));
  Status status = CatchGloo("collective_broadcast", devices, rank, [&] {
    gloo::BroadcastOptions options(context);
    options.setOutput(reinterpret_cast<uint8_t*>(data),
                      static_cast<size_t>(bytes));
    options.setRoot(root);
    options.setTimeout(timeout_);
    gloo::broadcast(options);
  });
  if (!status.ok()) Drop(devices, rank);
  return status;
}

Status GlooCollectives::SendReceive(const std::vector<int>& devices, int rank,
                                    const std::byte* send,
                                    const std::vector<int>& send_to,
                                    std::byte* recv, int recv_from,
                                    int64_t bytes) {
  if (bytes == 0) return OkStatus();
  // A rank that sends to itself copies; Gloo has no pair to oneself.
  std::vector<int> peers;
  for (int target : send_to) {
    if (target == rank) {
      if (recv_from == rank) std::memcpy(recv, send, bytes);
    } else {
      peers.push_back(target);
    }
  }
  const bool receives = recv_from >= 0 && recv_from != rank;
  ASSIGN_OR_RETURN(std::shared_ptr<gloo::Context> context,
                   ContextFor(devices, rank));
  // Every rank of the group takes a slot, senders or not, so that the
  // context's slot counter stays the same everywhere.
  const uint64_t slot = context->nextSlot();
  Status status = CatchGloo("collective_permute", devices, rank, [&] {
    auto send_buffer = context->createUnboundBuffer(
        const_cast<std::byte*>(send), static_cast<size_t>(bytes));
    auto recv_buffer =
        context->createUnboundBuffer(recv, static_cast<size_t>(bytes));
    for (int target : peers) send_buffer->send(target, slot);
    if (receives) recv_buffer->recv(recv_from, slot);
    for (size_t i = 0; i < peers.size(); ++i) {
      if (!send_buffer->waitSend(timeout_)) {
        throw gloo::IoException("the send was aborted");
      }
    }
    if (receives && !recv_buffer->waitRecv(timeout_)) {
      throw gloo::IoException("the receive was aborted");
    }
  });
  if (!status.ok()) Drop(devices, rank);
  return status;
}

}  // namespace kiln::runtime
