#if Export
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NodescopeOTLPProto
import SwiftProtobuf
import Synchronization

/// One of OTLP's three export requests (logs, traces, metrics): what it carries, counted the way
/// the endpoint's partial success counts what it refused.
package protocol OTLPExportRequest: SwiftProtobuf.Message {
    /// The signal the request carries.
    static var signal: OTLPConfiguration.Signal { get }
    /// What a partial success counts in the request: log records, spans, or data points.
    static var itemName: String { get }
    /// How many of those it holds.
    var itemCount: Int { get }
    /// The count and words of what the endpoint refused, from its answer; nil when it refused
    /// nothing (or said nothing readable).
    static func rejected(inAnswer answer: [UInt8]) -> (count: Int, message: String)?
    /// The request's protobuf bytes.
    func body() throws -> [UInt8]
}

extension OTLPExportRequest {
    /// The request's protobuf bytes, by SwiftProtobuf.
    package func body() throws -> [UInt8] { try serializedBytes() }
}

extension Array where Element: OTLPExportRequest {
    /// The protobuf bytes of the requests, counted (the export benchmarks).
    package var encodedBytes: Int {
        reduce(0) { $0 + ((try? $1.body())?.count ?? 0) }
    }

    /// The items the requests hold.
    package var itemCount: Int { reduce(0) { $0 + $1.itemCount } }
}

extension Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest: OTLPExportRequest {
    package static var signal: OTLPConfiguration.Signal { .logs }
    package static var itemName: String { "log records" }
    package var itemCount: Int { resourceLogs.reduce(0) { $0 + $1.scopeLogs.reduce(0) { $0 + $1.logRecords.count } } }
    package static func rejected(inAnswer answer: [UInt8]) -> (count: Int, message: String)? {
        guard let partial = try? Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse(serializedBytes: answer).partialSuccess,
            partial.rejectedLogRecords > 0
        else { return nil }
        return (Int(clamping: partial.rejectedLogRecords), partial.errorMessage)
    }
}

extension Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest: OTLPExportRequest {
    /// The request's protobuf bytes, written field by field (``OTLPWire``).
    package func body() throws -> [UInt8] { try OTLPWire.encode(self) }
    package static var signal: OTLPConfiguration.Signal { .traces }
    package static var itemName: String { "spans" }
    package var itemCount: Int { resourceSpans.reduce(0) { $0 + $1.scopeSpans.reduce(0) { $0 + $1.spans.count } } }
    package static func rejected(inAnswer answer: [UInt8]) -> (count: Int, message: String)? {
        guard let partial = try? Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse(serializedBytes: answer).partialSuccess,
            partial.rejectedSpans > 0
        else { return nil }
        return (Int(clamping: partial.rejectedSpans), partial.errorMessage)
    }
}

extension Opentelemetry_Proto_Collector_Metrics_V1_ExportMetricsServiceRequest: OTLPExportRequest {
    package static var signal: OTLPConfiguration.Signal { .metrics }
    package static var itemName: String { "data points" }
    package var itemCount: Int {
        resourceMetrics.reduce(0) { total, resource in
            total + resource.scopeMetrics.reduce(0) { $0 + $1.metrics.reduce(0) { $0 + $1.dataPointCount } }
        }
    }
    package static func rejected(inAnswer answer: [UInt8]) -> (count: Int, message: String)? {
        guard
            let partial = try? Opentelemetry_Proto_Collector_Metrics_V1_ExportMetricsServiceResponse(serializedBytes: answer)
                .partialSuccess,
            partial.rejectedDataPoints > 0
        else { return nil }
        return (Int(clamping: partial.rejectedDataPoints), partial.errorMessage)
    }
}

extension Opentelemetry_Proto_Metrics_V1_Metric {
    /// The data points of a gauge or a sum (the kinds nodescope sends).
    var dataPointCount: Int {
        switch data {
        case .gauge(let gauge): gauge.dataPoints.count
        case .sum(let sum): sum.dataPoints.count
        case .histogram(let histogram): histogram.dataPoints.count
        case .exponentialHistogram(let histogram): histogram.dataPoints.count
        case .summary(let summary): summary.dataPoints.count
        case nil: 0
        }
    }
}

