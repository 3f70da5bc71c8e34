import Foundation
import NodescopeCollector

/// The bodies of control responses and events: UTF-8 JSON of the collector's query types
/// (docs/PROTOCOL.md, "Control API"). One encoder and decoder pair for the daemon and the CLI.
package enum ControlBody {
    /// The body of a failed request.
    package struct Failure: Codable, Sendable, Equatable {
        /// What went wrong, for a person.
        package var error: String
        /// For an ambiguous name: the processes it matched.
        package var candidates: [ProcessSummary]?

        /// Creates a failure body.
        package init(error: String, candidates: [ProcessSummary]? = nil) {
            self.error = error
            self.candidates = candidates
        }
    }

    /// The body of a successful `explain`: the nodes asked about as the collector holds them
    /// once the host has answered (their ``NodeInfo/retainers`` carry the paths), and what the
    /// host said.
    package struct Explanation: Codable, Sendable, Equatable {
        /// How the host answered: `explained`, `nothingAlive` (every node asked about was
        /// released meanwhile) or `unavailable` (the host cannot analyse its memory).
        package var outcome: String
        /// The nodes asked about that the collector still has, in the order asked.
        package var nodes: [NodeInfo]
        /// Each node's path of names from its root, in the order of ``nodes``.
        package var paths: [[String]]

        /// Creates an explanation.
        package init(outcome: String, nodes: [NodeInfo], paths: [[String]]) {
            self.outcome = outcome
            self.nodes = nodes
            self.paths = paths
        }
    }

    /// The answer to `record`: the recording has started (or waits for the process).
    package struct RecordingStarted: Codable, Sendable, Equatable {
        /// The file being written.
        package var path: String
        /// The recorded process.
        package var pid: UInt32
        /// Its name.
        package var processName: String

        /// Creates the answer.
        package init(path: String, pid: UInt32, processName: String) {
            self.path = path
            self.pid = pid
            self.processName = processName
        }
    }

    /// The event that ends a `record` request: how the recording went.
    package struct RecordingOutcome: Codable, Sendable, Equatable {
        /// The file.
        package var path: String
        /// Records written (frames and the recording's own).
        package var records: UInt64
        /// Bytes written.
        package var bytes: UInt64
        /// Frames lost to a writer that did not keep up (the recording has gaps for them).
        package var lostFrames: UInt64
        /// Why writing failed, if it did.
        package var error: String?

        /// Creates an outcome.
        package init(path: String, records: UInt64, bytes: UInt64, lostFrames: UInt64, error: String?) {
            self.path = path
            self.records = records
            self.bytes = bytes
            self.lostFrames = lostFrames
            self.error = error
        }
    }

    /// Encodes a body. A tree (the largest body by far) is written by ``TreeJSON``.
    package static func encode(_ value: some Encodable) -> [UInt8] {
        if let view = value as? TreeView { return TreeJSON.encode(view) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(value))) ?? Array(#"{"error":"the collector could not encode its answer"}"#.utf8)
    }

    /// Decodes a body. A tree is read by ``TreeJSONReader``.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if type == TreeView.self, let view = try TreeJSONReader.decode(bytes) as? T { return view }
        return try JSONDecoder().decode(type, from: Data(bytes))
    }
}
