/// Files that one command would both read and write, or write twice: two reports in one file
/// leave only the last, and a report over the baseline destroys it. Found before the command
/// runs, by file identity (``FileIdentity``), not by spelling.
enum OutputConflict {
    /// A file named on the command line: the option that names it and the path as given.
    struct Named: Sendable {
        var option: String
        var path: String
    }

    /// The first conflict among `outputs` and `inputs`, as a message; nil when there is none.
    /// `allowed` lists (output option, input option) pairs that may name the same file on
    /// purpose (`--write-baseline` over `--baseline` updates it).
    static func find(
        outputs: [Named], inputs: [Named], allowed: [(output: String, input: String)] = [],
        identify: (String) -> FileIdentity = FileIdentity.of
    ) -> String? {
        let outputIdentities = outputs.map { identify($0.path) }
        for (index, output) in outputs.enumerated() {
            for earlier in outputs[..<index].indices where outputIdentities[earlier] == outputIdentities[index] {
                let other = outputs[earlier]
                return "\(other.option) \(other.path) and \(output.option) \(output.path) name the same file: "
                    + "each output needs a file of its own"
            }
        }
        for input in inputs {
            let identity = identify(input.path)
            for (index, output) in outputs.enumerated() where outputIdentities[index] == identity {
                if allowed.contains(where: { $0.output == output.option && $0.input == input.option }) { continue }
                return "\(output.option) \(output.path) would replace \(input.option) \(input.path) (the same file): "
                    + "write it elsewhere"
            }
        }
        return nil
    }
}
