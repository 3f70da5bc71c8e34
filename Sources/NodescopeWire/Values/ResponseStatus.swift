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
}
