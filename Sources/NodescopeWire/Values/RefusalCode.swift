/// Why the collector refused a hello (see ``HelloRefused``).
public enum RefusalCode: UInt8, Sendable, CaseIterable {
    /// The hello names a protocol version that the collector does not speak.
    case versionUnsupported = 1
    /// The peer runs as a different user than the collector.
    case wrongUser = 2
    /// The hello was malformed or was not the first frame.
    case badHandshake = 3
    /// The collector is busy or refuses for another reason that the text explains.
    case busyOrOther = 4
}
