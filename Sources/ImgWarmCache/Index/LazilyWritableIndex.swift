import Foundation

/// An index opened read-only until the first store or removal needs it
/// writable (`DiskLruIndex`, `FlutterCacheIndex`): one way to take its lock
/// with the index open for writing.
protocol LazilyWritableIndex: AnyObject {
    /// Guards the open state and what was read.
    var lock: NSLock { get }
    var writable: Bool { get }
    /// Opens the index; called with `lock` held.
    func openLocked(writable: Bool) throws
}

extension LazilyWritableIndex {
    /// Takes the lock and opens the index for writing when it is not yet:
    /// on return the caller holds the lock and unlocks it; on an error the
    /// lock is released.
    func lockWritable() throws {
        lock.lock()
        if writable { return }
        do {
            try openLocked(writable: true)
        } catch {
            lock.unlock()
            throw error
        }
    }
}
