import Testing

@testable import NodescopeReports

/// One XML escaper for the JUnit report, the SVG timeline and the web view's redirect page.
@Suite("XML text, escaped one way")
struct XMLTextTests {
    @Test func markupBecomesEntitiesInAttributesAndContent() {
        let text = #"<a href="x">Tom & Jerry's</a>"#
        let expected = "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;"
        #expect(XMLText.escaped(text) == expected)
        #expect(XMLText.escaped(text, attribute: false) == expected)
    }

    @Test func lineBreaksAreReferencesInAttributesAndStayInContent() {
        #expect(XMLText.escaped("a\nb\tc\rd") == "a&#10;b&#9;c&#13;d")
        #expect(XMLText.escaped("a\nb\tc\rd", attribute: false) == "a\nb\tc\rd")
    }

    @Test func charactersXMLCannotHoldAreReplaced() {
        let text = "nul\u{0}bell\u{7}escape\u{1B}\u{FFFE}\u{FFFF}"
        let expected = "nul\u{FFFD}bell\u{FFFD}escape\u{FFFD}\u{FFFD}\u{FFFD}"
        #expect(XMLText.escaped(text) == expected)
        #expect(XMLText.escaped(text, attribute: false) == expected)
    }

    @Test func svgShowsControlCharactersThenEscapesTheSameWay() {
        #expect(SVGText.escaped("a\u{1B}[31m<b>") == #"a\e[31m&lt;b&gt;"#)
        #expect(SVGText.escaped("one & two\nthree", keepingLineBreaks: true) == "one &amp; two\nthree")
        #expect(SVGText.escaped("\u{FFFF}") == "\u{FFFD}")
    }
}
