import NodesDebug
import NodesRetainers
import NodescopeWire
import Testing

/// An owner of one callback, in a stored property of its own (see ``RetainerAnalysisTests/context(of:)``).
final class CallbackSlot {
    var callback: () -> Void = {}
}

/// What a callback captures, and what a chain of links keeps.
final class CapturedPart {
    var count = 0
}

/// A link of a longer chain that keeps an object for real.
final class ChainLink {
    var next: AnyObject?
}

/// What a leftover word in a closure's context points at, and a chain keeps too.
final class LeftoverTarget {}

extension RetainerAnalysisTests {
    /// The context of a closure with two words of captures asks malloc for 32 bytes and gets 40:
    /// the last word is what the chunk held before. Seen in `sample-nodes --leak worker`, where
    /// the first login's Settings context read as held through `Session.listeners[1]` (a
    /// reabstraction thunk's context, whose last word was left over) in some runs and through the
    /// ticker's timer in others, and so changed its fingerprint. A path through such a word is
    /// taken only where no other is.
    @Test func aPathThroughALeftoverWordOfAClosuresContextGivesWayToARealOne() throws {
        let (first, second) = (CapturedPart(), CapturedPart())
        let (slot, context) = try Self.slot { { [first, second] in first.count += second.count } }
        let target = LeftoverTarget()
        context.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque()), toByteOffset: 32, as: UInt.self)
        // The real path is longer: three hops, against the leftover's two.
        let (head, middle, last) = (ChainLink(), ChainLink(), ChainLink())
        (head.next, middle.next, last.next) = (middle, last, target)
        let frames = analysis().explain(
            [RetainerAnalysis.Target(target, nodeID: 3, objectIndex: 0)],
            attached: [RetainerAnalysis.NodeObject(slot, nodeID: 30), RetainerAnalysis.NodeObject(head, nodeID: 31)],
            detached: [])
        let frame = try #require(frames.first)
        #expect(frame.verdict == .holder, "\(frame)")
        #expect(frame.hops.map(\.holder) == ["ChainLink", "ChainLink", "ChainLink"], "\(frame)")
        #expect(frame.hops.first?.holderNodeID == 31, "\(frame)")
        withExtendedLifetime((slot, target, head, middle, last, first, second)) {}
    }

    /// The same word is the only path there is: it is still followed (in a context of three
    /// words of captures, 40 bytes asked and 40 usable, the last word is a real capture).
    @Test func aClosuresLastCaptureIsStillAPathWhereThereIsNoOther() throws {
        let (first, second, third) = (CapturedPart(), CapturedPart(), CapturedPart())
        let (slot, context) = try Self.slot { { [first, second, third] in first.count += second.count + third.count } }
        // The compiler lays the captures out in an order of its own: the last word's is the target.
        let last = context.load(fromByteOffset: 32, as: UInt.self)
        let target = try #require([first, second, third].first { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) == last })
        let frames = analysis().explain(
            [RetainerAnalysis.Target(target, nodeID: 4, objectIndex: 0)],
            attached: [RetainerAnalysis.NodeObject(slot, nodeID: 40)], detached: [])
        let frame = try #require(frames.first)
        #expect(frame.verdict == .holder, "\(frame)")
        #expect(lines(frame) == ["CallbackSlot .callback *", "closure context capture"], "\(frame)")
        withExtendedLifetime((slot, first, second, third)) {}
    }

    /// A cycle closed through a leftover word gives way to one closed through real references.
    @Test func aCycleThroughALeftoverWordGivesWayToARealOne() throws {
        let (back, other) = (ChainLink(), CapturedPart())
        let (slot, context) = try Self.slot { { [back, other] in other.count += back.next == nil ? 0 : 1 } }
        back.next = slot
        // The leftover cycle (the slot, its callback's context) is two hops; the real one, through back, three.
        context.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(slot).toOpaque()), toByteOffset: 32, as: UInt.self)
        let frames = analysis().explain(
            [RetainerAnalysis.Target(slot, nodeID: 5, objectIndex: 0)], attached: [],
            detached: [RetainerAnalysis.NodeObject(back, nodeID: 5)])
        let frame = try #require(frames.first)
        #expect(frame.verdict == .cycle, "\(frame)")
        #expect(frame.hops.map(\.holder) == ["CallbackSlot", "closure context", "ChainLink"], "\(frame)")
        withExtendedLifetime((slot, back, other)) {}
    }

    /// A slot given the callback `make` makes, whose context has 40 usable bytes. glibc gives a
    /// request of 32 or 40 bytes a chunk of 48, but hands over a free chunk of 64 whole when what
    /// would be left of it is too small to be a chunk (56 usable): tries again, up to 16 times.
    static func slot(withCallback make: () -> () -> Void) throws -> (CallbackSlot, UnsafeMutableRawPointer) {
        var tried: [CallbackSlot] = []
        for _ in 0..<16 {
            let slot = CallbackSlot()
            slot.callback = make()
            if let context = context(of: slot), usableSize(context) == 40 { return (slot, context) }
            // Kept until the end, so that the next try is not given the same chunk.
            tried.append(slot)
        }
        throw SlotNotMade(sizes: tried.compactMap { context(of: $0).map(usableSize) })
    }

    /// No context of 40 usable bytes in 16 tries: the sizes they had.
    struct SlotNotMade: Error {
        var sizes: [Int]
    }

    /// The usable bytes of a block of glibc's malloc that is no mapping of its own: its chunk's
    /// size (the word before it, without the flags of its 3 low bits) less the size word.
    static func usableSize(_ block: UnsafeMutableRawPointer) -> Int {
        Int((block - 8).load(as: UInt.self) & ~7) - 8
    }

    /// The context of the slot's callback, read where the slot keeps it (after the object's two
    /// header words, the function's two words: its code, then its context). Not through a
    /// generic function such as `unsafeBitCast`, which would be given a reabstraction thunk.
    static func context(of slot: CallbackSlot) -> UnsafeMutableRawPointer? {
        let object = Unmanaged.passUnretained(slot).toOpaque()
        return UnsafeMutableRawPointer(bitPattern: object.load(fromByteOffset: 24, as: UInt.self))
    }
}
