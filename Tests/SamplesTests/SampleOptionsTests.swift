import SampleSupport
import Testing

/// The command line every sample shares, parsed without running a sample.
@Suite struct SampleOptionsTests {
    private let specification = SampleOptions.Specification(
        program: "sample-test", summary: "a test", leakKinds: [("retain-cycle", "a cycle"), ("view", "a view")],
        valueOptions: [("--nodes", "N", "how many")], flagOptions: [("--feed-v2", "a flag")])

    private func parse(_ arguments: [String]) -> Result<SampleOptions.Request, SampleOptions.UsageError> {
        SampleOptions.parseOrFail(arguments, specification)
    }

    @Test func readsEveryOption() throws {
        var expected = SampleOptions()
        expected.holdSeconds = 1.5
        expected.leak = "view"
        expected.quiet = true
        expected.values = ["--nodes": "500"]
        expected.flags = ["--feed-v2"]
        let arguments = ["--hold", "1.5", "--leak=view", "--quiet", "--nodes", "500", "--feed-v2"]
        #expect(try parse(arguments).get() == .run(expected))
        #expect(try parse([]).get() == .run(SampleOptions()))
        #expect(try parse(["--help"]).get() == .help)
    }

    @Test func refusesMistakesWithAMessageThatSaysWhatToDo() {
        #expect(throws: SampleOptions.UsageError(message: "unknown option '--bogus'")) { try parse(["--bogus"]).get() }
        #expect(throws: SampleOptions.UsageError(message: "--hold needs a value")) { try parse(["--hold"]).get() }
        #expect(throws: SampleOptions.UsageError(message: "--hold needs a number of seconds from 0 to 31536000, not 'soon'")) {
            try parse(["--hold", "soon"]).get()
        }
        #expect(throws: SampleOptions.UsageError(message: "--hold needs a number of seconds from 0 to 31536000, not '1e20'")) {
            try parse(["--hold", "1e20"]).get()
        }
        #expect(throws: SampleOptions.UsageError(message: "unknown leak kind 'worker'; the kinds are: retain-cycle, view")) {
            try parse(["--leak", "worker"]).get()
        }
    }

    @Test func usageListsTheOptionsAndTheLeakKinds() {
        let usage = specification.usage
        for text in ["usage: sample-test [options]", "--hold SECONDS", "--nodes N", "--feed-v2", "retain-cycle  a cycle"] {
            #expect(usage.contains(text), "\(text) in\n\(usage)")
        }
    }
}
