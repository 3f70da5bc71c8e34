import Glibc
import NodescopeSocket
import Testing

/// errno in words, one way for the agent, the daemon and the command line.
@Suite("SystemErrorText: errno in words")
struct SystemErrorTextTests {
    @Test func aKnownErrorIsTheCLibrarysTextWithItsNumber() {
        #expect(SystemErrorText.describe(ENOENT) == "No such file or directory (errno \(ENOENT))")
        #expect(SystemErrorText.describe(ENOSPC) == "No space left on device (errno \(ENOSPC))")
    }

    @Test func anUnknownNumberStillSaysWhichItIs() {
        #expect(SystemErrorText.describe(99_999).hasSuffix("(errno 99999)"))
        #expect(SystemErrorText.describe(-1).hasSuffix("(errno -1)"))
    }
}
