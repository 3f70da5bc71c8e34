/// The outcome of a control request, carried by ``ControlResponseFrame``.
public enum ResponseStatus: UInt8, Sendable, CaseIterable {
    /// The request succeeded; the body holds the answer.
    case ok = 0
    /// No process matches the argument.
    case notFound = 1
    /// More than one process matches the argument.
    case ambiguous = 2
    /// The request was malformed.
    case badRequest = 3
    /// The collector failed while answering.
    case internalError = 4
    /// The answer cannot be had now: the host is busy with another request of the same kind,
    /// has ended, or did not answer in time (version 2, `explain`).
    case unavailable = 5
}
