import NodescopeWire

/// Renders encoded frames as an annotated hex dump, field by field, for docs/PROTOCOL.md.
///
/// The field sizes are listed here independently of the encoder, so the dump also checks that
/// each frame has the layout the document describes.
enum AnnotatedDump {
    struct Field {
        var name: String
        var size: Int
        var value: String
    }

    enum Direction: String {
        case hostToCollector = "host → collector"
        case collectorToHost = "collector → host"
    }

    /// The dump of `frames`, or nil if some frame's bytes do not match its listed layout.
    static func render(_ frames: [(Direction, WireMessage)]) -> String? {
        var lines: [String] = []
        var offsets: [Direction: Int] = [:]
        var currentDirection: Direction?
        for (direction, message) in frames {
            if direction != currentDirection {
                if currentDirection != nil { lines.append("") }
                lines.append("# \(direction.rawValue)")
                currentDirection = direction
            } else {
                lines.append("")
            }
            let bytes = FrameEncoder.encoded(message)
            let fields =
                [
                    Field(name: "length", size: 4, value: "\(bytes.count - 4)"),
                    Field(name: "type", size: 1, value: "0x\(hex(message.frameType.rawValue)) \(message.frameType)"),
                ] + payloadFields(of: message)
            guard fields.reduce(0, { $0 + $1.size }) == bytes.count else { return nil }
            var index = 0
            var offset = offsets[direction, default: 0]
            for field in fields {
                let chunk = Array(bytes[index..<(index + field.size)])
                let annotation = field.value.isEmpty ? field.name : "\(field.name) \(field.value)"
                if chunk.isEmpty {
                    lines.append(line(offset: offset, bytes: [], text: annotation))
                }
                for start in stride(from: 0, to: chunk.count, by: 8) {
                    let piece = Array(chunk[start..<min(start + 8, chunk.count)])
                    lines.append(line(offset: offset + start, bytes: piece, text: start == 0 ? annotation : ""))
                }
                index += field.size
                offset += field.size
            }
            offsets[direction] = offset
        }
        return lines.joined(separator: "\n")
    }

    private static func line(offset: Int, bytes: [UInt8], text: String) -> String {
        let offsetText = String(offset, radix: 16)
        let paddedOffset = String(repeating: "0", count: max(0, 4 - offsetText.count)) + offsetText
        let hexText = bytes.map(hex).joined(separator: " ")
        let padded = hexText + String(repeating: " ", count: max(0, 25 - hexText.count))
        return "\(paddedOffset)  \(padded)\(text)".trimmingTrailingSpaces()
    }

