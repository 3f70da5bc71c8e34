/// The metrics endpoint could not listen (the port taken, an address not this machine's), or
/// stopped.
package struct MetricsFailure: Error, CustomStringConvertible {
    /// Where it was to listen.
    package let address: MetricsAddress
    /// What went wrong, in the library's words.
    package let underlying: String

    /// A failure on `address`.
    package init(address: MetricsAddress, underlying: String) {
        self.address = address
        self.underlying = underlying
    }

    package var description: String { "cannot serve metrics on \(address): \(underlying)" }
}
