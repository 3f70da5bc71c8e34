/// Formats numbers for DOT text the same way on every platform, without Foundation.
enum DotNumber {
    /// `value` rounded to `decimals` places, without trailing zeros ("12", "12.5", "-0.25").
    static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * scale).rounded()
        guard abs(scaled) < 9e15 else { return String(Int64(value.rounded())) }
        let negative = scaled < 0
        var digits = String(Int64(abs(scaled)))
        if decimals > 0 {
            if digits.count <= decimals {
                digits = String(repeating: "0", count: decimals - digits.count + 1) + digits
            }
            let split = digits.index(digits.endIndex, offsetBy: -decimals)
            var fraction = digits[split...]
            while fraction.last == "0" { fraction = fraction.dropLast() }
            digits = fraction.isEmpty ? String(digits[..<split]) : "\(digits[..<split]).\(fraction)"
        }
        return negative && digits != "0" ? "-" + digits : digits
    }
}
