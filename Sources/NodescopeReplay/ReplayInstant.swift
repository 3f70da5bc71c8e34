/// An instant of a recording: where `--at` stops the replay.
package enum ReplayInstant: Sendable, Equatable {
    /// Seconds after the recording's start.
    case seconds(Double)
    /// A wall-clock time, ns since the Unix epoch (the recorder's wall clock).
    case wall(UInt64)
    /// After the last record.
    case end
    /// After the first N records (`event:N`; `event:0` is the recording's start).
    case event(UInt64)

    /// Parses `end`, `event:N`, or seconds (`12.5`, `12.5s`, `500ms`). Wall-clock times are
    /// parsed by the caller, who has a calendar.
    package init?(argument: String) {
        let text = argument.lowercased()
        if text == "end" {
            self = .end
            return
        }
        if text.hasPrefix("event:") {
            guard let count = UInt64(text.dropFirst("event:".count)) else { return nil }
            self = .event(count)
            return
        }
        var number = Substring(text)
        var scale = 1.0
        if number.hasSuffix("ms") {
            number = number.dropLast(2)
            scale = 1e-3
        } else if number.hasSuffix("s") {
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * scale < 1e9 else { return nil }
        self = .seconds(value * scale)
    }
}
