import NodescopeReports
import Testing

@Suite("Vocabulary: when a leak was flagged")
struct FlaggedWordsTests {
    @Test func aLeakFlaggedAfterItsGraceSaysHowLongAfterItsDetach() {
        #expect(Vocabulary.flagged(delayNanos: 1_000_000_000, graceNanos: 1_000_000_000) == "1.0 s after detach")
        #expect(Vocabulary.flagged(delayNanos: 126_000_000, graceNanos: nil) == "126 ms after detach")
    }

    @Test func aLeakSettledAtExitSaysWhyItCameBeforeItsGrace() {
        let text = Vocabulary.flagged(delayNanos: 126_000_000, graceNanos: 1_000_000_000)
        #expect(text == "at its process's exit, 126 ms after detach (within the grace: nothing holding it lets go)")
    }
}
