import Glibc

/// Hands memory that the collector let go of back to the system.
///
/// A host's strings are many small blocks; freed in the middle of the heap, glibc keeps them
/// for reuse, so the daemon's resident size would stay at its peak after a session that
/// interned hundreds of megabytes ended. glibc's `malloc_trim` returns the free pages. It walks
/// the heap, so it runs only after at least ``threshold`` bytes of strings were freed at once.
enum AllocatorTrim {
    /// Freed string bytes that make a trim worth its cost.
    static let threshold = 16 << 20

    /// `malloc_trim`, looked up at run time (`malloc.h` is not part of the Glibc module); nil
    /// with a C library that has none.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        // RTLD_DEFAULT is the null handle on glibc.
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Trims when `freedBytes` reaches ``threshold``.
    static func afterFreeing(_ freedBytes: Int) {
        guard freedBytes >= threshold, let trim else { return }
        _ = trim(0)
    }
}
