// Metrics: formatting, percentiles, rates, the text report and JSON.
#include "kiln/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kiln::client {
namespace {

TEST(MetricsTest, FormatsDurationsLikeTheTorchXlaReport) {
  EXPECT_EQ(FormatDurationNanos(345678), "345.678us");
  EXPECT_EQ(FormatDurationNanos(12000500), "12ms000.500us");
  EXPECT_EQ(FormatDurationNanos(1234567890), "1s234ms567.890us");
  EXPECT_EQ(FormatDurationNanos(61e9 + 5e6), "1m01s005ms000.000us");
  EXPECT_EQ(FormatDurationNanos(0), "0.000us");
}

TEST(MetricsTest, FormatsBytesInPowersOf1024) {
  EXPECT_EQ(FormatBytes(512), "512B");
  EXPECT_EQ(FormatBytes(1536), "1.50KB");
  EXPECT_EQ(FormatBytes(3.25 * 1024 * 1024), "3.25MB");
}

TEST(MetricsTest, PercentilesUseTheNearestRank) {
  Metric metric("m", MetricUnit::kCount);
  // 1..100 in scrambled order: the p-th percentile is p.
  for (int i = 0; i < 100; ++i) metric.AddSample((i * 37) % 100 + 1, i);
  Metric::Snapshot snapshot = metric.snapshot();
  EXPECT_EQ(snapshot.total_samples, 100);
  EXPECT_EQ(snapshot.accumulator, 5050);
  EXPECT_EQ(snapshot.Percentile(1), 1);
  EXPECT_EQ(snapshot.Percentile(50), 50);
  EXPECT_EQ(snapshot.Percentile(99), 99);
  EXPECT_EQ(snapshot.Percentile(100), 100);
}

TEST(MetricsTest, RatesAreOverTheSampleWindow) {
  Metric metric("m", MetricUnit::kBytes);
  // 3 samples of 100 bytes over 2 seconds.
  metric.AddSample(100, 1'000'000'000);
  metric.AddSample(100, 2'000'000'000);
  metric.AddSample(100, 3'000'000'000);
  Metric::Snapshot snapshot = metric.snapshot();
  EXPECT_DOUBLE_EQ(snapshot.ValueRate(), 150);
  EXPECT_DOUBLE_EQ(snapshot.Rate(), 1.5);
  Metric single("s", MetricUnit::kCount);
  single.AddSample(7, 5);
  EXPECT_EQ(single.snapshot().Rate(), 0);
}

TEST(MetricsTest, KeepsTheMostRecentSamplesButCountsAll) {
  Metric metric("m", MetricUnit::kCount);
  for (int i = 0; i < 3000; ++i) metric.AddSample(i, i);
  Metric::Snapshot snapshot = metric.snapshot();
  EXPECT_EQ(snapshot.total_samples, 3000);
  ASSERT_EQ(snapshot.values.size(), Metric::kMaxSamples);
  EXPECT_EQ(snapshot.values.front(), 3000 - Metric::kMaxSamples);
  EXPECT_EQ(snapshot.values.back(), 2999);
}

TEST(MetricsTest, ReportPrintsMetricsThenCounters) {
  Metrics metrics;
  metrics.GetMetric("CompileTime", MetricUnit::kNanoseconds)
      .AddSample(12e6, 1000);
  metrics.GetCounter("CachedCompile").Add(3);
  EXPECT_EQ(metrics.Report(),
            "Metric: CompileTime\n"
            "  TotalSamples: 1\n"
            "  Accumulator: 12ms000.000us\n"
            "  ValueRate: 0.000us / second\n"
            "  Rate: 0 / second\n"
            "  Percentiles: 1%=12ms000.000us; 5%=12ms000.000us; "
            "10%=12ms000.000us; 20%=12ms000.000us; 50%=12ms000.000us; "
            "80%=12ms000.000us; 90%=12ms000.000us; 95%=12ms000.000us; "
            "99%=12ms000.000us\n"
            "Counter: CachedCompile\n"
            "  Value: 3\n");
}

TEST(MetricsTest, JsonHoldsTheSameNumbers) {
  Metrics metrics;
  metrics.GetMetric("InboundData", MetricUnit::kBytes).AddSample(64, 10);
  metrics.GetCounter("Uncached\"Compile").Add();
  std::string json = metrics.ReportJson();
  EXPECT_EQ(json,
            "{\"metrics\": {\"InboundData\": {\"unit\": \"bytes\", "
            "\"total_samples\": 1, \"accumulator\": 64, \"value_rate\": 0, "
            "\"rate\": 0, \"percentiles\": {\"1\": 64, \"5\": 64, \"10\": 64, "
            "\"20\": 64, \"50\": 64, \"80\": 64, \"90\": 64, \"95\": 64, "
            "\"99\": 64}}}, \"counters\": {\"Uncached\\\"Compile\": 1}}");
}

TEST(MetricsTest, LookupsAndClear) {
  Metrics metrics;
  EXPECT_EQ(metrics.CounterValue("absent"), 0);
  EXPECT_EQ(metrics.MetricTotalSamples("absent"), 0);
  EXPECT_EQ(metrics.FindMetric("absent"), nullptr);
  Metric& metric = metrics.GetMetric("m", MetricUnit::kCount);
  EXPECT_EQ(&metric, &metrics.GetMetric("m", MetricUnit::kCount));
  metric.AddSample(1);
  EXPECT_EQ(metrics.MetricTotalSamples("m"), 1);
  metrics.Clear();
  EXPECT_EQ(metrics.FindMetric("m"), nullptr);
}

TEST(MetricsTest, CountsFromManyThreads) {
  Metrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&metrics] {
      for (int i = 0; i < 1000; ++i) {
        metrics.GetCounter("c").Add();
        metrics.GetMetric("m", MetricUnit::kCount).AddSample(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(metrics.CounterValue("c"), 8000);
  EXPECT_EQ(metrics.MetricTotalSamples("m"), 8000);
}

}  // namespace
}  // namespace kiln::client
