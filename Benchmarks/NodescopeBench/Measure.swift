import Foundation

/// A timing of one operation: per-operation nanoseconds over many samples.
struct Timing {
    var median: Double
    var p10: Double
    var p90: Double

    var text: String { String(format: "%.1f ns (p10 %.1f, p90 %.1f)", median, p10, p90) }
}

extension Timing {
    /// The median and the 10th and 90th percentiles of `values` (not empty).
    init(of values: [Double]) {
        let sorted = values.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        self.init(median: percentile(0.5), p10: percentile(0.1), p90: percentile(0.9))
    }
}

/// Runs `operation` in samples of `batch` calls after a warm-up, and reports the median,
/// 10th and 90th percentile of the per-call time across samples.
///
/// Method: warm-up of `warmup` samples (discarded), then `samples` samples; each sample times
/// `batch` back-to-back calls with the monotonic clock and divides by `batch`.
func measure(samples: Int = 200, batch: Int = 1_000, warmup: Int = 20, _ operation: () -> Void) -> Timing {
    var perCall: [Double] = []
    perCall.reserveCapacity(samples)
    for index in 0..<(warmup + samples) {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<batch { operation() }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        if index >= warmup { perCall.append(Double(elapsed) / Double(batch)) }
    }
    return Timing(of: perCall)
}

/// A row of the report: what was measured, the figure, and the target it answers.
struct ReportRow {
    var name: String
    var figure: String
    var target: String
}

func printTable(_ title: String, _ rows: [ReportRow]) {
    print("\n## \(title)\n")
    print("| what | measured | target |")
    print("|---|---|---|")
    for row in rows { print("| \(row.name) | \(row.figure) | \(row.target) |") }
}
