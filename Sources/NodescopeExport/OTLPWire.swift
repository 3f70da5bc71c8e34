#if Export
import FoundationEssentials
import NodescopeOTLPProto
import SwiftProtobuf

/// The protobuf bytes of a trace export request, written here field by field: a `check` of a
/// big suite and a busy daemon send hundreds of thousands of spans, and SwiftProtobuf's encoder,
/// which measures each nested message again at every level it sits in, spent three quarters of
/// a span's cost (docs/BENCHMARKS.md). Each nested message is written once, then its length put
/// in front. Field numbers are those of opentelemetry-proto's `trace.proto` and `common.proto`;
/// the resource and the scope, once per request, go through SwiftProtobuf. The unit tests read
/// the bytes back with SwiftProtobuf and compare them with the messages.
enum OTLPWire {
    /// The bytes of `request`.
    static func encode(_ request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest) throws -> [UInt8] {
        var writer = Writer()
        writer.bytes.reserveCapacity(request.resourceSpans.reduce(0) { $0 + $1.scopeSpans.reduce(0) { $0 + $1.spans.count } } * 420)
        for resourceSpans in request.resourceSpans {
            let resource: [UInt8]? = resourceSpans.hasResource ? try resourceSpans.resource.serializedBytes() : nil
            try writer.message(1) { writer in
                if let resource { writer.bytesField(1, resource, always: true) }
                for scopeSpans in resourceSpans.scopeSpans {
                    let scope: [UInt8]? = scopeSpans.hasScope ? try scopeSpans.scope.serializedBytes() : nil
                    writer.message(2) { writer in
                        if let scope { writer.bytesField(1, scope, always: true) }
                        for span in scopeSpans.spans { writer.message(2) { $0.span(span) } }
                        writer.string(3, scopeSpans.schemaURL)
                    }
                }
                writer.string(3, resourceSpans.schemaURL)
            }
        }
        return writer.bytes
    }

    /// Appends protobuf fields to ``bytes``.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func tag(_ field: Int, _ wireType: UInt64) {
            varint(UInt64(field) << 3 | wireType)
        }

        /// A length-delimited field (bytes, a string, a message); left out when empty unless `always`.
        mutating func bytesField(_ field: Int, _ value: some Collection<UInt8>, always: Bool = false) {
            guard always || !value.isEmpty else { return }
            tag(field, 2)
            varint(UInt64(value.count))
            bytes.append(contentsOf: value)
        }

        mutating func string(_ field: Int, _ value: String, always: Bool = false) {
            guard always || !value.isEmpty else { return }
            var value = value
            value.withUTF8 { bytesField(field, $0, always: true) }
        }

        mutating func fixed64(_ field: Int, _ value: UInt64) {
            guard value != 0 else { return }
            tag(field, 1)
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func fixed32(_ field: Int, _ value: UInt32) {
            guard value != 0 else { return }
            tag(field, 5)
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        /// A varint field (an enum, an unsigned or a two's-complement signed number).
        mutating func number(_ field: Int, _ value: UInt64, always: Bool = false) {
            guard always || value != 0 else { return }
            tag(field, 0)
            varint(value)
        }

        /// A nested message: written in place, then its length put in front of it.
        mutating func message(_ field: Int, _ body: (inout Writer) throws -> Void) rethrows {
            tag(field, 2)
            // One byte is kept for the length (most of these messages are shorter than 128
            // bytes); a longer one makes room for the rest of its varint.
            let start = bytes.count
            bytes.append(0)
            try body(&self)
            var length = bytes.count - start - 1
            var size = 1
            while length >> (7 * size) != 0 { size += 1 }
            if size > 1 { bytes.insert(contentsOf: repeatElement(0, count: size - 1), at: start + 1) }
            for index in 0..<size {
                bytes[start + index] = UInt8(truncatingIfNeeded: length) | (index < size - 1 ? 0x80 : 0)
                length >>= 7
            }
        }

        mutating func span(_ span: Opentelemetry_Proto_Trace_V1_Span) {
            bytesField(1, span.traceID)
            bytesField(2, span.spanID)
            string(3, span.traceState)
            bytesField(4, span.parentSpanID)
            string(5, span.name)
            number(6, UInt64(span.kind.rawValue))
            fixed64(7, span.startTimeUnixNano)
            fixed64(8, span.endTimeUnixNano)
            for attribute in span.attributes { message(9) { $0.keyValue(attribute) } }
            number(10, UInt64(span.droppedAttributesCount))
            for event in span.events {
                message(11) { writer in
                    writer.fixed64(1, event.timeUnixNano)
                    writer.string(2, event.name)
                    for attribute in event.attributes { writer.message(3) { $0.keyValue(attribute) } }
                    writer.number(4, UInt64(event.droppedAttributesCount))
                }
            }
            number(12, UInt64(span.droppedEventsCount))
            for link in span.links {
                message(13) { writer in
                    writer.bytesField(1, link.traceID)
                    writer.bytesField(2, link.spanID)
                    writer.string(3, link.traceState)
                    for attribute in link.attributes { writer.message(4) { $0.keyValue(attribute) } }
                    writer.number(5, UInt64(link.droppedAttributesCount))
                    writer.fixed32(6, link.flags)
                }
            }
            number(14, UInt64(span.droppedLinksCount))
            if span.hasStatus {
                message(15) { writer in
                    writer.string(2, span.status.message)
                    writer.number(3, UInt64(span.status.code.rawValue))
                }
            }
            fixed32(16, span.flags)
        }

        mutating func keyValue(_ pair: Opentelemetry_Proto_Common_V1_KeyValue) {
            string(1, pair.key)
            if pair.hasValue { message(2) { $0.anyValue(pair.value) } }
            number(3, UInt64(bitPattern: Int64(pair.keyStrindex)))
        }

        /// A value: its one field is written even when it holds its type's default (a oneof).
        mutating func anyValue(_ value: Opentelemetry_Proto_Common_V1_AnyValue) {
            switch value.value {
            case .stringValue(let text): string(1, text, always: true)
            case .boolValue(let flag): number(2, flag ? 1 : 0, always: true)
            case .intValue(let integer): number(3, UInt64(bitPattern: integer), always: true)
            case .doubleValue(let double):
                tag(4, 1)
                withUnsafeBytes(of: double.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case .arrayValue(let array):
                message(5) { writer in for item in array.values { writer.message(1) { $0.anyValue(item) } } }
            case .kvlistValue(let list):
                message(6) { writer in for pair in list.values { writer.message(1) { $0.keyValue(pair) } } }
            case .bytesValue(let data): bytesField(7, data, always: true)
            case .stringValueStrindex(let index): number(8, UInt64(bitPattern: Int64(index)), always: true)
            case nil: break
            }
        }
    }
}
#endif
