/// 64 bytes of nothing, to keep the stored properties on either side of it off one cache line.
///
/// A line that one core writes is taken from every other core that reads it, so a field that
/// the app's thread reads on every change must not share a line with one that the agent's
/// writer writes (an object's reference count, a lock, a consumer's position). Swift lays out a
/// final class's stored properties in declaration order; objects are 16-byte aligned, so 64
/// bytes between two groups of fields keep them apart wherever the object starts.
struct CacheLinePadding {
    private let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
