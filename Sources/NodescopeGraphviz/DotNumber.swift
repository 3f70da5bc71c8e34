/// Formats numbers for DOT text the same way on every platform, without Foundation.
enum DotNumber {
    /// `value` rounded to `decimals` places, without trailing zeros ("12", "12.5", "-0.25").
    /// Integer arithmetic on the rounded value: a drawing of a million boxes writes millions of
    /// these.
    static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * Double(scale)).rounded()
        guard abs(scaled) < 9e15 else { return String(Int64(value.rounded())) }
        let magnitude = Int64(abs(scaled))
        var fraction = magnitude % scale
        var places = decimals
        while places > 0, fraction % 10 == 0 {
            fraction /= 10
            places -= 1
        }
        var text = scaled < 0 && magnitude != 0 ? "-" : ""
        text += String(magnitude / scale)
        if places > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: places - digits.utf8.count) + digits
        }
        return text
    }
}
