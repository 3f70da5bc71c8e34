import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy of the memory that may hold references: the malloc heaps, the data of the loaded
/// images (globals), and the threads' stacks, taken with safe reads into memory mapped for it.
///
/// It is taken before the analysis builds anything, so that what the analysis allocates never
/// reads as a holder; the maps are read before its own buffer exists, so the buffer is not in it.
/// The copy is not atomic (other threads run on): everything read from it is checked.
final class MemorySnapshot {
    /// What a region of the copy is.
    enum Kind: Equatable {
        /// The main arena (`[heap]`).
        case mainHeap
        /// A heap of a thread arena (64 MiB-aligned, starting with a `heap_info`); `first`
        /// when it holds its arena's `malloc_state`.
        case arenaHeap(first: Bool)
        /// Chunks that malloc mapped on their own (large blocks).
        case mappedChunks
        /// The writable data of an image (its `.data` and `.bss`): globals.
        case imageData(path: String)
        /// A thread's stack, from its stack pointer (or its lowest page in use) up.
        case stack(thread: Int?, name: String?)
    }

    /// One copied range.
    struct Region {
        /// The first address copied.
        var start: UInt
        /// The address past the last byte copied.
        var end: UInt
        var kind: Kind
        /// Where the copy of `start` is.
        var copy: UnsafeRawPointer
    }

    /// Why there is no snapshot.
    enum Failure: Error {
        /// The maps could not be read.
        case noMaps
        /// Safe reads are refused (`EPERM`, `ENOSYS`): the error number.
        case readsRefused(Int32)
        /// More writable memory than the bound.
        case tooLarge(bytes: Int, limit: Int)
        /// No memory for the copy.
        case noMemory(bytes: Int)
        /// The deadline came before the copy was done.
        case outOfTime(bytes: Int)
    }

    /// The regions, by address.
    private(set) var regions: [Region]
    /// The bytes copied.
    let bytesCopied: Int
    /// The map the regions were chosen from.
    let map: MemoryMap
    /// The threads, as they were listed.
    let threads: [ThreadState]

    /// The mappings that hold the threads' stacks, by address.
    private let stackMappings: [(start: UInt, end: UInt)]
    /// Whether the regions hold a capture's copies (``captureStacks(milliseconds:)``).
    private var holdsCapture = false

    private let buffer: UnsafeMutableRawPointer?
    private let bufferLength: Int

    /// Copies the memory that may hold references, except the calling thread's stack, up to
    /// `limit` bytes, by `deadline` on `clock`.
    init(limit: Int, deadline: UInt64 = .max, clock: () -> UInt64 = { 0 }) throws(Failure) {
        guard let map = MemoryMap.read() else { throw .noMaps }
        let threads = ThreadList.read()
        let plan = Self.plan(map: map, threads: threads)
        let total = plan.reduce(0) { $0 + Int($1.end - $1.start) }
        guard total <= limit else { throw .tooLarge(bytes: total, limit: limit) }
        self.map = map
        self.threads = threads
        stackMappings = plan.compactMap(\.mapping)
        guard total > 0 else {
            (buffer, bufferLength, regions, bytesCopied) = (nil, 0, [], 0)
            return
        }
        let mapped = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else { throw .noMemory(bytes: total) }
        var regions: [Region] = []
        var offset = 0
        var copied = 0
        let copyStart = clock()
        for planned in plan {
            let length = Int(planned.end - planned.start)
            let destination = mapped + offset
            offset += length
            // In slices, so that the deadline is seen within a large heap too.
            var done = 0
            var failed = false
            while done < length {
                // Past the deadline, or sure to be (at the pace so far) before the copy is done.
                let now = clock()
                let sofar = copied + done
                let projected =
                    sofar >= 2 * Self.copySlice
                    ? now &+ UInt64(min(Double(now &- copyStart) / Double(sofar) * Double(total - sofar), 1e18)) : now
                if now >= deadline || projected >= deadline {
                    munmap(mapped, total)
                    throw .outOfTime(bytes: total)
                }
                let slice = min(Self.copySlice, length - done)
                // Fault the slice's pages in with one call (faster than page by page during the
                // read); a kernel without MADV_POPULATE_WRITE (5.14) just refuses it.
                _ = madvise(destination + done, slice, Self.populateWrite)
                switch ProcessMemory.copy(from: planned.start + UInt(done), length: slice, into: destination + done) {
                case .failure(let error) where error.code == EPERM || error.code == ENOSYS || error.code == EACCES:
                    munmap(mapped, total)
                    throw .readsRefused(error.code)
                case .failure:
                    failed = true  // unmapped since the maps were read
                case .success(let count):
                    done += count
                    failed = count < slice
                }
                if failed { break }
            }
            guard done >= 16 else { continue }
            copied += done
            // A range cut short by an unmap keeps what was copied, in whole words.
            regions.append(
                Region(
                    start: planned.start, end: planned.start + UInt(done & ~7), kind: planned.kind,
                    copy: UnsafeRawPointer(destination)))
        }
        (buffer, bufferLength, self.regions, bytesCopied) = (mapped, total, regions, copied)
    }

