import NodescopeCollector
import NodescopeControlCodec

/// Where the trees that a reading command or the web view shows come from: a collector now
/// (``CollectorSource``), a recording at an instant (``RecordedInstant``), or a tree saved as JSON
/// (``TreeFileSource``). `tree`, `leaks`, `export`, `diff` and `ui` are written once against this
/// protocol; `--from FILE --at T` only chooses the source.
///
/// Every answer is what the daemon's control API answers (docs/PROTOCOL.md, "Control API"): a
/// recording answers through the same collector queries (``Collector/treeAnswer(process:rootPath:depth:)``)
/// on its replayed collector, and refuses with the same ``ControlClient/Refusal``.
package protocol TreeSource: Sendable {
    /// Every process the source knows: a collector's, connected ones first; a recording's one.
    func processes() async throws -> [ProcessSummary]

    /// The tree of `process` (a pid or a name; nil for a recording's or a file's own tree), its
    /// subtree at `rootPath` (node names separated by `/`, empty for all), `depth` levels below
    /// the roots (nil for all).
    func tree(of process: String?, rootPath: String, depth: Int?) async throws -> TreeView

    /// The leak records of `process`, or of every process when nil, in flag order.
    func leaks(of process: String?) async throws -> [LeakRecord]

    /// How many detached nodes of `process` (of every connected process when nil) await release
    /// once the source has waited up to `seconds` for their verdicts. A collector's hosts go on
    /// giving verdicts; a recording's instant and a file are fixed, so they answer at once.
    func awaitingRelease(of process: String?, settlingWithin seconds: Double) async throws -> Int

    /// The session that `process` means (a recording's or a file's own when nil).
    func session(of process: String?) async throws -> SessionID

    /// ``tree(of:rootPath:depth:)`` as its JSON document (``TreeJSON``), part by part: a
    /// collector's is passed on as it arrives, never held or decoded whole.
    func treeBody(of process: String?, rootPath: String, depth: Int?, eachPart: ([UInt8]) throws -> Void) async throws

    /// ``processes()`` as the control API's JSON.
    func processesBody() async throws -> [UInt8]

    /// ``leaks(of:)`` as the control API's JSON.
    func leaksBody(of process: String?) async throws -> [UInt8]
}

extension TreeSource {
    package func treeBody(
        of process: String?, rootPath: String, depth: Int?, eachPart: ([UInt8]) throws -> Void
    ) async throws {
        let view = try await tree(of: process, rootPath: rootPath, depth: depth)
        var failure: (any Error)?
        TreeJSON.write(view) { part in
            guard failure == nil else { return }
            do { try eachPart(part) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    package func processesBody() async throws -> [UInt8] { ControlBody.encode(try await processes()) }

    package func leaksBody(of process: String?) async throws -> [UInt8] { ControlBody.encode(try await leaks(of: process)) }

    package func session(of process: String?) async throws -> SessionID {
        try await tree(of: process, rootPath: "", depth: 0).session
    }
}