    private static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }

    private static func string(_ name: String, _ value: String) -> [Field] {
        let count = value.utf8.count
        return [
            Field(name: "\(name) length", size: 2, value: "\(count)"),
            Field(name: name, size: count, value: "\"\(value)\""),
        ]
    }

    private static func body(_ bytes: [UInt8]) -> [Field] {
        [
            Field(name: "body length", size: 4, value: "\(bytes.count)"),
            Field(name: "body", size: bytes.count, value: ""),
        ]
    }

    private static func u(_ name: String, _ size: Int, _ value: some BinaryInteger, _ note: String = "") -> Field {
        Field(name: name, size: size, value: note.isEmpty ? "\(value)" : "\(value) (\(note))")
    }

    private static func seconds(_ nanos: UInt64) -> String {
        nanos % 1_000_000_000 == 0 ? "\(nanos / 1_000_000_000) s" : "\(nanos) ns"
    }

    private static func payloadFields(of message: WireMessage) -> [Field] {
        switch message {
        case .hello(let hello):
            return [
                Field(name: "magic", size: 4, value: "\"NSCP\""),
                u("protocolVersion", 2, hello.protocolVersion),
                u("role", 1, hello.role.rawValue, "\(hello.role)"),
                u("pid", 4, hello.pid),
                u("monotonicNanos", 8, hello.monotonicNanos, seconds(hello.monotonicNanos)),
                u("wallNanos", 8, hello.wallNanos, seconds(hello.wallNanos)),
            ] + string("processName", hello.processName)
        case .helloAccepted(let accepted):
            return [
                u("protocolVersion", 2, accepted.protocolVersion),
                u("graceNanos", 8, accepted.graceNanos, seconds(accepted.graceNanos)),
                u("flags", 1, accepted.holdExit ? 1 : 0, accepted.holdExit ? "holdExit" : "none"),
                u("collectorMonotonicNanos", 8, accepted.collectorMonotonicNanos, seconds(accepted.collectorMonotonicNanos)),
            ]
        case .helloRefused(let refused):
            return [u("code", 1, refused.code.rawValue, "\(refused.code)")] + string("reason", refused.reason)
        case .defineString(let definition):
            return [u("stringID", 4, definition.stringID)] + string("value", definition.value)
        case .snapshotBegin(let begin):
            return [u("sequence", 8, begin.sequence), u("nodeCount", 4, begin.nodeCount)]
        case .snapshotEnd(let sequence):
            return [u("sequence", 8, sequence)]
        case .nodeAttached(let attached):
            return [
                u("sequence", 8, attached.sequence),
                u("timeNanos", 8, attached.timeNanos, seconds(attached.timeNanos)),
                u("nodeID", 8, attached.nodeID),
                u("parentID", 8, attached.parentID, attached.parentID == 0 ? "root" : ""),
                u("kindStringID", 4, attached.kindStringID),
                u("nameStringID", 4, attached.nameStringID, attached.nameStringID == 0 ? "none" : ""),
            ]
        case .objectAdded(let added):
            return [
                u("sequence", 8, added.sequence),
                u("timeNanos", 8, added.timeNanos, seconds(added.timeNanos)),
                u("nodeID", 8, added.nodeID),
                u("objectIndex", 2, added.objectIndex),
                u("roleStringID", 4, added.roleStringID),
                u("typeNameStringID", 4, added.typeNameStringID),
            ]
        case .stateChanged(let changed):
            return [
                u("sequence", 8, changed.sequence),
                u("timeNanos", 8, changed.timeNanos, seconds(changed.timeNanos)),
                u("nodeID", 8, changed.nodeID),
                u("state", 1, changed.state.rawValue, "\(changed.state)"),
            ]
        case .nodeDetached(let detached):
            return [
                u("sequence", 8, detached.sequence),
                u("timeNanos", 8, detached.timeNanos, seconds(detached.timeNanos)),
                u("nodeID", 8, detached.nodeID),
            ]
        case .objectReleased(let released):
            return [
                u("sequence", 8, released.sequence),
                u("timeNanos", 8, released.timeNanos, seconds(released.timeNanos)),
                u("nodeID", 8, released.nodeID),
                u("objectIndex", 2, released.objectIndex),
            ]
        case .dropped(let count):
            return [u("count", 8, count)]
        case .goodbye(let reason):
            return [u("reason", 1, reason.rawValue, "\(reason)")]
        case .heartbeat(let monotonicNanos):
            return [u("monotonicNanos", 8, monotonicNanos, seconds(monotonicNanos))]
        case .retainers(let retainers):
            var fields = [
                u("nodeID", 8, retainers.nodeID),
                u("objectIndex", 2, retainers.objectIndex),
                u("verdict", 1, retainers.verdict.rawValue, "\(retainers.verdict)"),
                u("flags", 1, retainers.cutShort ? 1 : 0, retainers.cutShort ? "cutShort" : "none"),
                u("elapsedMicros", 4, retainers.elapsedMicros),
            ]
            fields += string("note", retainers.note)
            fields.append(u("hopCount", 2, retainers.hops.count))
            for hop in retainers.hops {
                fields.append(u("holderKind", 1, hop.holderKind.rawValue, "\(hop.holderKind)"))
                fields.append(u("holderNodeID", 8, hop.holderNodeID, hop.holderNodeID == 0 ? "none" : ""))
                fields += string("holder", hop.holder) + string("reference", hop.reference)
                fields.append(u("hopFlags", 1, hop.isSuspect ? 1 : 0, hop.isSuspect ? "suspect" : "none"))
            }
            return fields
        case .explain(let explain):
            return [u("requestID", 4, explain.requestID), u("count", 2, explain.nodeIDs.count)]
                + explain.nodeIDs.map { u("nodeID", 8, $0) }
        case .explained(let explained):
            return [
                u("requestID", 4, explained.requestID),
                u("outcome", 1, explained.outcome.rawValue, "\(explained.outcome)"),
                u("objectCount", 2, explained.objectCount),
            ]
        case .defineSite(let site):
            return [u("siteID", 4, site.siteID), u("fileStringID", 4, site.fileStringID), u("line", 4, site.line)]
        case .defineTest(let test):
            return [
                u("testID", 4, test.testID), u("suiteStringID", 4, test.suiteStringID, test.suiteStringID == 0 ? "none" : ""),
                u("nameStringID", 4, test.nameStringID), u("siteID", 4, test.siteID, test.siteID == 0 ? "none" : ""),
            ]
        case .nodeOrigin(let origin):
            return [
                u("nodeID", 8, origin.nodeID), u("siteID", 4, origin.siteID, origin.siteID == 0 ? "none" : ""),
                u("testID", 4, origin.testID, origin.testID == 0 ? "none" : ""),
            ]
        case .request(let request):
            return [u("requestID", 4, request.requestID), u("command", 1, request.command.rawValue, "\(request.command)")]
                + string("argument", request.argument)
                + [u("depth", 4, request.depth, request.depth == 0 ? "unlimited" : "")]
                + string("rootPath", request.rootPath)
        case .response(let response):
            return [
                u("requestID", 4, response.requestID),
                u("status", 1, response.status.rawValue, "\(response.status)"),
                u("part", 4, response.part),
                u("isLast", 1, response.isLast ? 1 : 0),
            ] + body(response.body)
        case .event(let event):
            return [u("subscriptionID", 4, event.subscriptionID)] + body(event.body)
        }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
