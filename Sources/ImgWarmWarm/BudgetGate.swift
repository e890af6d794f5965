import Foundation
import ImgWarmCache

/// `--budget` in priority order. Entries are fed highest priority first but
/// finish downloading and validating in any order; the gate decides whether
/// each new file fits strictly in feed order, so a low-priority image never
/// takes the room of a higher-priority one fed before it.
// @unchecked Sendable: every mutable field (`used`, `issued`, `next`, `waiting`) only under `lock`.
final class BudgetGate: @unchecked Sendable {
    let limit: UInt64
    private var used: UInt64
    private let lock = NSLock()
    private var issued = 0
    private var next = 0
    private var waiting: [Int: (size: UInt64?, then: (Bool) -> Void)] = [:]

    init(limit: UInt64, used: UInt64) {
        self.limit = limit
        self.used = used
    }

    /// A gate for the cache at `directory`, its use counted as allocated
    /// bytes (what `du` and prune count).
    convenience init(limit: UInt64, cacheDirectory directory: String) {
        var used: UInt64 = 0
        CacheScanner.scan(directory) { used += UInt64(max(0, $0.allocatedSize)) }
        self.init(limit: limit, used: used)
    }

    /// A place in feed order, for an entry about to be requested.
    func issue() -> Int {
        lock.lock()
        defer { lock.unlock() }
        issued += 1
        return issued - 1
    }

    var isFull: Bool {
        lock.lock()
        defer { lock.unlock() }
        return used >= limit
    }

    /// Decides `ticket` once every earlier ticket is decided: `size` nil
    /// means nothing to store. `then` runs with whether it fits, possibly
    /// on the thread that decides a later-finishing earlier ticket.
    func decide(_ ticket: Int, size: UInt64?, _ then: @escaping (Bool) -> Void) {
        var ready: [((Bool) -> Void, Bool)] = []
        lock.lock()
        waiting[ticket] = (size, then)
        while let item = waiting.removeValue(forKey: next) {
            var fits = true
            if let s = item.size {
                fits = used + s <= limit
                if fits { used += s }
            }
            ready.append((item.then, fits))
            next += 1
        }
        lock.unlock()
        for (then, fits) in ready { then(fits) }
    }
}
