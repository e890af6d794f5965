import Foundation

/// A lock-protected counter (the engine's threads share a cache object).
// @unchecked Sendable: `value` only under `lock`.
package final class AtomicCounter: @unchecked Sendable {
    package init() {
    }

    private var value: UInt64 = 0
    private let lock = NSLock()
    package func next() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