    /// The memory that may hold references, read where it is rather than copied: for a forked
    /// child (``FrozenChild``), whose memory no other thread changes. The regions are chosen now;
    /// the child checks that they are still mapped (``dropUnmapped()``) before it reads them.
    init(inPlace: Void) throws(Failure) {
        guard let map = MemoryMap.read() else { throw .noMaps }
        let threads = ThreadList.read()
        self.map = map
        self.threads = threads
        let plan = Self.plan(map: map, threads: threads)
        stackMappings = plan.compactMap(\.mapping)
        regions = plan.compactMap { planned in
            guard let start = UnsafeRawPointer(bitPattern: planned.start) else { return nil }
            return Region(start: planned.start, end: planned.end & ~7, kind: planned.kind, copy: start)
        }
        bytesCopied = 0
        (buffer, bufferLength) = (nil, 0)
    }

    /// Leaves out the regions that are no longer wholly mapped (unmapped between the choice and
    /// the fork): true when none was.
    func dropUnmapped() -> Bool {
        let before = regions.count
        regions.removeAll { !ProcessMemory.isMapped(UInt(bitPattern: $0.copy), length: Int($0.end - $0.start)) }
        return regions.count == before
    }

    /// Replaces the stacks of the other threads with copies of their used parts taken at one
    /// instant, from where each thread was interrupted (``ProcessMemory/captureStacks(of:stackRanges:milliseconds:)``),
    /// so that no frame that has returned reads as a holder. A thread that runs has no stack
    /// pointer in `/proc` (its stack is otherwise read from its lowest page in use, old frames
    /// included), and one that waits may wake before the memory is read. Threads blocked in a
    /// call that an interruption would end (a sleep, a poll) or cut short (a blocked write) keep the
    /// stack pointer of their call.
    /// Returns how many stacks were copied.
    @discardableResult
    func captureStacks(milliseconds: Int) -> Int {
        guard !holdsCapture, !stackMappings.isEmpty else { return 0 }
        let own = ProcessMemory.currentThreadID
        let chosen = threads.filter { thread in
            thread.id != own && !(thread.call.map { ProcessMemory.interruptShows(inCall: $0) } ?? false)
        }
        guard !chosen.isEmpty,
            let captured = ProcessMemory.captureStacks(
                of: chosen.map(\.id), stackRanges: stackMappings, milliseconds: milliseconds)
        else { return 0 }
        holdsCapture = true
        var count = 0
        for (thread, copy) in zip(chosen, captured) {
            guard let copy, let mapping = stackMappings.first(where: { $0.start <= copy.stackPointer && copy.stackPointer < $0.end }),
                let index = regions.firstIndex(where: { region in
                    guard case .stack = region.kind else { return false }
                    return mapping.start <= region.start && region.start < mapping.end
                })
            else { continue }
            regions[index] = Region(
                start: copy.start, end: copy.end, kind: .stack(thread: thread.id, name: thread.name), copy: copy.copy)
            count += 1
        }
        // Every thread's stack is known now (copied, or from the stack pointer of its call): a
        // stack that is no thread's is one that glibc keeps for a thread to come (its cache of
        // the stacks of threads that ended), whose frames are all dead. Unless a thread could
        // not be placed, or one has started since the list was read.
        let placed = Set(zip(chosen, captured).compactMap { $1 == nil ? nil : $0.id })
        let allPlaced = threads.allSatisfy { $0.id == own || $0.stackPointer != nil || placed.contains($0.id) }
        if allPlaced, Set(ThreadList.ids()) == Set(threads.map(\.id)) {
            regions.removeAll { region in
                if case .stack(thread: nil, _) = region.kind { return true }
                return false
            }
        }
        return count
    }

