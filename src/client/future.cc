// Future: a PJRT_Event owned by the client.
#include <utility>

#include "kiln/pjrt.h"

namespace kiln::client {
namespace {

void DestroyEvent(const Plugin& plugin, PJRT_Event* event) {
  if (event == nullptr) return;
  auto args = KILN_PJRT_ARGS(PJRT_Event_Destroy_Args);
  args.event = event;
  // Nothing to do with a failure to destroy but report it.
  Status status = KILN_PJRT_CALL(plugin, PJRT_Event_Destroy, args);
  if (!status.ok()) status.IgnoreError();
}

// What OnReady hands the plugin: everything the callback needs, freed by
// the callback itself.
struct OnReadyState {
  std::shared_ptr<const Plugin> plugin;
  PJRT_Event* event;
  std::function<void(Status)> callback;
};

void OnReadyTrampoline(PJRT_Error* error, void* user_arg) {
  auto* state = static_cast<OnReadyState*>(user_arg);
  Status status = state->plugin->ConsumeError(error);
  state->callback(std::move(status));
  // jaxlib destroys the event inside its callback too; plugins allow it.
  DestroyEvent(*state->plugin, state->event);
  delete state;
}

}  // namespace

Future::Future(std::shared_ptr<const Plugin> plugin, PJRT_Event* event)
    : plugin_(std::move(plugin)), event_(event) {}

Future::~Future() {
  if (event_ != nullptr) DestroyEvent(*plugin_, event_);
}

Future::Future(Future&& other) noexcept
    : plugin_(std::move(other.plugin_)),
      event_(std::exchange(other.event_, nullptr)) {}

Future& Future::operator=(Future&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) DestroyEvent(*plugin_, event_);
    plugin_ = std::move(other.plugin_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

PJRT_Event* Future::release() { return std::exchange(event_, nullptr); }

StatusOr<bool> Future::IsReady() const {
  if (event_ == nullptr) return true;
  auto args = KILN_PJRT_ARGS(PJRT_Event_IsReady_Args);
  args.event = event_;
  RETURN_IF_ERROR(KILN_PJRT_CALL(*plugin_, PJRT_Event_IsReady, args));
  return args.is_ready;
}

Status Future::Await() const {
  if (event_ == nullptr) return OkStatus();
  auto args = KILN_PJRT_ARGS(PJRT_Event_Await_Args);
  args.event = event_;
  return KILN_PJRT_CALL(*plugin_, PJRT_Event_Await, args);
}

Status Future::OnReady(std::function<void(Status)> callback) && {
  if (event_ == nullptr) {
    callback(OkStatus());
    return OkStatus();
  }
  if (plugin_->api().PJRT_Event_OnReady == nullptr) {
    // Without OnReady, wait here: the callback still runs exactly once.
    Status status = Await();
    DestroyEvent(*plugin_, std::exchange(event_, nullptr));
    callback(std::move(status));
    return OkStatus();
  }
  auto* state = new OnReadyState{plugin_, event_, std::move(callback)};
  auto args = KILN_PJRT_ARGS(PJRT_Event_OnReady_Args);
  args.event = event_;
  args.callback = &OnReadyTrampoline;
  args.user_arg = state;
  // From here the event belongs to the callback.
  event_ = nullptr;
  Status status = KILN_PJRT_CALL(*plugin_, PJRT_Event_OnReady, args);
  if (!status.ok()) {
    DestroyEvent(*plugin_, state->event);
    delete state;
    return status;
  }
  return OkStatus();
}

}  // namespace kiln::client