/// Posts OTLP export requests over HTTP with protobuf bodies: bounded in time, following no
/// redirect, reading an answer up to 64 KiB.
package enum OTLPHTTP {
    /// What posting some requests did.
    package struct Outcome: Sendable, Equatable {
        /// Items (log records, spans, data points) the endpoint took.
        package var sent = 0
        /// Items not sent, or refused (the endpoint's partial success counts).
        package var dropped = 0
        /// Request bytes posted (protobuf bodies).
        package var bytes = 0
        /// Why items were dropped, once; nil when all were taken.
        package var failure: String?

        /// An outcome of nothing posted yet.
        package init() {}
    }

    /// Posts `requests` in order to `target` until `deadline`; after the first failure the rest
    /// are counted as dropped, not tried.
    package static func post<Request: OTLPExportRequest>(
        _ requests: [Request], to target: OTLPConfiguration.Target, client: HTTPClient, deadline: NIODeadline
    ) async -> Outcome {
        var outcome = Outcome()
        for request in requests {
            let count = request.itemCount
            guard outcome.failure == nil else {
                outcome.dropped += count
                continue
            }
            let body: [UInt8]
            do {
                body = try request.body()
            } catch {
                outcome.dropped += count
                outcome.failure = "could not encode the \(Request.itemName): \(error)"
                continue
            }
            outcome.bytes += body.count
            switch await post(body, to: target, client: client, deadline: deadline, rejected: Request.rejected(inAnswer:)) {
            case .success(let rejected):
                outcome.sent += count - min(count, rejected.count)
                outcome.dropped += min(count, rejected.count)
                if rejected.count > 0 {
                    outcome.failure = "the endpoint refused \(rejected.count) \(Request.itemName): \(rejected.message)"
                }
            case .failure(let failure):
                outcome.dropped += count
                outcome.failure = failure.message
            }
        }
        return outcome
    }

    /// What an endpoint refused in a partial success, and its words.
    package struct Rejected: Sendable {
        var count: Int
        var message: String
    }

    /// Why a post failed.
    package struct PostFailure: Error {
        var message: String
    }

    /// Posts one protobuf body; the endpoint's partial success when it answered 2xx.
    package static func post(
        _ body: [UInt8], to target: OTLPConfiguration.Target, client: HTTPClient, deadline: NIODeadline,
        rejected: ([UInt8]) -> (count: Int, message: String)?
    ) async -> Result<Rejected, PostFailure> {
        var request = HTTPClientRequest(url: target.url)
        request.method = .POST
        for header in target.headers { request.headers.add(name: header.name, value: header.value) }
        request.headers.replaceOrAdd(name: "Content-Type", value: "application/x-protobuf")
        request.headers.replaceOrAdd(name: "User-Agent", value: "nodescope")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, deadline: deadline)
            // An answer is read up to 64 KiB: enough for a status message, never a flood.
            let answer = try await response.body.collect(upTo: 65_536)
            guard (200..<300).contains(response.status.code) else {
                return .failure(PostFailure(message: "the endpoint answered \(response.status.code) \(response.status.reasonPhrase)"))
            }
            guard let (count, message) = rejected(Array(answer.readableBytesView)) else {
                return .success(Rejected(count: 0, message: ""))
            }
            let words = String(message.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200).map(Character.init))
            return .success(Rejected(count: count, message: words))
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return .failure(PostFailure(message: "no answer within the export's bound"))
        } catch is CancellationError {
            // The daemon or `check` is stopping: said so, not as `CancellationError()`.
            return .failure(PostFailure(message: "stopped before the endpoint answered"))
        } catch {
            return .failure(PostFailure(message: "\(error)"))
        }
    }

    /// A client that follows no redirect and gives up connecting after `connectMilliseconds`.
    package static func makeClient(connectMilliseconds: Int) -> HTTPClient {
        HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: HTTPClient.Configuration(
                redirectConfiguration: .disallow, timeout: .init(connect: .milliseconds(Int64(connectMilliseconds)))))
    }

    /// Shuts `client` down, waiting at most until `deadline`: a client left shutting down is
    /// let go with the process.
    package static func shutDown(_ client: HTTPClient, before deadline: NIODeadline) async {
        _ = await first(by: deadline) { try? await client.shutdown() }
    }

    /// What `work` returns when it is done by `deadline`; nil when it is not, and then nobody
    /// waits for it (it goes on in its own task, or ends with the process). A task group would
    /// wait for its children however it is cancelled: this does not.
    package static func first<T: Sendable>(by deadline: NIODeadline, _ work: @escaping @Sendable () async -> T) async -> T? {
        let once = Once<T?>()
        return await withCheckedContinuation { continuation in
            once.set(continuation)
            Task.detached { once.resume(with: await work()) }
            Task.detached {
                let now = NIODeadline.now().uptimeNanoseconds
                try? await Task.sleep(nanoseconds: deadline.uptimeNanoseconds > now ? deadline.uptimeNanoseconds - now : 0)
                once.resume(with: nil)
            }
        }
    }

    /// A continuation resumed by whichever comes first.
    private final class Once<T: Sendable>: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, done: Bool)>((nil, false))

        func set(_ continuation: CheckedContinuation<T, Never>) {
            state.withLock { $0.continuation = continuation }
        }

        func resume(with value: T) {
            let continuation = state.withLock { state -> CheckedContinuation<T, Never>? in
                guard !state.done else { return nil }
                state.done = true
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: value)
        }
    }
}
#endif
