#include "exec/kernels/run_time_error.h"

#include <cctype>

#include "exec/executor.h"
#include "exec/kernels/element.h"

namespace kiln::exec {
namespace {

class RunTimeErrorKernel : public Kernel {
 public:
  explicit RunTimeErrorKernel(Status error) : error_(std::move(error)) {}
  Status Run(RunContext&, const Step&) const override { return error_; }

 private:
  Status error_;
};

// An integer scalar of `type` at `data`, widened to int64.
int64_t ReadInteger(ElementType type, const std::byte* data) {
  switch (type) {
    case ElementType::kI1:
    case ElementType::kUI8:
      return static_cast<int64_t>(*reinterpret_cast<const uint8_t*>(data));
    case ElementType::kI8:
      return *reinterpret_cast<const int8_t*>(data);
    case ElementType::kI16:
      return *reinterpret_cast<const int16_t*>(data);
    case ElementType::kUI16:
      return *reinterpret_cast<const uint16_t*>(data);
    case ElementType::kI32:
      return *reinterpret_cast<const int32_t*>(data);
    case ElementType::kUI32:
      return *reinterpret_cast<const uint32_t*>(data);
    case ElementType::kI64:
    case ElementType::kUI64:
    case ElementType::kIndex:
      return *reinterpret_cast<const int64_t*>(data);
    default:
      return 0;
  }
}

class ShapeAssertionKernel : public Kernel {
 public:
  ShapeAssertionKernel(std::string error_message,
                       std::vector<ElementType> value_types)
      : error_message_(std::move(error_message)),
        value_types_(std::move(value_types)) {}

  Status Run(RunContext& ctx, const Step& step) const override {
    if (*ctx.In<uint8_t>(step, 0) != 0) return OkStatus();
    std::vector<int64_t> values;
    for (size_t i = 0; i < value_types_.size(); ++i) {
      values.push_back(ReadInteger(
          value_types_[i], ctx.In<std::byte>(step, static_cast<int>(i) + 1)));
    }
    return InvalidArgumentError(
        FormatShapeAssertionMessage(error_message_, values));
  }

 private:
  std::string error_message_;
  std::vector<ElementType> value_types_;
};

}  // namespace

std::unique_ptr<Kernel> MakeRunTimeErrorKernel(Status error) {
  return std::make_unique<RunTimeErrorKernel>(std::move(error));
}

std::unique_ptr<Kernel> MakeShapeAssertionKernel(
    std::string error_message, std::vector<ElementType> value_types) {
  return std::make_unique<ShapeAssertionKernel>(std::move(error_message),
                                                std::move(value_types));
}

std::string FormatShapeAssertionMessage(std::string_view format,
                                        const std::vector<int64_t>& values) {
  std::string out;
  size_t i = 0;
  while (i < format.size()) {
    if (format[i] == '{') {
      size_t end = i + 1;
      while (end < format.size() &&
             std::isdigit(static_cast<unsigned char>(format[end]))) {
        ++end;
      }
      if (end > i + 1 && end < format.size() && format[end] == '}' &&
          end - i <= 10) {
        size_t index =
            std::stoul(std::string(format.substr(i + 1, end - i - 1)));
        if (index < values.size()) {
          out += std::to_string(values[index]);
          i = end + 1;
          continue;
        }
      }
    }
    out += format[i++];
  }
  return out;
}

}  // namespace kiln::exec