    deinit {
        if let buffer { munmap(buffer, bufferLength) }
        if holdsCapture { ProcessMemory.captureDone() }
    }

    /// The index of the region that contains `address`.
    func region(containing address: UInt) -> Int? {
        var low = 0
        var high = regions.count
        while low < high {
            let middle = (low + high) / 2
            if regions[middle].end <= address {
                low = middle + 1
            } else if regions[middle].start > address {
                high = middle
            } else {
                return middle
            }
        }
        return nil
    }

    /// The copied word at `address`, when the copy has it.
    func word(at address: UInt) -> UInt? {
        guard address & 7 == 0, let index = region(containing: address), address + 8 <= regions[index].end else { return nil }
        return regions[index].copy.load(fromByteOffset: Int(address - regions[index].start), as: UInt.self)
    }

    // MARK: Choosing the regions

    private struct Planned {
        var start: UInt
        var end: UInt
        var kind: Kind
        /// For a stack, its whole mapping.
        var mapping: (start: UInt, end: UInt)? = nil
    }

    /// `MADV_POPULATE_WRITE` (Linux 5.14).
    private static let populateWrite: Int32 = 23

    /// How much one read copies at most (the deadline is looked at between reads).
    static let copySlice = 8 << 20

    /// The size of glibc's `heap_info` (5 words, padded to keep chunks 16-byte aligned).
    static let heapInfoSize: UInt = 48
    /// The size of glibc 2.36's `struct malloc_state`, which follows the first heap's `heap_info`.
    static let mallocStateSize: UInt = 2_200
    /// The alignment (and maximum size) of a thread arena's heap.
    static let arenaHeapAlignment: UInt = 64 << 20

    /// Whether the globals of the image at `path` can hold no Swift object: ICU (Foundation's
    /// copy and the system's), the C++ runtime, the math library and the unwinder are C and C++
    /// that never take a Swift reference; the Swift runtime's own data (`libswiftCore`) keeps its
    /// metadata caches and allocator pools, never an object of the program. Their globals are no
    /// roots: what their memory seems to point at is a stale word (ICU's caches keep blocks whose
    /// bytes a freed Swift object left; an allocator pool keeps what its memory held before),
    /// which a conservative scan would take for a holder. Graphviz (its libraries, its plugins and
    /// what they draw with) is C that a renderer in the process loads: its layout caches keep
    /// blocks that freed Swift objects' bytes are left in, and it never holds a Swift reference;
    /// nor does GLib, which Pango and Cairo draw with (a clean-clone run met a GLib global that
    /// pointed into a block reused since, whose stale bytes pointed at a test's node).
    /// libxml2 (FoundationXML's parser) keeps the last parser's context and error handler's
    /// data in its globals, unretained, after the parser is gone.
    static func holdsNoSwiftObject(image path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return cLibraryPrefixes.contains { name.hasPrefix($0) }
    }

