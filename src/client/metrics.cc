#include "kiln/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::client {

int64_t MetricNowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Metric::Metric(std::string name, MetricUnit unit)
    : name_(std::move(name)), unit_(unit) {
  values_.reserve(kMaxSamples);
  timestamps_.reserve(kMaxSamples);
}

void Metric::AddSample(double value, int64_t timestamp_nanos) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++total_samples_;
  accumulator_ += value;
  if (values_.size() < kMaxSamples) {
    values_.push_back(value);
    timestamps_.push_back(timestamp_nanos);
  } else {
    values_[next_] = value;
    timestamps_[next_] = timestamp_nanos;
  }
  next_ = (next_ + 1) % kMaxSamples;
}

Metric::Snapshot Metric::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot snapshot;
  snapshot.total_samples = total_samples_;
  snapshot.accumulator = accumulator_;
  if (values_.size() < kMaxSamples) {
    snapshot.values = values_;
    snapshot.timestamps = timestamps_;
  } else {
    // Unroll the ring so the samples come out oldest first.
    for (size_t i = 0; i < kMaxSamples; ++i) {
      size_t at = (next_ + i) % kMaxSamples;
      snapshot.values.push_back(values_[at]);
      snapshot.timestamps.push_back(timestamps_[at]);
    }
  }
  return snapshot;
}

namespace {

// Seconds spanned by the retained samples.
double WindowSeconds(const std::vector<int64_t>& timestamps) {
  if (timestamps.size() < 2) return 0;
  auto [first, last] =
      std::minmax_element(timestamps.begin(), timestamps.end());
  return static_cast<double>(*last - *first) * 1e-9;
}

}  // namespace

double Metric::Snapshot::ValueRate() const {
  double seconds = WindowSeconds(timestamps);
  if (seconds <= 0) return 0;
  double sum = 0;
  for (double value : values) sum += value;
  return sum / seconds;
}

double Metric::Snapshot::Rate() const {
  double seconds = WindowSeconds(timestamps);
  if (seconds <= 0) return 0;
  return static_cast<double>(values.size()) / seconds;
}

double Metric::Snapshot::Percentile(double p) const {
  if (values.empty()) return 0;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest value with at least p% of samples <= it.
  double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

std::string FormatDurationNanos(double nanos) {
  if (!std::isfinite(nanos)) return "nan";
  std::string out;
  if (nanos < 0) {
    out = "-";
    nanos = -nanos;
  }
  // Whole units from days down to milliseconds, then microseconds with
  // three decimals; leading zero units are left out, later ones padded.
  struct Unit {
    const char* suffix;
    double nanos;
    int width;
  };
  static constexpr Unit kUnits[] = {{"d", 86400e9, 0},
                                    {"h", 3600e9, 2},
                                    {"m", 60e9, 2},
                                    {"s", 1e9, 2},
                                    {"ms", 1e6, 3}};
  bool started = false;
  double rest = nanos;
  for (const Unit& unit : kUnits) {
    double whole = std::floor(rest / unit.nanos);
    if (whole > 0 || started) {
      char piece[32];
      std::snprintf(piece, sizeof(piece), "%0*.0f%s", started ? unit.width : 0,
                    whole, unit.suffix);
      out += piece;
      started = true;
      rest -= whole * unit.nanos;
    }
  }
  char micros[32];
  std::snprintf(micros, sizeof(micros), started ? "%07.3fus" : "%.3fus",
                rest / 1e3);
  out += micros;
  return out;
}

std::string FormatBytes(double bytes) {
  static constexpr const char* kSuffixes[] = {"B",  "KB", "MB",
                                              "GB", "TB", "PB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  char out[32];
  if (unit == 0) {
    std::snprintf(out, sizeof(out), "%.0fB", bytes);
  } else {
    std::snprintf(out, sizeof(out), "%.2f%s", bytes, kSuffixes[unit]);
  }
  return out;
}

Metric& Metrics::GetMetric(std::string_view name, MetricUnit unit) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = metrics_.find(name);
  if (found != metrics_.end()) return *found->second;
  auto metric = std::make_unique<Metric>(std::string(name), unit);
  Metric& ref = *metric;
  metrics_.emplace(std::string(name), std::move(metric));
  return ref;
}

Counter& Metrics::GetCounter(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = counters_.find(name);
  if (found != counters_.end()) return *found->second;
  auto counter = std::make_unique<Counter>(std::string(name));
  Counter& ref = *counter;
  counters_.emplace(std::string(name), std::move(counter));
  return ref;
}

const Metric* Metrics::FindMetric(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = metrics_.find(name);
  return found == metrics_.end() ? nullptr : found->second.get();
}

const Counter* Metrics::FindCounter(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = counters_.find(name);
  return found == counters_.end() ? nullptr : found->second.get();
}

int64_t Metrics::CounterValue(std::string_view name) const {
  const Counter* counter = FindCounter(name);
  return counter == nullptr ? 0 : counter->value();
}

int64_t Metrics::MetricTotalSamples(std::string_view name) const {
  const Metric* metric = FindMetric(name);
  return metric == nullptr ? 0 : metric->snapshot().total_samples;
}

void Metrics::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  metrics_.clear();
  counters_.clear();
}

}  // namespace kiln::client
