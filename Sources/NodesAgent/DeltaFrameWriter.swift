import NodesTracking
import NodescopeWire

/// Appends the host stream's five delta frames (attached, object added, state changed,
/// detached, released) and a node's origin, byte for byte as ``FrameEncoder`` writes them, in one append each.
///
/// The agent's writer encodes several of these for every node that comes and goes; the general
/// encoder appends them a byte at a time through a `WireMessage`, which costs more than the
/// rest of the event's way to the socket. Only the host uses this: the collector, its buffers
/// and the wire stay as they are (a test compares both encoders on every frame type here).
enum DeltaFrameWriter {
    @inline(__always)
    static func nodeAttached(
        sequence: UInt64, time: UInt64, node: UInt64, parent: UInt64, kind: UInt32, name: UInt32,
        into buffer: inout some FrameSink
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
        into buffer: inout some FrameSink
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
    static func stateChanged(sequence: UInt64, time: UInt64, node: UInt64, state: UInt8, into buffer: inout some FrameSink) {
        append(.stateChanged, payload: 25, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
            frame.storeBytes(of: state, toByteOffset: 29, as: UInt8.self)
        }
    }

    @inline(__always)
    static func nodeDetached(sequence: UInt64, time: UInt64, node: UInt64, into buffer: inout some FrameSink) {
        append(.nodeDetached, payload: 24, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
        }
    }

    @inline(__always)
    static func objectReleased(sequence: UInt64, time: UInt64, node: UInt64, index: UInt16, into buffer: inout some FrameSink) {
        append(.objectReleased, payload: 26, into: &buffer) { frame in
            frame.storeBytes(of: sequence.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: time.littleEndian, toByteOffset: 13, as: UInt64.self)
            frame.storeBytes(of: node.littleEndian, toByteOffset: 21, as: UInt64.self)
            frame.storeBytes(of: index.littleEndian, toByteOffset: 29, as: UInt16.self)
        }
    }

    @inline(__always)
    static func nodeOrigin(node: UInt64, site: UInt32, test: UInt32, into buffer: inout some FrameSink) {
        append(.nodeOrigin, payload: 16, into: &buffer) { frame in
            frame.storeBytes(of: node.littleEndian, toByteOffset: 5, as: UInt64.self)
            frame.storeBytes(of: site.littleEndian, toByteOffset: 13, as: UInt32.self)
            frame.storeBytes(of: test.littleEndian, toByteOffset: 17, as: UInt32.self)
        }
    }

    /// Appends one frame: the length (type byte and payload), the type, then the payload that
    /// `fill` stores from offset 5.
    @inline(__always)
    private static func append(
        _ type: FrameType, payload: Int, into sink: inout some FrameSink, _ fill: (UnsafeMutableRawPointer) -> Void
    ) {
        sink.appendFrame(size: WireLimits.frameHeaderBytes + payload) { frame in
            frame.storeBytes(of: UInt32(1 + payload).littleEndian, toByteOffset: 0, as: UInt32.self)
            frame.storeBytes(of: type.rawValue, toByteOffset: 4, as: UInt8.self)
            fill(frame)
        }
    }
}

/// Where ``DeltaFrameWriter`` appends a frame: a byte array, or a ``ByteRun``.
protocol FrameSink {
    /// Appends `size` bytes that `write` stores (`size` is at most 48).
    mutating func appendFrame(size: Int, _ write: (UnsafeMutableRawPointer) -> Void)
}

extension Array: FrameSink where Element == UInt8 {
    @inline(__always)
    mutating func appendFrame(size: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
        let needed = count + size
        if needed > capacity { reserveCapacity(Swift.max(needed, capacity * 2)) }
        // The frame is stored in a scratch value first, then appended in one go.
        var scratch: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &scratch) { frame in
            write(frame.baseAddress!)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: frame[0..<size]))
        }
    }
}

/// A growable run of bytes in raw memory, where the agent's writer encodes the frames of the
/// changes it applies: appending a frame stores its words in place, where appending to an array
/// costs a generic call and a copy each (callgrind: about 130 instructions a frame, 15 frames a
/// node cycle). Its bytes move to the connection's array before anything else is encoded there
/// or written (``CollectorConnection``), so the order of frames is kept.
///
/// A class, so that its memory is freed with it. Unchecked `Sendable`: one thread at a time uses
/// it (the connection's owner, or the tracker on its behalf, under the tracker's lock).
final class ByteRun: FrameSink, @unchecked Sendable {
    @exclusivity(unchecked) private var base: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity: Int
    /// The bytes appended since the last ``move(into:)``.
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 16_384) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
        // Zeroed: the block's earlier bytes (a freed object's words) would otherwise lie in
        // memory the retainer analysis scans as this run's.
        base.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
    }

    deinit { base.deallocate() }

    /// The common case has no call in it (growing is a function of its own, which writes the
    /// frame too), so that an encoding function that inlines it saves no registers for one.
    @inline(__always)
    func appendFrame(size: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
        let end = count &+ size
        guard end <= capacity else { return appendFrameGrowing(size: size, write) }
        write(base + count)
        count = end
    }

    @inline(never)
    private func appendFrameGrowing(size: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
        grow(to: count + size)
        write(base + count)
        count += size
    }

    /// Whether `bytes` more fit without growing.
    @inline(__always)
    func hasRoom(_ bytes: Int) -> Bool {
        capacity &- count >= bytes
    }

    /// Where a caller that found room (``hasRoom(_:)``) appends frames with no test and no call.
    struct InRoom: FrameSink {
        unowned(unsafe) let run: ByteRun

        @inline(__always)
        mutating func appendFrame(size: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
            run.appendInRoom(size: size, write)
        }
    }

    @inline(__always)
    fileprivate func appendInRoom(size: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
        write(base + count)
        count &+= size
    }

    /// Appends `bytes` (a frame encoded elsewhere).
    func append(_ bytes: [UInt8]) {
        if count + bytes.count > capacity { grow(to: count + bytes.count) }
        bytes.withUnsafeBytes { source in
            if let start = source.baseAddress { (base + count).copyMemory(from: start, byteCount: source.count) }
        }
        count += bytes.count
    }

    /// Calls `body` with the bytes appended since the last move, where they lie.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Starts over, the bytes dropped (they were sent from where they lie).
    func clear() { count = 0 }

    /// Moves the bytes to the end of `array`, and starts over.
    func move(into array: inout [UInt8]) {
        guard count > 0 else { return }
        array.append(contentsOf: UnsafeRawBufferPointer(start: base, count: count))
        count = 0
    }

    @inline(never)
    private func grow(to needed: Int) {
        let grown = Swift.max(needed, capacity * 2)
        let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        larger.copyMemory(from: base, byteCount: count)
        (larger + count).initializeMemory(as: UInt8.self, repeating: 0, count: grown - count)
        base.deallocate()
        base = larger
        capacity = grown
    }
}
