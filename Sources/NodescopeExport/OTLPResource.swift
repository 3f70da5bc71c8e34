#if Export
import Glibc
import NodescopeCollector
import NodescopeOTLPProto

/// What the OTLP resources say: each host process is a resource of its own (its name is the
/// service's name unless `OTEL_SERVICE_NAME` says otherwise), and `nodescope` itself is one (a
/// `check` run's root span, the daemon's own counts). Every resource carries the attributes of
/// `OTEL_RESOURCE_ATTRIBUTES` and the caller's own (a `check`'s command, the CI's repository,
/// branch and commit), later ones winning.
package struct OTLPResource: Sendable {
    /// `OTEL_SERVICE_NAME`; the process's name when nil.
    package var serviceName: String?
    /// Attributes for every resource, later ones winning.
    package var attributes: [OTLPConfiguration.Header]

    /// Creates the shared part of the resources.
    package init(serviceName: String?, attributes: [OTLPConfiguration.Header]) {
        self.serviceName = serviceName
        self.attributes = attributes
    }

    /// The resource of one host process.
    package func process(name: String, pid: UInt32, session: SessionID) -> Opentelemetry_Proto_Resource_V1_Resource {
        resource([
            ("service.name", .text(name)),
            ("process.executable.name", .text(name)),
            ("process.pid", .integer(Int64(pid))),
            ("host.name", .text(Self.hostName)),
            ("nodescope.session", .text(session.description)),
        ])
    }

    /// The resource of nodescope itself (`check`, the daemon).
    package func nodescope(pid: Int32 = getpid()) -> Opentelemetry_Proto_Resource_V1_Resource {
        resource([
            ("service.name", .text("nodescope")),
            ("process.executable.name", .text("nodescope")),
            ("process.pid", .integer(Int64(pid))),
            ("host.name", .text(Self.hostName)),
        ])
    }

    private func resource(_ own: [(String, Opentelemetry_Proto_Common_V1_AnyValue)]) -> Opentelemetry_Proto_Resource_V1_Resource {
        var pairs = own
        func set(_ key: String, _ value: Opentelemetry_Proto_Common_V1_AnyValue) {
            pairs.removeAll { $0.0 == key }
            pairs.append((key, value))
        }
        for attribute in attributes { set(attribute.name, .text(attribute.value)) }
        // OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES, as the spec says.
        if let serviceName { set("service.name", .text(serviceName)) }
        var resource = Opentelemetry_Proto_Resource_V1_Resource()
        resource.attributes = pairs.map { .pair($0.0, $0.1) }
        return resource
    }

    /// This machine's name (`gethostname`).
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}

extension Opentelemetry_Proto_Common_V1_AnyValue {
    static func text(_ value: String) -> Self {
        var any = Self()
        any.stringValue = value
        return any
    }

    static func integer(_ value: Int64) -> Self {
        var any = Self()
        any.intValue = value
        return any
    }

    static func bool(_ value: Bool) -> Self {
        var any = Self()
        any.boolValue = value
        return any
    }

    static func texts(_ values: [String]) -> Self {
        var any = Self()
        any.arrayValue.values = values.map(text)
        return any
    }
}

extension Opentelemetry_Proto_Common_V1_KeyValue {
    static func pair(_ key: String, _ value: Opentelemetry_Proto_Common_V1_AnyValue) -> Self {
        var pair = Self()
        pair.key = key
        pair.value = value
        return pair
    }
}
#endif
