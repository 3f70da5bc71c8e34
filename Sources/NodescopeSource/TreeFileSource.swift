import NodescopeCollector
import NodescopeControl

/// A tree saved as JSON (`export --format json`, `tree --json`): the tree alone, with no leak
/// records and no process list. A root path or a depth is for the reader of the tree to apply.
package struct TreeFileSource: TreeSource {
    /// The tree the file holds.
    package let view: TreeView

    package init(_ view: TreeView) {
        self.view = view
    }

    package func processes() async throws -> [ProcessSummary] { [] }

    package func tree(of process: String?, rootPath: String, depth: Int?) async throws -> TreeView {
        guard rootPath.isEmpty, depth == nil else {
            throw ControlClient.Refusal(
                .badRequest("a tree read from JSON is whole: a root path or a depth applies to a collector or a recording"))
        }
        return view
    }

    package func session(of process: String?) async throws -> SessionID { view.session }

    package func leaks(of process: String?) async throws -> [LeakRecord] { [] }

    package func awaitingRelease(of process: String?, settlingWithin seconds: Double) async throws -> Int { 0 }
}
