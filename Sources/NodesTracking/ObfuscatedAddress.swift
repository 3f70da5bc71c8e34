/// An object's address kept so that it is not a reference: XOR-ed with a key drawn once per
/// process whose top bits are set, so the stored word is never a valid pointer.
///
/// The retainer analysis scans the process's memory for words equal to an object's address;
/// what the tracker keeps about its objects (the identity of a principal object, the address of
/// each watched object) must not read as a holder of them. So it keeps this instead of an
/// `ObjectIdentifier`, which is the raw address.
public struct ObfuscatedAddress: Hashable, Sendable, BitwiseCopyable {
    /// The key: random, with the top byte set (user-space addresses have it clear).
    private static let key: UInt = UInt(truncatingIfNeeded: UInt64.random(in: 0...UInt64.max)) | (0xA5 << 56)

    /// The address XOR the key.
    private let bits: UInt

    /// The address of `object`.
    public init(_ object: AnyObject) {
        self.init(address: UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()))
    }

    /// The address `address`.
    package init(address: UInt) {
        bits = address ^ Self.key
    }

    /// No address (a record made without an object, in tests).
    package static let unknown = ObfuscatedAddress(address: 0)

    /// The address itself: only to be computed where it is used, never stored.
    package var address: UInt { bits ^ Self.key }
}
