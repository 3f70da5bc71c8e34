import Foundation
import NodescopeWire

/// A host whose tree is a shape that tree writers find hard, for `tools/bench trees` and by hand:
/// `nodescope-bench tree-host SOCKET chain|flat N` connects to a collector, sends N nodes (a chain
/// N deep, or one root with N - 1 children, each node with one object), prints `READY` and keeps
/// the connection open until it is killed.
enum TreeHost {
    /// The frames of the host: hello, strings, an empty snapshot, then one attach and one object
    /// per node.
    static func bytes(chain: Bool, nodes: Int, pid: UInt32) -> [UInt8] {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nodes * 80 + 512)
        let name = chain ? "deep-chain" : "flat-tree"
        encoder.encode(.hello(Hello(role: .host, pid: pid, monotonicNanos: 1, wallNanos: 0, processName: name)), into: &bytes)
        for (id, value) in ["Flow", "ChainFlow", "context", "ChainContext"].enumerated() {
            encoder.encode(.defineString(DefineStringFrame(stringID: UInt32(id + 1), value: value)), into: &bytes)
        }
        encoder.encode(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), into: &bytes)
        encoder.encode(.snapshotEnd(sequence: 0), into: &bytes)
        var sequence: UInt64 = 0
        for index in 0..<nodes {
            let id = UInt64(index + 1)
            let parent: UInt64 = index == 0 ? 0 : (chain ? id - 1 : 1)
            sequence += 1
            encoder.encode(
                .nodeAttached(
                    NodeAttachedFrame(sequence: sequence, timeNanos: 2, nodeID: id, parentID: parent, kindStringID: 1, nameStringID: 2)),
                into: &bytes)
            sequence += 1
            encoder.encode(
                .objectAdded(
                    ObjectAddedFrame(sequence: sequence, timeNanos: 2, nodeID: id, objectIndex: 0, roleStringID: 3, typeNameStringID: 4)),
                into: &bytes)
        }
        return bytes
    }

    /// Runs the host: `arguments` are SOCKET, `chain` or `flat`, and N.
    static func run(_ arguments: [String]) -> Never {
        guard arguments.count == 3, ["chain", "flat"].contains(arguments[1]), let nodes = Int(arguments[2]), nodes > 0 else {
            FileHandle.standardError.write(Data("usage: nodescope-bench tree-host SOCKET chain|flat N\n".utf8))
            exit(2)
        }
        // Made before connecting: a collector wants the hello within 5 s.
        let bytes = bytes(chain: arguments[1] == "chain", nodes: nodes, pid: UInt32(getpid()))
        let descriptor = rawConnect(arguments[0])
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else {
                FileHandle.standardError.write(
                    Data("tree-host: cannot send to \(arguments[0]): \(String(cString: strerror(errno)))\n".utf8))
                exit(1)
            }
            offset += sent
        }
        FileHandle.standardOutput.write(Data("READY\n".utf8))
        // Answers nothing: the collector's helloAccepted and heartbeats are read and dropped.
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while recv(descriptor, &buffer, buffer.count, 0) > 0 {}
        exit(0)
    }
}
