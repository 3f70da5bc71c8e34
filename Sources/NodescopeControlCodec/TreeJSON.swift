import NodescopeCollector

/// The JSON of a ``TreeView``, written by hand: the same document as `JSONEncoder` with sorted
/// keys writes (the same keys, values and omissions, so any JSON decoder reads back an equal
/// view), about a hundred times faster. A 100,000-node tree is some 45 MB of JSON, which
/// Foundation's encoder takes seconds to write; the daemon answers `tree` and `subscribe` with
/// this instead.
///
/// Strings are escaped as JSON requires (`"`, `\` and the control characters below U+0020) and
/// otherwise written as their UTF-8, so no output contains a raw newline: a body can be sent
/// as one line of server-sent events.
package struct TreeJSON {
    private var bytes: [UInt8] = []

    /// The JSON of `view`.
    package static func encode(_ view: TreeView) -> [UInt8] {
        var writer = TreeJSON()
        writer.bytes.reserveCapacity(256 + view.nodes.count * 480)
        writer.write(view, emit: nil)
        return writer.bytes
    }

    /// The JSON of ``encode(_:)``, handed to `emit` in parts of about `chunkSize` bytes as it
    /// is written (the parts joined are the document): a tree of any size costs one part of
    /// memory beyond the view itself.
    package static func write(_ view: TreeView, chunkSize: Int = 1 << 16, to emit: ([UInt8]) -> Void) {
        var writer = TreeJSON()
        writer.bytes.reserveCapacity(chunkSize + 4_096)
        withoutActuallyEscaping(emit) { emit in writer.write(view, emit: (chunkSize, emit)) }
        if !writer.bytes.isEmpty { emit(writer.bytes) }
    }

    private mutating func write(_ view: TreeView, emit: (chunkSize: Int, body: ([UInt8]) -> Void)?) {
        raw("{")
        if let counts = view.counts {
            // The keys in JSONEncoder's sorted order.
            let fields: [(String, Int)] = [
                ("attached", counts.attached), ("awaitingRelease", counts.awaitingRelease),
                ("exitFlushCut", counts.exitFlushCut), ("leaked", counts.leaked), ("releasedLate", counts.releasedLate),
                ("retainedByGlobal", counts.retainedByGlobal), ("unverified", counts.unverified),
            ]
            raw("\"counts\":{")
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(key)
                bytes.append(UInt8(ascii: ":"))
                signed(value)
            }
            raw("},")
        }
        raw("\"nodes\":[")
        for (index, node) in view.nodes.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            write(node)
            if let emit, bytes.count >= emit.chunkSize {
                emit.body(bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        raw("],\"pid\":")
        number(UInt64(view.pid))
        raw(",\"processName\":")
        string(view.processName)
        raw(",\"session\":")
        number(view.session.rawValue)
        raw(",\"truncatedChildren\":{")
        // Sorted as JSONEncoder sorts keys: by their text.
        let cut = view.truncatedChildren.map { (String($0.key), $0.value) }.sorted { $0.0 < $1.0 }
        for (index, (key, count)) in cut.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(key)
            bytes.append(UInt8(ascii: ":"))
            signed(count)
        }
        raw("}")
        if let wall = view.wallNanos {
            raw(",\"wallNanos\":")
            number(wall)
        }
        raw("}")
    }

    private mutating func write(_ node: NodeInfo) {
        raw("{")
        if let site = node.attachSite {
            raw("\"attachSite\":")
            write(site)
            raw(",")
        }
        raw("\"attachedAtNanos\":")
        number(node.attachedAtNanos)
        raw(",\"depth\":")
        signed(node.depth)
        if let detached = node.detachedAtNanos {
            raw(",\"detachedAtNanos\":")
            number(detached)
        }
        raw(",\"id\":")
        number(node.id)
        raw(node.isPlaceholder ? ",\"isPlaceholder\":true,\"kind\":" : ",\"isPlaceholder\":false,\"kind\":")
        string(node.kind)
        raw(",\"name\":")
        string(node.name)
        raw(",\"objects\":[")
        for (index, object) in node.objects.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            raw("{\"index\":")
            number(UInt64(object.index))
            raw(object.isAlive ? ",\"isAlive\":true,\"role\":" : ",\"isAlive\":false,\"role\":")
            string(object.role)
            raw(",\"typeName\":")
            string(object.typeName)
            raw("}")
        }
        raw("]")
        if let parent = node.parent {
            raw(",\"parent\":")
            number(parent)
        }
        if let retainers = node.retainers {
            raw(",\"retainers\":[")
            for (index, path) in retainers.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(path)
            }
            raw("]")
        }
        raw(",\"status\":")
        string(node.status.rawValue)
        if let test = node.test {
            raw(",\"test\":{")
            if let location = test.location {
                raw("\"location\":")
                write(location)
                raw(",")
            }
            raw("\"name\":")
            string(test.name)
            raw(",\"suite\":")
            string(test.suite)
            raw("}")
        }
        raw("}")
    }

    private mutating func write(_ site: SourceSite) {
        raw("{\"file\":")
        string(site.file)
        raw(",\"line\":")
        number(UInt64(site.line))
        raw("}")
    }

    /// The JSON object of `closure` (`{…}`, without its key), as a tree's document writes it.
    package static func closureObject(_ closure: RetainerPath.Closure) -> [UInt8] {
        var writer = TreeJSON()
        writer.writeObject(closure)
        return writer.bytes
    }

    /// `"closure":{…}` with the keys in sorted order, the unknown ones left out.
    private mutating func write(_ closure: RetainerPath.Closure) {
        raw("\"closure\":")
        writeObject(closure)
    }

    private mutating func writeObject(_ closure: RetainerPath.Closure) {
        raw("{")
        if let column = closure.column {
            raw("\"column\":")
            number(UInt64(clamping: column))
            raw(",")
        }
        if let file = closure.file {
            raw("\"file\":")
            string(file)
            raw(",")
        }
        raw("\"fileOffset\":")
        number(closure.fileOffset)
        raw(",\"image\":")
        string(closure.image)
        if let line = closure.line {
            raw(",\"line\":")
            number(UInt64(clamping: line))
        }
        if let symbol = closure.symbol {
            raw(",\"symbol\":")
            string(symbol)
        }
        raw("}")
    }

    private mutating func write(_ path: RetainerPath) {
        raw(path.cutShort ? "{\"cutShort\":true,\"elapsedMicros\":" : "{\"cutShort\":false,\"elapsedMicros\":")
        number(UInt64(path.elapsedMicros))
        raw(",\"hops\":[")
        for (index, hop) in path.hops.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            raw("{")
            if let closure = hop.closure {
                write(closure)
                raw(",")
            }
            raw("\"holder\":")
            string(hop.holder)
            raw(",\"holderKind\":")
            string(hop.holderKind.rawValue)
            if let holderNodeID = hop.holderNodeID {
                raw(",\"holderNodeID\":")
                number(holderNodeID)
            }
            raw(hop.isSuspect ? ",\"isSuspect\":true,\"reference\":" : ",\"isSuspect\":false,\"reference\":")
            string(hop.reference)
            raw("}")
        }
        raw("],\"note\":")
        string(path.note)
        raw(",\"objectIndex\":")
        number(UInt64(path.objectIndex))
        raw(",\"verdict\":")
        string(path.verdict.rawValue)
        raw("}")
    }

    // MARK: Values

    private mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private mutating func number(_ value: UInt64) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: room for 20 digits
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[31 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            bytes.append(contentsOf: buffer[(32 - count)...])
        }
    }

    private mutating func signed(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        number(UInt64(value.magnitude))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: utf8[start..<index])
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                default:
                    raw("\\u00")
                    bytes.append(Self.hex[Int(byte >> 4)])
                    bytes.append(Self.hex[Int(byte & 15)])
                }
            }
            bytes.append(contentsOf: utf8[start...])
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
