import Glibc

/// When a peer process started, from the kernel (`/proc/PID/stat`), on the collector's
/// `CLOCK_MONOTONIC`: so that `ps` shows a process's own uptime, not its connection's.
enum ProcessStart {
    /// The start of process `pid` in nanoseconds of `CLOCK_MONOTONIC`, read now, or nil when it
    /// cannot be known (no pid from the kernel, the process is gone or not visible).
    ///
    /// `/proc/PID/stat` gives the start in clock ticks since boot (`CLOCK_BOOTTIME`, which also
    /// counts suspended time); the age it implies is subtracted from the monotonic clock.
    static func monotonicNanos(ofPeer pid: Int32?) -> UInt64? {
        guard let pid, pid > 0, let stat = read("/proc/\(pid)/stat") else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces or parentheses: the
        // fields that follow start after the last ')'.
        guard let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        // Field 22, starttime: the 20th after the command name (field 3 is the first).
        guard fields.count > 19, let ticks = UInt64(String(decoding: fields[19], as: UTF8.self)) else { return nil }
        let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
        guard ticksPerSecond > 0 else { return nil }
        var boot = timespec()
        var monotonic = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &boot) == 0, clock_gettime(CLOCK_MONOTONIC, &monotonic) == 0 else { return nil }
        let startedSinceBoot = ticks.multipliedReportingOverflow(by: 1_000_000_000 / UInt64(ticksPerSecond))
        guard !startedSinceBoot.overflow else { return nil }
        let bootNow = UInt64(boot.tv_sec) * 1_000_000_000 + UInt64(boot.tv_nsec)
        let monotonicNow = UInt64(monotonic.tv_sec) * 1_000_000_000 + UInt64(monotonic.tv_nsec)
        guard bootNow >= startedSinceBoot.partialValue else { return nil }
        let age = bootNow - startedSinceBoot.partialValue
        return monotonicNow >= age ? monotonicNow - age : 0
    }

    /// A small file's bytes (a /proc file has no size to ask for first).
    private static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Array(bytes[..<count])
    }
}
