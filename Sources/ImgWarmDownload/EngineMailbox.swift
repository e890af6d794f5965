import CCurl
import Foundation

/// The only state shared between callers' threads and the engine thread:
/// new requests, the cancel and shutdown flags, and the outstanding count.
/// Every change that gives the engine work wakes it with curl_multi_wakeup,
/// under the lock so that a wakeup never reaches a freed multi handle.
// @unchecked Sendable: every mutable field only under `condition`.
final class EngineMailbox: @unchecked Sendable {
    struct Pending {
        let request: DownloadRequest
        let completion: DownloadJob.Completion
    }

    struct Commands {
        var requests: [Pending]
        var cancel: Bool
        var shutdown: Bool
    }

    private let condition = NSCondition()
    private var inbox: [Pending] = []
    private var cancelRequested = false
    private var shutdownRequested = false
    private var outstanding = 0
    private var submitted = 0
    /// The multi handle to wake; nil once the engine has freed it.
    private var multi: UnsafeMutableRawPointer?

    init(multi: UnsafeMutableRawPointer) { self.multi = multi }

    /// Hands a request to the engine; false once shutdown was requested.
    func submit(_ pending: Pending) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !shutdownRequested else { return false }
        outstanding += 1
        submitted += 1
        inbox.append(pending)
        // The engine drains the whole inbox per wakeup, and a wakeup stays
        // pending until curl_multi_poll sees it: one per batch is enough.
        if inbox.count == 1 { wake() }
        return true
    }

    func requestCancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelRequested = true
        wake()
    }

    func requestShutdown() {
        condition.lock()
        defer { condition.unlock() }
        shutdownRequested = true
        wake()
    }

    /// Everything the engine has not seen yet. Requests submitted before a
    /// shutdown request are always part of the same or an earlier batch.
    func take() -> Commands {
        condition.lock()
        defer { condition.unlock() }
        let commands = Commands(requests: inbox, cancel: cancelRequested, shutdown: shutdownRequested)
        inbox = []
        return commands
    }

    /// `count` callers' completions have run (the engine reports them once
    /// per loop iteration: one lock, not one per completion).
    func completed(count: Int) {
        condition.lock()
        defer { condition.unlock() }
        outstanding -= count
        if outstanding == 0 { condition.broadcast() }
    }

    var outstandingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return outstanding
    }

    /// Requests ever accepted: with several engines, a change of the sum
    /// between two looks at their counts shows that a completion on one
    /// engine enqueued on another meanwhile.
    var submittedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return submitted
    }

    /// Blocks until nothing is outstanding or `deadline` passes; true when idle.
    func waitUntilIdle(deadline: Date?) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while outstanding > 0 {
            if let deadline {
                if !condition.wait(until: deadline) { return outstanding == 0 }
            } else {
                condition.wait()
            }
        }
        return true
    }

    /// Called by the engine right before it frees the multi handle.
    func detachMulti() {
        condition.lock()
        defer { condition.unlock() }
        multi = nil
    }

    private func wake() {
        if let multi { curl_multi_wakeup(multi) }
    }
}
