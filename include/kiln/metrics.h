// Metrics at every crossing of the seam: timers and value metrics with
// percentiles, and counters, reported in the format PyTorch/XLA prints
// (`Metric: NAME` / `Counter: NAME`) and as JSON.
//
// All operations are thread-safe: execution timers are completed on plugin
// threads.
#ifndef KILN_CLIENT_METRICS_H_
#define KILN_CLIENT_METRICS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::client {

// What a metric's values measure; decides how they are printed.
enum class MetricUnit {
  kNanoseconds,  // printed as "1s234ms567.890us"
  kBytes,        // printed as "1.50MB"
  kCount,        // printed as a plain number
};

// Monotonic nanoseconds (the clock every sample is stamped with).
int64_t MetricNowNanos();

// "1s234ms567.890us", "12ms000.500us", "345.678us".
std::string FormatDurationNanos(double nanos);
// "512B", "1.50KB", "3.25MB" (powers of 1024).
std::string FormatBytes(double bytes);

// Samples of one quantity: how many, their sum, and the most recent ones
// (for percentiles and rates).
class Metric {
 public:
  // The most recent samples a metric keeps (as PyTorch/XLA does).
  static constexpr size_t kMaxSamples = 1024;

  Metric(std::string name, MetricUnit unit);

  const std::string& name() const { return name_; }
  MetricUnit unit() const { return unit_; }

  void AddSample(double value) { AddSample(value, MetricNowNanos()); }
  void AddSample(double value, int64_t timestamp_nanos);

  struct Snapshot {
    int64_t total_samples = 0;
    double accumulator = 0;
    // The retained samples in arrival order, with their timestamps.
    std::vector<double> values;
    std::vector<int64_t> timestamps;
    // Per-second rates over the retained samples' time window (0 when the
    // window is empty).
    double ValueRate() const;
    double Rate() const;
    // The p-th percentile (nearest rank) of the retained samples.
    double Percentile(double p) const;
  };
  Snapshot snapshot() const;

 private:
  std::string name_;
  MetricUnit unit_;
  mutable std::mutex mutex_;
  int64_t total_samples_ = 0;
  double accumulator_ = 0;
  std::vector<double> values_;  // ring buffer of kMaxSamples
  std::vector<int64_t> timestamps_;
  size_t next_ = 0;
};

// A monotonically increasing count.
class Counter {
 public:
  explicit Counter(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  void Add(int64_t delta = 1) { value_.fetch_add(delta); }
  int64_t value() const { return value_.load(); }

 private:
  std::string name_;
  std::atomic<int64_t> value_{0};
};

// A set of named metrics and counters. Metric and Counter references stay
// valid for the Metrics' lifetime.
class Metrics {
 public:
  // The metric `name`, created with `unit` on first use.
  Metric& GetMetric(std::string_view name, MetricUnit unit);
  Counter& GetCounter(std::string_view name);

  // Null when nothing was recorded under that name.
  const Metric* FindMetric(std::string_view name) const;
  const Counter* FindCounter(std::string_view name) const;
  // 0 when absent.
  int64_t CounterValue(std::string_view name) const;
  int64_t MetricTotalSamples(std::string_view name) const;

  // The report PyTorch/XLA users read: every metric (sorted by name) with
  // TotalSamples, Accumulator, ValueRate, Rate and Percentiles, then every
  // counter with its Value.
  std::string Report() const;
  // The same data as a JSON object {"metrics": {...}, "counters": {...}}.
  std::string ReportJson() const;

  // Forgets every metric and counter.
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Metric>, std::less<>> metrics_;
  std::map<std::string, std::unique_ptr<Counter>, std::less<>> counters_;
};

// Adds the nanoseconds between construction and destruction to a metric.
class ScopedTimer {
 public:
  explicit ScopedTimer(Metric& metric)
      : metric_(metric), start_(MetricNowNanos()) {}
  ~ScopedTimer() {
    int64_t now = MetricNowNanos();
    metric_.AddSample(static_cast<double>(now - start_), now);
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Metric& metric_;
  int64_t start_;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_METRICS_H_
