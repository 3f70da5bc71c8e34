import Testing

@testable import NodescopeReports

/// The baseline file: its strict reader, its errors (with line and column), and path globs.
@Suite struct BaselineTests {
    private func parse(_ text: String) throws(BaselineError) -> Baseline {
        try Baseline.parse(Array(text.utf8))
    }

    private func error(_ text: String) -> BaselineError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsFingerprintAndPathEntriesWithTheirLines() throws {
        let baseline = try parse(
            """
            {
              "version": 1,
              "entries": [
                { "fingerprint": "0123456789ABCDEF", "path": "AppFlow/ProfileFlow", "reason": "kept by the cache" },
                { "path": "**/LegacyFlow", "reason": "until 2.0 \\u00e9\\n" }
              ]
            }
            """)
        #expect(baseline.entries.count == 2)
        #expect(baseline.entries[0].fingerprint == "0123456789abcdef")
        #expect(baseline.entries[0].line == 4)
        #expect(baseline.entries[1].fingerprint == nil)
        #expect(baseline.entries[1].path?.text == "**/LegacyFlow")
        #expect(baseline.entries[1].reason == "until 2.0 é\n")
        #expect(baseline.entries[1].number == 2)
        #expect(baseline.entry(matchingFingerprint: "0123456789abcdef", path: ["AppFlow", "ProfileFlow"])?.number == 1)
        #expect(
            baseline.entry(matchingFingerprint: "0123456789abcdef", path: ["AppFlow", "Other"]) == nil,
            "both fingerprint and path must match when both are given")
        #expect(baseline.entry(matchingFingerprint: "ffffffffffffffff", path: ["A", "B", "LegacyFlow"])?.number == 2)
        #expect(try parse("{\"version\": 1, \"entries\": []}").entries.isEmpty)
    }

    @Test(
        arguments: [
            ("", 1, 1, "the file is empty"),
            ("[]", 1, 1, "a baseline is a JSON object"),
            ("{\"version\": 1, \"entries\": [],}", 1, 30, "a trailing comma before '}'"),
            ("{\n\"version\": 1,\n\"entries\": [\n{\"path\": \"A\", \"reason\": \"r\"},\n]\n}", 5, 1, "a trailing comma before ']'"),
            ("{\"version\": 2, \"entries\": []}", 1, 13, "\"version\" must be 1"),
            ("{\"entries\": []}", 1, 1, "the field \"version\" is missing"),
            ("{\"version\": 1}", 1, 1, "the field \"entries\" is missing"),
            ("{\"version\": 1, \"entries\": {}}", 1, 27, "\"entries\" must be an array"),
            ("{\"version\": 1, \"entries\": [], \"comment\": \"x\"}", 1, 31, "unknown field \"comment\""),
            ("{\"version\": 1, \"entries\": [\n  {\"path\": \"A\"}]}", 2, 3, "entries[0] has no \"reason\""),
            ("{\"version\": 1, \"entries\": [\n  {\"reason\": \"r\"}]}", 2, 3, "entries[0] has neither \"fingerprint\" nor \"path\""),
            ("{\"version\": 1, \"entries\": [\n  {\"path\": \"A\", \"reason\": \" \"}]}", 2, 27, "entries[0].reason is empty"),
            (
                "{\"version\": 1, \"entries\": [\n  {\"fingerprint\": \"12ab\", \"reason\": \"r\"}]}", 2, 19,
                "entries[0].fingerprint \"12ab\" is not a leak fingerprint"
            ),
            (
                "{\"version\": 1, \"entries\": [\n  {\"path\": \"A//B\", \"reason\": \"r\"}]}", 2, 12,
                "entries[0].path \"A//B\" is not a path pattern"
            ),
            (
                "{\"version\": 1, \"entries\": [\n  {\"path\": 3, \"reason\": \"r\"}]}", 2, 12,
                "entries[0].path must be a string, not a number"
            ),
            (
                "{\"version\": 1, \"entries\": [\n  {\"path\": \"A\", \"paht\": \"B\", \"reason\": \"r\"}]}", 2, 17,
                "unknown field \"paht\" in entries[0]"
            ),
            ("{\"version\": 1, \"version\": 1}", 1, 16, "the key \"version\" appears twice"),
            ("{\"version\": 1, \"entries\": [\"a\nb\"]}", 1, 30, "the string is not closed before the end of the line"),
            ("{\"version\": 01}", 1, 13, "a number must not start with 0"),
            ("{\"version\": 1} x", 1, 16, "unexpected text after the end"),
            ("{\"version\": tru}", 1, 13, "expected a value, found 't'"),
        ] as [(String, Int, Int, String)])
    func rejectsWhatIsWrongNamingWhere(_ text: String, _ line: Int, _ column: Int, _ message: String) throws {
        let found = try #require(error(text))
        #expect(found.message.contains(message), "\(found.message)")
        #expect((found.line, found.column) == (line, column), "\(found.message) at \(found.line):\(found.column)")
    }

    @Test(
        arguments: [
            ("AppFlow/*/ProfileFlow", ["AppFlow", "LoggedInFlow", "ProfileFlow"], true),
            ("AppFlow/*/ProfileFlow", ["AppFlow", "ProfileFlow"], false),
            ("AppFlow/*/ProfileFlow", ["AppFlow", "A", "B", "ProfileFlow"], false),
            ("**/LegacyFlow", ["LegacyFlow"], true),
            ("**/LegacyFlow", ["AppFlow", "X", "LegacyFlow"], true),
            ("**/LegacyFlow", ["AppFlow", "LegacyFlow", "Child"], false),
            ("AppFlow/**", ["AppFlow"], true),
            ("AppFlow/**", ["AppFlow", "A", "B"], true),
            ("AppFlow/**/Share*", ["AppFlow", "Feed", "Detail", "ShareFlow"], true),
            ("AppFlow/**/Share*", ["AppFlow", "Feed", "Detail", "Sharing", "X"], false),
            ("*Flow", ["ProfileFlow"], true),
            ("*Flow", ["ProfileFlowImp"], false),
            ("Pro?ile*", ["ProfileFlow"], true),
            ("A*B*C", ["AxxByyC"], true),
            ("A*B*C", ["AxxByyD"], false),
            ("Root/Leak", ["Root", "Leak"], true),
            ("Root/Leak", ["Root", "Leak", "Deeper"], false),
            ("**", ["Anything", "At", "All"], true),
            ("Ünïcödé/*", ["Ünïcödé", "x"], true),
        ] as [(String, [String], Bool)])
    func pathGlobs(_ pattern: String, _ path: [String], _ expected: Bool) throws {
        let glob = try #require(BaselinePathPattern(pattern))
        #expect(glob.matches(path) == expected)
    }

    @Test func badGlobsAreRefused() {
        for text in ["", "/A", "A/", "A//B"] { #expect(BaselinePathPattern(text) == nil, "\(text)") }
    }

    @Test func aWrittenBaselineReadsBack() throws {
        let text = Baseline.document(for: [
            (fingerprint: "0123456789abcdef", path: ["A", "B \"quoted\""], reason: nil),
            (fingerprint: "fedcba9876543210", path: ["C"], reason: "kept"),
        ])
        let baseline = try parse(text)
        #expect(baseline.entries.map(\.fingerprint) == ["0123456789abcdef", "fedcba9876543210"])
        #expect(baseline.entries.map(\.reason) == [Baseline.placeholderReason, "kept"])
        #expect(baseline.entries[0].matches(fingerprint: "0123456789abcdef", path: ["A", "B \"quoted\""]))
    }
}
