import NodescopeCollector
import Testing

/// Host-supplied text on a terminal: every control character shown, nothing else changed.
@Suite struct VisibleTextTests {
    @Test func controlCharactersAreShownVisibly() {
        #expect(VisibleText.escaped("Root\u{1B}[2J") == #"Root\e[2J"#)
        #expect(VisibleText.escaped("a\nb\rc\td") == #"a\nb\rc\td"#)
        #expect(VisibleText.escaped("bell\u{07}\u{00}\u{7F}") == #"bell\x07\x00\x7f"#)
        #expect(VisibleText.escaped("csi\u{9B}31m\u{85}") == #"csi\u{9b}31m\u{85}"#)
        #expect(VisibleText.escaped("ab\u{202E}cd\u{2028}") == #"ab\u{202e}cd\u{2028}"#)
    }

    @Test func ordinaryTextIsUntouched() {
        for text in ["LoggedInFlow", "Ünïcødé › 名前 🙂", "path\\with\\backslashes", ""] {
            #expect(VisibleText.escaped(text) == text)
        }
    }

}
