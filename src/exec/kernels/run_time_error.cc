#include "exec/kernels/run_time_error.h"

namespace kiln::exec {
namespace {

class RunTimeErrorKernel : public Kernel {
 public:
  explicit RunTimeErrorKernel(Status error) : error_(std::move(error)) {}
  Status Run(RunContext&, const Step&) const override { return error_; }

 private:
  Status error_;
};

}  // namespace

std::unique_ptr<Kernel> MakeRunTimeErrorKernel(Status error) {
  return std::make_unique<RunTimeErrorKernel>(std::move(error));
}

}  // namespace kiln::exec