    /// The file-name beginnings of the images whose globals `holdsNoSwiftObject` leaves out.
    static let cLibraryPrefixes = [
        "lib_FoundationICU.", "libicu", "libstdc++.", "libswiftCore.so", "libm.so", "libgcc_s.",
        "libgvc.", "libcgraph.", "libcdt.", "libpathplan.", "libxdot.", "libgvplugin_", "libltdl.",
        "libexpat.", "libz.", "libcairo.", "libpango", "libpixman-", "libfreetype.", "libfontconfig.",
        "libharfbuzz.", "libpng16.", "libgd.", "librsvg-", "libgts-", "liblasi.", "libann.", "libgdk_pixbuf",
        "libxml2.", "libglib-", "libgobject-", "libgio-", "libgmodule-", "libgthread-",
    ]

    /// The writable private memory worth copying, by address.
    private static func plan(map: MemoryMap, threads: [ThreadState]) -> [Planned] {
        var marker = 0
        let ownStack = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        var plan: [Planned] = []
        let mappings = ProcessMemory.captureBuffer.map { excluding($0, from: map.mappings) } ?? map.mappings
        for (index, listed) in mappings.enumerated() {
            var mapping = listed
            guard mapping.readable, mapping.writable, !mapping.shared, mapping.length >= 16 else { continue }
            if mapping.start <= ownStack, ownStack < mapping.end { continue }
            let previous = index > 0 ? mappings[index - 1] : nil
            if mapping.path == "[heap]" {
                plan.append(Planned(start: mapping.start, end: mapping.end, kind: .mainHeap))
                continue
            }
            if !mapping.isAnonymous {
                if map.imagePaths.contains(mapping.path), !Self.holdsNoSwiftObject(image: mapping.path) {
                    plan.append(Planned(start: mapping.start, end: mapping.end, kind: .imageData(path: mapping.path)))
                }
                continue
            }
            if mapping.path.hasPrefix("["), mapping.path != "[stack]", !mapping.path.hasPrefix("[anon") { continue }
            // The .bss of an image follows its file-backed data, up to where the image's segments
            // end. An anonymous mapping made later can sit right after the data (or be merged by
            // the kernel onto the .bss): that part is looked at as any other (a loaded run once
            // read 10 MB past libpcre2's data as that library's globals).
            if let previous, previous.end == mapping.start, previous.writable, previous.inode != 0,
                map.imagePaths.contains(previous.path)
            {
                let end = GlobalNames.dataEnd(of: previous.path, mappings: mappings).map { min($0, mapping.end) } ?? mapping.end
                if end > mapping.start, !Self.holdsNoSwiftObject(image: previous.path) {
                    plan.append(Planned(start: mapping.start, end: end, kind: .imageData(path: previous.path)))
                }
                let rest = max(end, mapping.start)
                guard mapping.end - rest >= 16 else { continue }
                mapping.start = rest
            }
            let thread = threads.first { $0.stackPointer.map { mapping.start <= $0 && $0 < mapping.end } ?? false }
            if mapping.path == "[stack]" || thread != nil {
                plan.append(stack(mapping, thread: thread))
                continue
            }
            if let heap = arenaHeap(mapping) {
                plan.append(heap)
                continue
            }
            let chunks = mappedChunks(mapping)
            if !chunks.isEmpty {
                plan += chunks
                continue
            }
            // A thread's stack sits right above its guard page.
            if let previous, previous.end == mapping.start, previous.isGuard {
                plan.append(stack(mapping, thread: nil))
            }
        }
        return plan
    }

