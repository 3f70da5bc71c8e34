/// Why a recording cannot be read, or where it stops being readable.
package struct RecordingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of problem.
    package enum Code: String, Sendable, Equatable {
        /// The file is not a Nodescope recording (no magic).
        case notARecording
        /// A recording of a format version this reader does not know.
        case unsupportedVersion
        /// The file ends before its header does.
        case truncated
        /// A field or record breaks the format.
        case corrupt
    }

    /// What kind of problem.
    package var code: Code
    /// A sentence that says what was found.
    package var message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
