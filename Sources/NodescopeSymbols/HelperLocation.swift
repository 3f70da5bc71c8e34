import Foundation

extension ClosureSymbolizer {
    /// Where llvm-symbolizer is: `$NODESCOPE_SYMBOLIZER` when set (a bare name is looked up on
    /// `PATH`), else beside the `swift` found on `PATH` (symbolic links resolved, as the toolchain
    /// installs it), else on `PATH`; nil when there is none (names then come from the symbol table
    /// alone, without file and line).
    package static func defaultSymbolizer(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let path = environment["NODESCOPE_SYMBOLIZER"], !path.isEmpty {
            return path.contains("/") ? path : onPath(path, environment: environment) ?? path
        }
        return besideSwift("llvm-symbolizer", environment: environment) ?? onPath("llvm-symbolizer", environment: environment)
    }

    /// Where `swift-demangle` is: beside the `swift` found on `PATH`, else on `PATH`; nil when there
    /// is none (the runtime's demangler is used then, whose names are not simplified).
    package static func defaultDemangler(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        besideSwift("swift-demangle", environment: environment) ?? onPath("swift-demangle", environment: environment)
    }

    private static func besideSwift(_ tool: String, environment: [String: String]) -> String? {
        guard let swift = onPath("swift", environment: environment) else { return nil }
        let directory = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = directory.appendingPathComponent(tool).path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    private static func onPath(_ tool: String, environment: [String: String]) -> String? {
        for directory in (environment["PATH"] ?? "").split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
