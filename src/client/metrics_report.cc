// The text and JSON forms of a Metrics set.
#include <cmath>
#include <cstdio>

#include "base/strings.h"
#include "kiln/metrics.h"

namespace kiln::client {
namespace {

// The percentiles PyTorch/XLA's report lists.
constexpr double kPercentiles[] = {1, 5, 10, 20, 50, 80, 90, 95, 99};

std::string FormatNumber(double value) {
  char out[32];
  std::snprintf(out, sizeof(out), "%g", value);
  return out;
}

std::string FormatValue(MetricUnit unit, double value) {
  switch (unit) {
    case MetricUnit::kNanoseconds:
      return FormatDurationNanos(value);
    case MetricUnit::kBytes:
      return FormatBytes(value);
    case MetricUnit::kCount:
      return FormatNumber(value);
  }
  return FormatNumber(value);
}

const char* UnitName(MetricUnit unit) {
  switch (unit) {
    case MetricUnit::kNanoseconds:
      return "ns";
    case MetricUnit::kBytes:
      return "bytes";
    case MetricUnit::kCount:
      return "count";
  }
  return "count";
}

// A JSON number: finite values as %.17g, anything else as null.
std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char out[40];
  std::snprintf(out, sizeof(out), "%.17g", value);
  return out;
}


}  // namespace

std::string Metrics::Report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& [name, metric] : metrics_) {
    Metric::Snapshot snapshot = metric->snapshot();
    MetricUnit unit = metric->unit();
    StrAppend(out, "Metric: ", name, "\n");
    StrAppend(out, "  TotalSamples: ", snapshot.total_samples, "\n");
    StrAppend(out, "  Accumulator: ", FormatValue(unit, snapshot.accumulator),
              "\n");
    StrAppend(out, "  ValueRate: ", FormatValue(unit, snapshot.ValueRate()),
              " / second\n");
    StrAppend(out, "  Rate: ", FormatNumber(snapshot.Rate()), " / second\n");
    std::string percentiles;
    for (double p : kPercentiles) {
      if (!percentiles.empty()) percentiles += "; ";
      StrAppend(percentiles, FormatNumber(p),
                "%=", FormatValue(unit, snapshot.Percentile(p)));
    }
    StrAppend(out, "  Percentiles: ", percentiles, "\n");
  }
  for (const auto& [name, counter] : counters_) {
    StrAppend(out, "Counter: ", name, "\n");
    StrAppend(out, "  Value: ", counter->value(), "\n");
  }
  return out;
}

std::string Metrics::ReportJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "{\"metrics\": {";
  bool first = true;
  for (const auto& [name, metric] : metrics_) {
    Metric::Snapshot snapshot = metric->snapshot();
    if (!first) out += ", ";
    first = false;
    StrAppend(
        out, JsonString(name), ": {\"unit\": \"", UnitName(metric->unit()),
        "\", \"total_samples\": ", snapshot.total_samples,
        ", \"accumulator\": ", JsonNumber(snapshot.accumulator),
        ", \"value_rate\": ", JsonNumber(snapshot.ValueRate()),
        ", \"rate\": ", JsonNumber(snapshot.Rate()), ", \"percentiles\": {");
    bool first_percentile = true;
    for (double p : kPercentiles) {
      if (!first_percentile) out += ", ";
      first_percentile = false;
      StrAppend(out, "\"", FormatNumber(p),
                "\": ", JsonNumber(snapshot.Percentile(p)));
    }
    out += "}}";
  }
  out += "}, \"counters\": {";
  first = true;
  for (const auto& [name, counter] : counters_) {
    if (!first) out += ", ";
    first = false;
    StrAppend(out, JsonString(name), ": ", counter->value());
  }
  out += "}}";
  return out;
}

}  // namespace kiln::client
