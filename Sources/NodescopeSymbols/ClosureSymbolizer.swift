import Foundation
import NodescopeWire
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names stored closures from where their code is (``ClosureSite``): the function symbol that holds
/// the address in the file's `.symtab` (a partial apply forwarder's own closure, when the pointer is
/// to the forwarder), demangled and simplified, and its source place from the debug information
/// through `llvm-symbolizer`.
///
/// Bounded and safe with any input: the file is mapped and read with bounds checks; each helper
/// run is killed when it outlasts `timeoutSeconds`. A site whose file cannot be read, is not 64-bit
/// ELF, has no symbol table, or whose offset is in no loadable segment gets no entry. Without a
/// symbolizer (or when it fails) the names come without file and line. Results are cached per site
/// and file version.
package final class ClosureSymbolizer: Sendable {
    /// The llvm-symbolizer run, or nil for names from the symbol table alone.
    package let symbolizerPath: String?
    /// The `swift-demangle` run, or nil to use the runtime's own demangler (unsimplified names).
    /// When it fails or outlasts the timeout, the names stay mangled for that call.
    package let demanglerPath: String?
    /// How long the helper runs of one call may take, in seconds.
    package let timeoutSeconds: Double

    private struct CacheKey: Hashable {
        var site: ClosureSite
        var file: FileVersion
    }

    /// A file's identity and version: a rebuilt binary at the same path is another file.
    private struct FileVersion: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
    }

    /// What is known of one site before the helpers run.
    private struct Candidate {
        var site: ClosureSite
        var key: CacheKey
        var mangled: String
        var address: UInt64
    }

    /// The most sites remembered; the cache starts again beyond it.
    static let maxCachedSites = 10_000

    private let cache = Mutex<[CacheKey: ClosureName?]>([:])

    /// Creates a symbolizer; see ``defaultSymbolizer(environment:)`` and
    /// ``defaultDemangler(environment:)`` for where the helpers are found.
    package init(
        symbolizerPath: String? = ClosureSymbolizer.defaultSymbolizer(),
        demanglerPath: String? = ClosureSymbolizer.defaultDemangler(),
        timeoutSeconds: Double = 10
    ) {
        self.symbolizerPath = symbolizerPath
        self.demanglerPath = demanglerPath
        self.timeoutSeconds = timeoutSeconds.isFinite ? max(0, timeoutSeconds) : 10
    }

    /// The names of `sites` that could be found; a site without one is not in the answer.
    /// Runs at most one symbolizer per file and one demangler for the whole call.
    package func names(of sites: [ClosureSite]) -> [ClosureSite: ClosureName] {
        var answer: [ClosureSite: ClosureName] = [:]
        var misses: [String: [(ClosureSite, CacheKey)]] = [:]
        var seen = Set<ClosureSite>()
        for site in sites where seen.insert(site).inserted {
            guard let version = ClosureSymbolizer.version(ofFile: site.image) else { continue }
            let key = CacheKey(site: site, file: version)
            if let cached = cache.withLock({ $0[key] }) {
                if let name = cached { answer[site] = name }
            } else {
                misses[site.image, default: []].append((site, key))
            }
        }
        guard !misses.isEmpty else { return answer }

        let deadline = ToolRun.now() + timeoutSeconds
        var resolved: [CacheKey: ClosureName?] = [:]
        var candidates: [String: [Candidate]] = [:]
        for (image, entries) in misses {
            let found = ClosureSymbolizer.candidates(in: image, entries)
            for (site, key) in entries where !found.contains(where: { $0.site == site }) { resolved[key] = .some(nil) }
            if !found.isEmpty { candidates[image] = found }
        }

        let mangled = Array(Set(candidates.values.joined().map(\.mangled))).sorted()
        let (symbols, demangled) = demangle(mangled, deadline: deadline)
        var located = true
        for (image, found) in candidates {
            let addresses = Array(Set(found.map(\.address))).sorted()
            let (places, complete) = symbolize(addresses, in: image, deadline: deadline)
            located = located && complete
            for candidate in found {
                let place = places[candidate.address] ?? nil
                let name = ClosureName(
                    symbol: symbols[candidate.mangled] ?? candidate.mangled, file: place?.file, line: place?.line,
                    column: place?.column, isThunk: ThunkName.isThunk(candidate.mangled))
                answer[candidate.site] = name
                resolved[candidate.key] = .some(name)
            }
        }
        // A helper that failed may work next time: remember only what was complete.
        if demangled && located {
            cache.withLock { cache in
                if cache.count + resolved.count > ClosureSymbolizer.maxCachedSites { cache.removeAll() }
                cache.merge(resolved) { _, new in new }
            }
        } else {
            let negatives = resolved.filter { $0.value == nil }
            cache.withLock { cache in
                if cache.count + negatives.count > ClosureSymbolizer.maxCachedSites { cache.removeAll() }
                cache.merge(negatives) { _, new in new }
            }
        }
        return answer
    }

    /// ``names(of:)`` off the caller's thread (the helpers block while they run).
    package func names(of sites: [ClosureSite]) async -> [ClosureSite: ClosureName] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.names(of: sites)) }
        }
    }

    /// The virtual address of `fileOffset` in the ELF file at `path`, through its loadable segments;
    /// nil when the file is not a readable 64-bit ELF file with a symbol table, or no segment holds it.
    package static func virtualAddress(ofFileOffset fileOffset: UInt64, inFile path: String) -> UInt64? {
        guard let file = MappedFile(path: path), let image = ELFImage(file: file) else { return nil }
        return image.virtualAddress(ofFileOffset: fileOffset)
    }

    /// The file offset of virtual address `address` in the ELF file at `path` (the inverse of
    /// ``virtualAddress(ofFileOffset:inFile:)``), for tests and tools that start from a symbol.
    package static func fileOffset(ofVirtualAddress address: UInt64, inFile path: String) -> UInt64? {
        guard let file = MappedFile(path: path), let image = ELFImage(file: file) else { return nil }
        for segment in image.segments where address >= segment.virtualAddress && address - segment.virtualAddress < segment.fileSize {
            let (offset, overflow) = segment.fileOffset.addingReportingOverflow(address - segment.virtualAddress)
            return overflow ? nil : offset
        }
        return nil
    }

    /// The address of the function symbol named `mangledName` in the ELF file at `path`.
    package static func address(ofFunctionNamed mangledName: String, inFile path: String) -> UInt64? {
        guard let file = MappedFile(path: path), let image = ELFImage(file: file) else { return nil }
        return image.addresses(ofFunctionsNamed: [mangledName])[mangledName]?.address
    }

    // MARK: - Steps

    /// The function to name for each site of one file: the symbol that holds the address, or the
    /// closure a partial apply forwarder calls.
    private static func candidates(in image: String, _ entries: [(ClosureSite, CacheKey)]) -> [Candidate] {
        guard image.hasPrefix("/"), !image.utf8.contains(0), let file = MappedFile(path: image),
            let elf = ELFImage(file: file)
        else { return [] }
        var direct: [(ClosureSite, CacheKey, String, UInt64)] = []
        var wanted = Set<String>()
        for (site, key) in entries {
            guard let address = elf.virtualAddress(ofFileOffset: site.fileOffset),
                let function = elf.function(containing: address), let name = elf.name(of: function)
            else { continue }
            direct.append((site, key, name, function.address))
            if let target = ThunkName.forwardedFunction(of: name) { wanted.insert(target) }
            if let target = ThunkName.unmerged(name) { wanted.insert(target) }
        }
        let targets = elf.addresses(ofFunctionsNamed: wanted)
        return direct.map { site, key, name, address in
            for target in [ThunkName.forwardedFunction(of: name), ThunkName.unmerged(name)] {
                if let target, let function = targets[target] {
                    return Candidate(site: site, key: key, mangled: target, address: function.address)
                }
            }
            return Candidate(site: site, key: key, mangled: ThunkName.unsuffixed(name), address: address)
        }
    }

    /// The simplified demangled form of each name, and whether the demangler ran whole.
    private func demangle(_ names: [String], deadline: Double) -> ([String: String], Bool) {
        guard !names.isEmpty else { return ([:], true) }
        if let demanglerPath {
            let run = ToolRun(
                executable: demanglerPath, arguments: ["--simplified"], timeoutSeconds: max(0.001, deadline - ToolRun.now()))
            let outcome = run.run(input: Array(names.joined(separator: "\n").utf8) + [0x0A])
            let lines = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            guard outcome.succeeded, lines.count >= names.count else {
                // Not the runtime's demangler in this process then: the name that stopped the
                // helper might stop it too. The mangled names, this time.
                return ([:], false)
            }
            var result: [String: String] = [:]
            for (name, line) in zip(names, lines) where !line.isEmpty { result[name] = String(line) }
            return (result, true)
        }
        var result: [String: String] = [:]
        for name in names { result[name] = RuntimeDemangler.demangle(name) ?? name }
        return (result, true)
    }

    /// The source place of each address in `image`, and whether the symbolizer ran whole.
    private func symbolize(_ addresses: [UInt64], in image: String, deadline: Double) -> (
        [UInt64: SymbolizerOutput.Place?], Bool
    ) {
        guard let symbolizerPath, !addresses.isEmpty else { return ([:], true) }
        let remaining = deadline - ToolRun.now()
        guard remaining > 0 else { return ([:], false) }
        let run = ToolRun(
            executable: symbolizerPath, arguments: ["--obj=\(image)", "--output-style=LLVM", "--functions=linkage"],
            timeoutSeconds: remaining)
        let input = addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
        let outcome = run.run(input: Array(input.utf8))
        guard outcome.succeeded else { return ([:], false) }
        let places = SymbolizerOutput.places(in: String(decoding: outcome.output, as: UTF8.self), count: addresses.count)
        return (Dictionary(uniqueKeysWithValues: zip(addresses, places)), true)
    }

    private static func version(ofFile path: String) -> FileVersion? {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileVersion(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec))
    }
}