    /// The mappings less `range` (the capture's buffer, which the kernel may have merged with a
    /// neighbour of the same protection, a malloc heap among them).
    private static func excluding(_ range: (start: UInt, end: UInt), from mappings: [MemoryMapping]) -> [MemoryMapping] {
        mappings.flatMap { mapping -> [MemoryMapping] in
            guard mapping.start < range.end, range.start < mapping.end else { return [mapping] }
            var parts: [MemoryMapping] = []
            if mapping.start < range.start {
                var below = mapping
                below.end = range.start
                parts.append(below)
            }
            if range.end < mapping.end {
                var above = mapping
                above.start = range.end
                parts.append(above)
            }
            return parts
        }
    }

    /// The used part of a stack: from the thread's stack pointer, or from its lowest page in
    /// memory when the thread runs, up to the top (where the thread's own data lies).
    private static func stack(_ mapping: MemoryMapping, thread: ThreadState?) -> Planned {
        let kind = Kind.stack(thread: thread?.id, name: thread?.name)
        if let pointer = thread?.stackPointer {
            return Planned(start: max(mapping.start, pointer & ~7), end: mapping.end, kind: kind, mapping: (mapping.start, mapping.end))
        }
        return Planned(start: lowestResidentPage(mapping), end: mapping.end, kind: kind, mapping: (mapping.start, mapping.end))
    }

    private static func lowestResidentPage(_ mapping: MemoryMapping) -> UInt {
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let pages = Int(mapping.length / page)
        guard pages > 1, let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { return mapping.start }
        var resident = [UInt8](repeating: 0, count: pages)
        guard mincore(start, Int(mapping.length), &resident) == 0 else { return mapping.start }
        guard let first = resident.firstIndex(where: { $0 & 1 != 0 }) else { return mapping.end - page }
        return mapping.start + UInt(first) * page
    }

    /// The used part of a thread arena's heap, when `mapping` starts with a plausible `heap_info`.
    private static func arenaHeap(_ mapping: MemoryMapping) -> Planned? {
        guard mapping.start % arenaHeapAlignment == 0, mapping.length >= 4_096,
            let info = ProcessMemory.bytes(at: mapping.start, count: 40)
        else { return nil }
        let word = { (index: Int) in info.withUnsafeBytes { $0.load(fromByteOffset: index * 8, as: UInt.self) } }
        let (arena, previous, size, protected) = (word(0), word(1), word(2), word(3))
        guard size >= 4_096, size <= arenaHeapAlignment, size % 4_096 == 0, protected >= size else { return nil }
        // The heap may have grown since the maps were read (this thread allocates too).
        let end = mapping.start + min(size, mapping.length)
        if previous == 0, arena == mapping.start + heapInfoSize {
            return Planned(start: mapping.start, end: end, kind: .arenaHeap(first: true))
        }
        guard previous != 0, previous % arenaHeapAlignment == 0, arena >= heapInfoSize,
            (arena - heapInfoSize) % arenaHeapAlignment == 0
        else { return nil }
        return Planned(start: mapping.start, end: end, kind: .arenaHeap(first: false))
    }

    /// The chunks that malloc mapped on their own at the start of `mapping` (adjacent ones
    /// share a mapping): a header whose size has the `IS_MMAPPED` bit and spans whole pages.
    private static func mappedChunks(_ mapping: MemoryMapping) -> [Planned] {
        var chunks: [Planned] = []
        var start = mapping.start
        while start + 32 <= mapping.end, let header = ProcessMemory.bytes(at: start, count: 16) {
            let (previousSize, sizeWord) = header.withUnsafeBytes { ($0.load(as: UInt.self), $0.load(fromByteOffset: 8, as: UInt.self)) }
            let size = sizeWord & ~7
            guard sizeWord & 2 != 0, sizeWord & 4 == 0, previousSize < 4_096, size >= 4_096, size % 4_096 == 0,
                size <= mapping.end - start
            else { break }
            if let last = chunks.last, last.end == start {
                chunks[chunks.count - 1].end = start + size
            } else {
                chunks.append(Planned(start: start, end: start + size, kind: .mappedChunks))
            }
            start += size
        }
        return chunks
    }
}
