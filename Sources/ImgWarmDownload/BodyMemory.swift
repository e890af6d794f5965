import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The memory the bodies of a run may hold at once: those being received
/// and those waiting for a decoder or a write (`--memory` less
/// `--decode-memory`, whose gate bounds the decoders). Every transfer
/// charges the bytes its body buffer takes before it grows it (the write
/// callback sees decoded bytes, so a gzip body counts its inflated size as
/// it inflates); a charge that does not fit pauses the transfer
/// (`CURL_WRITEFUNC_PAUSE`: curl keeps the bytes it has and reads no more)
/// until bodies are released. A charge goes with the body into the
/// response and is released when the body is dropped (`Charge` deinit).
///
/// One holder may always grow, the oldest (the lowest sequence number
/// holding bytes): otherwise transfers paused with partial bodies could
/// fill the budget and wait for each other forever. So the bound is the
/// limit plus one body (`--max-bytes`).
public final class BodyMemory: @unchecked Sendable {  // all state behind `lock`
    public let limit: Int
    private let lock = NSLock()
    private var used = 0
    private var peak = 0
    private var pauses = 0
    private var nextSequence = 0
    /// Bytes held per holder, by sequence number (oldest first).
    private var holders: [Int: Int] = [:]

    public init(limit: Int) { self.limit = max(1, limit) }

    /// Bytes held now, and the most held at once.
    public var figures: (used: Int, peak: Int) { lock.withLock { (used, peak) } }

    /// Transfer attempts that paused for want of memory at least once.
    public var pausedTransfers: Int { lock.withLock { pauses } }

    /// A new holder's account (one per transfer attempt).
    public func charge() -> Charge {
        lock.withLock {
            nextSequence += 1
            return Charge(memory: self, sequence: nextSequence)
        }
    }

    fileprivate func take(_ bytes: Int, sequence: Int) -> Bool {
        lock.withLock {
            let held = holders[sequence] ?? 0
            let isOldest = held > 0 && holders.keys.min() == sequence || holders.isEmpty
            guard used + bytes <= limit || isOldest else { return false }
            holders[sequence] = held + bytes
            used += bytes
            peak = max(peak, used)
            return true
        }
    }

    /// Whether a holder paused for want of memory may try again.
    fileprivate func mayGrow(sequence: Int) -> Bool {
        lock.withLock {
            used < limit || holders.isEmpty || ((holders[sequence] ?? 0) > 0 && holders.keys.min() == sequence)
        }
    }

    fileprivate func notePause() { lock.withLock { pauses += 1 } }

    fileprivate func release(sequence: Int) {
        lock.withLock {
            if let held = holders.removeValue(forKey: sequence) { used -= held }
        }
    }

    /// One body's share of the budget. Released when reset or dropped.
    public final class Charge: @unchecked Sendable {  // one owner at a time: the transfer, then the response
        private let memory: BodyMemory
        fileprivate let sequence: Int
        /// Bytes charged so far.
        public private(set) var bytes = 0

        fileprivate init(memory: BodyMemory, sequence: Int) {
            self.memory = memory
            self.sequence = sequence
        }

        deinit { memory.release(sequence: sequence) }

        /// Charges a body buffer grown to `capacity` bytes; false when it
        /// does not fit (nothing is charged then).
        func grow(to capacity: Int) -> Bool {
            guard capacity > bytes else { return true }
            guard memory.take(capacity - bytes, sequence: sequence) else { return false }
            bytes = capacity
            return true
        }

        var mayGrow: Bool { memory.mayGrow(sequence: sequence) }

        /// The transfer paused for want of memory (counted once per
        /// attempt, for the report).
        func paused() {
            guard !hasPaused else { return }
            hasPaused = true
            memory.notePause()
        }
        private var hasPaused = false

        /// The body was dropped (a redirect, an error page).
        func reset() {
            memory.release(sequence: sequence)
            bytes = 0
        }
    }
}

/// `--memory` divided: the decoders' share (`--decode-memory`) and what
/// is left for the bodies. The default of `--memory` is twice the default
/// of `--decode-memory`: half of the cgroup's limit or of RAM, at most
/// 2 GiB. Given `--memory` alone, the decoders get their default or half
/// of it, whichever is less.
public enum RunMemory {
    public static func split(memory: UInt64?, decodeMemory: UInt64?, defaultDecodeMemory: UInt64) -> (decoders: UInt64, bodies: UInt64) {
        let total = memory ?? 2 * max(defaultDecodeMemory, decodeMemory ?? 0)
        let decoders = decodeMemory ?? min(defaultDecodeMemory, max(1, total / 2))
        return (decoders, max(1, total - min(total, decoders)))
    }
}
