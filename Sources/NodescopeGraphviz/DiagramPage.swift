/// A page to fit a diagram on: a size in points (1/72 inch), from a name such as `a4` or from
/// `WxH` with an optional unit.
public struct DiagramPage: Sendable, Equatable, CustomStringConvertible {
    /// The width in points.
    public var width: Double
    /// The height in points.
    public var height: Double
    /// The name the page was given by (`a4`, `800x600`), for messages.
    public var name: String

    /// Creates a page of `width` × `height` points.
    public init(width: Double, height: Double, name: String? = nil) {
        self.width = width
        self.height = height
        self.name = name ?? "\(DotNumber.format(width, decimals: 0))x\(DotNumber.format(height, decimals: 0))"
    }

    /// The named pages, portrait unless `-landscape`; `screen` is 1920 × 1080 pixels at 96 per inch.
    public static let named: [(name: String, width: Double, height: Double)] = [
        ("a4", 595, 842), ("a4-landscape", 842, 595),
        ("a3", 842, 1191), ("a3-landscape", 1191, 842),
        ("letter", 612, 792), ("letter-landscape", 792, 612),
        ("screen", 1440, 810), ("screen-portrait", 810, 1440),
    ]

    /// What ``init(parsing:)`` accepts, for messages.
    public static let syntax =
        "a page name (" + named.map(\.name).joined(separator: ", ")
        + ") or WIDTHxHEIGHT in points, or with a unit: pt, px, mm, cm, in (e.g. 1200x800, 210x297mm, 8.5x11in)"

    /// The page that `text` names: a name of ``named``, or `WxH` with an optional unit after
    /// either number or after both (`800x600`, `210x297mm`, `8.5inx11in`); `nil` when it is
    /// neither, or a side is not between 1 point and 10 million points.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if let page = Self.named.first(where: { $0.name == lowered }) {
            self.init(width: page.width, height: page.height, name: page.name)
            return
        }
        // The "x" between the sides is the one followed by a number ("px" has an x too).
        let characters = Array(lowered)
        guard
            let split = characters.indices.first(where: { index in
                characters[index] == "x" && index + 1 < characters.count
                    && (characters[index + 1].isASCII && characters[index + 1].isNumber || characters[index + 1] == ".")
            })
        else { return nil }
        let sides = [Substring(String(characters[..<split])), Substring(String(characters[(split + 1)...]))]
        // A unit written once at the end applies to both sides.
        let trailingUnit = Self.unit(of: sides[1])
        guard let width = Self.points(sides[0], defaultUnit: trailingUnit?.scale ?? 1),
            let height = Self.points(sides[1], defaultUnit: 1)
        else { return nil }
        guard (1...10_000_000).contains(width), (1...10_000_000).contains(height) else { return nil }
        self.init(width: width, height: height, name: lowered)
    }

    /// The name and the size in points.
    public var description: String {
        let size = "\(DotNumber.format(width, decimals: 0)) × \(DotNumber.format(height, decimals: 0)) pt"
        return name == "\(DotNumber.format(width, decimals: 0))x\(DotNumber.format(height, decimals: 0))" ? size : "\(name) (\(size))"
    }

    private static let units: [(suffix: String, scale: Double)] = [
        ("pt", 1), ("px", 0.75), ("mm", 72 / 25.4), ("cm", 72 / 2.54), ("in", 72),
    ]

    private static func unit(of side: Substring) -> (suffix: String, scale: Double)? {
        units.first { side.hasSuffix($0.suffix) }
    }

    /// A side in points: a positive decimal number with an optional unit.
    private static func points(_ side: Substring, defaultUnit: Double) -> Double? {
        var number = side
        var scale = defaultUnit
        if let unit = unit(of: side) {
            number = side.dropLast(unit.suffix.count)
            scale = unit.scale
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            number.filter({ $0 == "." }).count <= 1, let value = Double(number), value.isFinite
        else { return nil }
        return value * scale
    }
}
