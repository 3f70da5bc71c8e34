import Foundation
import NodescopeWire

/// Frames written byte by byte from docs/PROTOCOL.md, not by the Swift encoder: the tests that
/// use them check the daemon against the document, and can say what no encoder would.
enum RawFrames {
    static func u16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func str(_ value: String) -> [UInt8] { u16(UInt16(value.utf8.count)) + Array(value.utf8) }

    static func frame(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        u32(UInt32(payload.count + 1)) + [type] + payload
    }

    static let magic: [UInt8] = [0x4E, 0x53, 0x43, 0x50]

    static func hello(
        version: UInt16 = 1, role: UInt8 = 1, pid: UInt32, monotonic: UInt64, name: String, extra: [UInt8] = []
    ) -> [UInt8] {
        frame(0x01, magic + u16(version) + [role] + u32(pid) + u64(monotonic) + u64(1_700_000_000_000_000_000) + str(name) + extra)
    }

    static func defineString(_ id: UInt32, _ value: String) -> [UInt8] { frame(0x10, u32(id) + str(value)) }
    static func snapshotBegin(_ sequence: UInt64, nodes: UInt32) -> [UInt8] { frame(0x11, u64(sequence) + u32(nodes)) }
    static func snapshotEnd(_ sequence: UInt64) -> [UInt8] { frame(0x12, u64(sequence)) }

    static func attached(_ sequence: UInt64, at time: UInt64, node: UInt64, parent: UInt64 = 0, kind: UInt32, name: UInt32 = 0) -> [UInt8] {
        frame(0x13, u64(sequence) + u64(time) + u64(node) + u64(parent) + u32(kind) + u32(name))
    }

    static func objectAdded(_ sequence: UInt64, at time: UInt64, node: UInt64, index: UInt16, role: UInt32, type: UInt32) -> [UInt8] {
        frame(0x14, u64(sequence) + u64(time) + u64(node) + u16(index) + u32(role) + u32(type))
    }

    static func detached(_ sequence: UInt64, at time: UInt64, node: UInt64) -> [UInt8] {
        frame(0x16, u64(sequence) + u64(time) + u64(node))
    }

    static func released(_ sequence: UInt64, at time: UInt64, node: UInt64, index: UInt16) -> [UInt8] {
        frame(0x17, u64(sequence) + u64(time) + u64(node) + u16(index))
    }

    static func heartbeat(_ time: UInt64) -> [UInt8] { frame(0x1A, u64(time)) }

    /// `retainers` (version 2): a path of hops for object `object` of `node`, flags 0, no note.
    static func retainers(
        node: UInt64, object: UInt16, verdict: UInt8,
        hops: [(kind: UInt8, node: UInt64, holder: String, reference: String, suspect: Bool)]
    ) -> [UInt8] {
        var payload = u64(node) + u16(object) + [verdict, 0] + u32(0) + str("") + u16(UInt16(hops.count))
        for hop in hops { payload += [hop.kind] + u64(hop.node) + str(hop.holder) + str(hop.reference) + [hop.suspect ? 1 : 0] }
        return frame(0x1B, payload)
    }
    static func goodbye(_ reason: UInt8) -> [UInt8] { frame(0x19, [reason]) }

    static func request(_ id: UInt32, command: UInt8, argument: String = "", depth: UInt32 = 0, rootPath: String = "") -> [UInt8] {
        frame(0x40, u32(id) + [command] + str(argument) + u32(depth) + str(rootPath))
    }

    /// The collector's `CLOCK_MONOTONIC` (the same clock as this process's), in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Decodes what a collector sent (its replies are checked, not produced, by the tests).
    static func decode(_ bytes: [UInt8]) -> [WireMessage] {
        var decoder = FrameDecoder()
        decoder.feed(bytes)
        var messages: [WireMessage] = []
        while let message = try? decoder.next() { messages.append(message) }
        return messages
    }
}
