#if Export
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NodescopeCollector
import NodescopeOTLPProto
import SwiftProtobuf

/// Posts leak log records to an OTLP/HTTP endpoint, within one bound for the whole export: a
/// `check` waits for it at most that long before it exits, whatever the endpoint does.
package enum OTLPLogExporter {
    /// What an export did.
    package struct Outcome: Sendable, Equatable {
        /// Log records the endpoint took.
        package var sent = 0
        /// Log records not sent, or refused (the endpoint's partial success counts).
        package var dropped = 0
        /// Request bytes posted (protobuf bodies).
        package var bytes = 0
        /// Why records were dropped, once; nil when all were taken.
        package var failure: String?
    }

    /// Exports `leaks` as log records to `configuration`'s endpoint, within its timeout.
    package static func export(
        _ leaks: [LeakRecord], configuration: OTLPConfiguration, resource: OTLPLeakLogs.Resource
    ) async -> Outcome {
        var outcome = Outcome()
        guard !leaks.isEmpty else { return outcome }
        let requests = OTLPLeakLogs.requests(leaks, resource: resource, clock: UnixClock())
        let deadline = NIODeadline.now() + .milliseconds(Int64(configuration.timeoutMilliseconds))
        let client = makeClient(configuration)
        for request in requests {
            let count = request.resourceLogs.reduce(0) { $0 + $1.scopeLogs.reduce(0) { $0 + $1.logRecords.count } }
            guard outcome.failure == nil else {
                outcome.dropped += count
                continue
            }
            let body: [UInt8]
            do {
                body = try request.serializedBytes()
            } catch {
                outcome.dropped += count
                outcome.failure = "could not encode the log records: \(error)"
                continue
            }
            outcome.bytes += body.count
            switch await post(body, to: configuration.logsURL, headers: configuration.headers, client: client, deadline: deadline) {
            case .success(let rejected):
                outcome.sent += count - rejected.count
                outcome.dropped += rejected.count
                if rejected.count > 0 { outcome.failure = "the endpoint refused \(rejected.count) log records: \(rejected.message)" }
            case .failure(let failure):
                outcome.dropped += count
                outcome.failure = failure.message
            }
        }
        await shutDown(client, before: deadline + .milliseconds(100))
        return outcome
    }

    /// Records an endpoint refused in a partial success, and its words.
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
        _ body: [UInt8], to url: String, headers: [OTLPConfiguration.Header], client: HTTPClient, deadline: NIODeadline
    ) async -> Result<Rejected, PostFailure> {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for header in headers { request.headers.add(name: header.name, value: header.value) }
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
            let reply = try? Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse(
                serializedBytes: Array(answer.readableBytesView))
            guard let partial = reply?.partialSuccess, partial.rejectedLogRecords > 0 else {
                return .success(Rejected(count: 0, message: ""))
            }
            let words = String(
                partial.errorMessage.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200).map(Character.init))
            return .success(Rejected(count: Int(clamping: partial.rejectedLogRecords), message: words))
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return .failure(PostFailure(message: "no answer within the export's bound"))
        } catch {
            return .failure(PostFailure(message: "\(error)"))
        }
    }

    /// A client that follows no redirect and gives up connecting at the timeout.
    package static func makeClient(_ configuration: OTLPConfiguration) -> HTTPClient {
        HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: HTTPClient.Configuration(
                redirectConfiguration: .disallow, timeout: .init(connect: .milliseconds(Int64(configuration.timeoutMilliseconds)))))
    }

    /// Shuts `client` down, waiting at most until `deadline`: a client left shutting down is
    /// let go with the process.
    package static func shutDown(_ client: HTTPClient, before deadline: NIODeadline) async {
        let done = Task { try? await client.shutdown() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await done.value }
            group.addTask {
                let left =
                    deadline.uptimeNanoseconds > NIODeadline.now().uptimeNanoseconds
                    ? deadline.uptimeNanoseconds - NIODeadline.now().uptimeNanoseconds : 0
                try? await Task.sleep(nanoseconds: left)
            }
            await group.next()
            group.cancelAll()
        }
    }
}
#endif
