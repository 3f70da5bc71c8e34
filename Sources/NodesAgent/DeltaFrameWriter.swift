import NodesTracking
import NodescopeWire

/// Appends the host stream's five delta frames (attached, object added, state changed,
/// detached, released), byte for byte as ``FrameEncoder`` writes them, in one append each.
///
/// The agent's writer encodes several of these for every node that comes and goes; the general
/// encoder appends them a byte at a time through a `WireMessage`, which costs more than the
/// rest of the event's way to the socket. Only the host uses this: the collector, its buffers
/// and the wire stay as they are (a test compares both encoders on every frame type here).
enum DeltaFrameWriter {
    /// A frame's bytes before they are appended: the largest of these frames is 45 bytes.
    private typealias Scratch = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    @inline(__always)
    static func nodeAttached(
        sequence: UInt64, time: UInt64, node: UInt64, parent: UInt64, kind: UInt32, name: UInt32,
        into buffer: inout [UInt8]
    ) {
        append(.nodeAttached, payload: 40, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
            frame.storeBytes(of: parent.littleEndian, toByteOffset: 29, as: UInt64.self)
            frame.storeBytes(of: kind.littleEndian, toByteOffset: 37, as: UInt32.self)
            frame.storeBytes(of: name.littleEndian, toByteOffset: 41, as: UInt32.self)
        }
    }

    @inline(__always)
    static func objectAdded(
        sequence: UInt64, time: UInt64, node: UInt64, index: UInt16, role: UInt32, typeName: UInt32,
        into buffer: inout [UInt8]
    ) {
        append(.objectAdded, payload: 34, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
            frame.storeBytes(of: index.littleEndian, toByteOffset: 29, as: UInt16.self)
            frame.storeBytes(of: role.littleEndian, toByteOffset: 31, as: UInt32.self)
            frame.storeBytes(of: typeName.littleEndian, toByteOffset: 35, as: UInt32.self)
        }
    }

    @inline(__always)
    static func stateChanged(sequence: UInt64, time: UInt64, node: UInt64, state: UInt8, into buffer: inout [UInt8]) {
        append(.stateChanged, payload: 25, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
            frame.storeBytes(of: state, toByteOffset: 29, as: UInt8.self)
        }
    }

    @inline(__always)
    static func nodeDetached(sequence: UInt64, time: UInt64, node: UInt64, into buffer: inout [UInt8]) {
        append(.nodeDetached, payload: 24, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
        }
    }

    @inline(__always)
    static func objectReleased(sequence: UInt64, time: UInt64, node: UInt64, index: UInt16, into buffer: inout [UInt8]) {
        append(.objectReleased, payload: 26, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
            frame.storeBytes(of: index.littleEndian, toByteOffset: 29, as: UInt16.self)
        }
    }

    /// Appends one frame: the length (type byte and payload), the type, then the payload that
    /// `fill` stores from offset 5. The buffer grows as ``FrameEncoder`` grows it.
    @inline(__always)
    private static func append(
        _ type: FrameType, payload: Int, into buffer: inout [UInt8], _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let size = WireLimits.frameHeaderBytes + payload
        let needed = buffer.count + size
        if needed > buffer.capacity { buffer.reserveCapacity(Swift.max(needed, buffer.capacity * 2)) }
        var scratch: Scratch = (0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { frame in
            frame.storeBytes(of: UInt32(1 + payload).littleEndian, toByteOffset: 0, as: UInt32.self)
            frame.storeBytes(of: type.rawValue, toByteOffset: 4, as: UInt8.self)
            fill(frame)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: frame[0..<size]))
        }
    }
}
