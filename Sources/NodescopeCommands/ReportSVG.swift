import Foundation
import NodescopeCollector

/// `check --svg-dir`: one diagram per leaked fingerprint, `leak-<fingerprint>.svg`, showing the
/// leaked node in its context: the subtree of its former parent (the whole tree for a root), as
/// the tree of its process was when the process ended, leaks drawn red.
enum ReportSVG {
    /// Writes the diagrams into `directory` (created if missing) and returns the files written.
    static func write(_ outcome: CheckOutcome, trees: [SessionID: TreeView], into directory: String) throws -> [String] {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIError("cannot create the SVG directory \(directory): \(error.localizedDescription)")
        }
        var written: [String] = []
        var seen = Set<String>()
        for group in outcome.groups where seen.insert(group.fingerprint).inserted {
            guard let view = trees[group.first.session] else { continue }
            let leaks = group.records.filter { $0.session == group.first.session }
            let parentPath = group.path.count > 1 ? group.path.dropLast().joined(separator: "/") : nil
            let svg: String
            do {
                svg = try ExportCommand.render(view, leaks: leaks, format: .svg, root: parentPath).text
            } catch {
                // The parent's name may not lead to it (a renamed or duplicate name): draw it all.
                do {
                    svg = try ExportCommand.render(view, leaks: leaks, format: .svg).text
                } catch {
                    throw CLIError("cannot draw the leak \(group.fingerprint): \(error)")
                }
            }
            let file = (directory as NSString).appendingPathComponent("leak-\(group.fingerprint).svg")
            try OutputFile.write(svg, to: file)
            written.append(file)
        }
        return written
    }
}
