import ArgumentParser
import Foundation
import NodescopeExport

/// `--otlp-endpoint`, shared by `check` and `daemon`, and the OTEL_* variables it stands beside.
struct OTLPOptions: ParsableArguments {
    @Option(
        name: .customLong("otlp-endpoint"),
        help: ArgumentHelp(
            "Also send leak verdicts (logs), node lives (traces: check's run, the daemon's processes) and counts (metrics) to this OTLP/HTTP endpoint (URL/v1/logs, /v1/traces, /v1/metrics), as OTEL_EXPORTER_OTLP_ENDPOINT does. See docs/FLEET.md.",
            valueName: "url"))
    var otlpEndpoint: String?

    init() {}

    /// A bad `--otlp-endpoint` (or a variable that would go with it) is a usage error: the user
    /// asked for the export in this command. A build without the Export trait has none.
    func validate() throws {
        guard let otlpEndpoint else { return }
        #if Export
        do {
            _ = try OTLPConfiguration.resolve(
                endpoint: otlpEndpoint, environment: ProcessInfo.processInfo.environment, defaultTimeoutMilliseconds: 1)
        } catch {
            throw ValidationError(error.description)
        }
        #else
        _ = otlpEndpoint
        throw ValidationError("--otlp-endpoint: this nodescope was built without the Export trait, so it exports nothing")
        #endif
    }

    /// The settings in force, and what to tell the user about them: variables that cannot be
    /// used (set in the environment, perhaps for other programs) turn the export off with a
    /// note rather than stop the command; a build without the Export trait ignores them.
    func resolve(defaultTimeoutMilliseconds: Int) -> (configuration: OTLPConfiguration?, note: String?) {
        let configuration: OTLPConfiguration?
        do {
            configuration = try OTLPConfiguration.resolve(
                endpoint: otlpEndpoint, environment: ProcessInfo.processInfo.environment,
                defaultTimeoutMilliseconds: defaultTimeoutMilliseconds)
        } catch {
            return (nil, "OTLP export off: \(error.description)")
        }
        #if Export
        return (configuration, nil)
        #else
        return (
            nil, configuration == nil ? nil : "this nodescope was built without the Export trait; OTEL_EXPORTER_OTLP_ENDPOINT is ignored"
        )
        #endif
    }
}
