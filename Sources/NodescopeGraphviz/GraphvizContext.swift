import CGraphviz
import Glibc
import Synchronization

/// The process's one Graphviz context, and the only code that calls into libgvc.
///
/// libgraphviz 2.42 keeps global state in its layout engines and is not thread-safe, even with
/// one context per thread. So there is one context for the process, created on first use, and
/// every call into the library happens inside ``shared``'s lock: renders asked for by many threads
/// run one at a time.
struct GraphvizContext {
    /// The context, created by the first render; `nil` until then, or while Graphviz cannot load.
    private static let shared = Mutex<GraphvizContext?>(nil)

    /// What Graphviz reported during the current call, through its error callback. Only written
    /// while ``shared`` is held; it has its own lock because a C callback cannot capture state.
    private static let messages = Mutex<String>("")
    private static let maxMessageLength = 2_000

    /// `GVC_t *`, never freed: it lives as long as the process.
    private let gvc: OpaquePointer

    private init() throws(RenderError) {
        // Route Graphviz's diagnostics into `messages` instead of the host's stderr.
        _ = agseterrf { text in
            guard let text else { return 0 }
            let piece = String(cString: text)
            GraphvizContext.messages.withLock { collected in
                if collected.utf8.count < GraphvizContext.maxMessageLength { collected += piece }
            }
            return 0
        }
        guard let gvc = Self.contextWithBuiltInTextMetrics() ?? gvContext() else {
            throw RenderError(
                .graphvizUnavailable,
                "could not create a Graphviz context; install Graphviz's libraries (apt-get install libgraphviz-dev) and try again")
        }
        self.gvc = gvc
    }

    /// Lays out `dot` with `engine` ("dot" or "nop2") and returns the SVG text.
    static func renderSVG(dot: String, engine: String) throws(RenderError) -> String {
        try shared.withLock { (context: inout GraphvizContext?) throws(RenderError) -> String in
            if context == nil {
                context = try GraphvizContext()
            }
            return try context!.renderSVG(dot: dot, engine: engine)
        }
    }

    private func renderSVG(dot: String, engine: String) throws(RenderError) -> String {
        Self.messages.withLock { $0 = "" }
        guard let graph = dot.withCString({ agmemread($0) }) else {
            throw RenderError(
                .layoutFailed,
                "Graphviz could not read the generated DOT text; this is a bug in Nodescope, please report it with the --format dot output",
                underlying: Self.report())
        }
        defer { agclose(graph) }
        // Safe on a graph that was never laid out; frees whatever a failed layout left behind.
        defer { gvFreeLayout(gvc, graph) }

        guard gvLayout(gvc, graph, engine) == 0 else {
            let report = Self.report()
            if report.contains("not recognized") {
                throw RenderError(
                    .graphvizUnavailable,
                    "Graphviz has no \"\(engine)\" layout engine; install Graphviz's plugins (apt-get install libgraphviz-dev, or graphviz) and check `dot -c`",
                    underlying: report)
            }
            throw RenderError(
                .layoutFailed, "Graphviz could not lay out the diagram; try --layout tidy, or a smaller diagram with --root or --depth",
                underlying: report)
        }

        var data: UnsafeMutablePointer<CChar>?
        var length: UInt32 = 0
        let status = gvRenderData(gvc, graph, "svg:svg:core", &data, &length)
        defer { if let data { gvFreeRenderData(data) } }
        guard status == 0, let data else {
            let report = Self.report()
            if report.contains("not recognized") {
                throw RenderError(
                    .graphvizUnavailable,
                    "Graphviz has no SVG renderer; install Graphviz's core plugins (apt-get install libgraphviz-dev) and check `dot -c`",
                    underlying: report)
            }
            throw RenderError(
                .renderFailed, "Graphviz laid the diagram out but could not write SVG; try --format dot and run Graphviz yourself",
                underlying: report)
        }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// What Graphviz said during this call, on one line.
    private static func report() -> String {
        messages.withLock { text in
            text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: " ") }.joined(separator: "; ")
        }
    }
}

extension GraphvizContext {
    /// The plugins Nodescope needs, as (file, library symbol): SVG output, and the `dot` and
    /// `nop2` layouts.
    private static let plugins = [
        ("libgvplugin_core", "gvplugin_core_LTX_library"),
        ("libgvplugin_dot_layout", "gvplugin_dot_layout_LTX_library"),
        ("libgvplugin_neato_layout", "gvplugin_neato_layout_LTX_library"),
    ]

    /// A context with only ``plugins`` loaded, or `nil` when one of them cannot be found (then
    /// the caller falls back to `gvContext()`, which loads every installed plugin).
    ///
    /// Leaving out the Pango text-layout plugin makes Graphviz size text from its built-in
    /// Helvetica/Arial metrics instead of asking fontconfig and Pango for every line. That makes
    /// the layout step about three times faster on big diagrams, and the SVG no longer depends on
    /// which fonts the machine has: the same tree gives the same drawing everywhere. (Boxes are
    /// drawn at least as big as ``NodeLabel``'s estimate, which leaves room for wider fonts.)
    private static func contextWithBuiltInTextMetrics() -> OpaquePointer? {
        guard let directory = pluginDirectory() else { return nil }
        var libraries: [UnsafeMutableRawPointer] = []
        for (file, symbol) in plugins {
            let handle =
                dlopen("\(directory)/\(file).so.6", RTLD_NOW | RTLD_LOCAL)
                ?? dlopen("\(directory)/\(file).so", RTLD_NOW | RTLD_LOCAL)
            guard let handle, let library = dlsym(handle, symbol) else { return nil }
            // The plugin stays loaded for the life of the process, like the context.
            libraries.append(library)
        }
        // Graphviz keeps this pointer in the context, so it is never freed.
        let noBuiltins = UnsafeMutablePointer<lt_symlist_t>.allocate(capacity: 1)
        noBuiltins.initialize(to: lt_symlist_t(name: nil, address: nil))
        guard let gvc = gvContextPlugins(noBuiltins, 0) else { return nil }
        for library in libraries {
            gvAddLibrary(gvc, library.assumingMemoryBound(to: gvplugin_library_t.self))
        }
        return gvc
    }

    /// Where Graphviz's plugins are: `$GVBINDIR` if set (Graphviz's own override), else the
    /// `graphviz` folder next to the libgvc that this process mapped (read from /proc/self/maps).
    private static func pluginDirectory() -> String? {
        if let override = getenv("GVBINDIR"), override.pointee != 0 {
            return String(cString: override)
        }
        guard let maps = fopen("/proc/self/maps", "r") else { return nil }
        defer { fclose(maps) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, maps) > 0, let line {
            let text = String(cString: line)
            guard let start = text.firstIndex(of: "/"), text.contains("/libgvc.so") else { continue }
            let path = text[start...].trimmingCharacters(in: "\n")
            guard let slash = path.lastIndex(of: "/") else { return nil }
            return "\(path[..<slash])/graphviz"
        }
        return nil
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in characters: String) -> SubSequence {
        var text = self[...]
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return text
    }
}
