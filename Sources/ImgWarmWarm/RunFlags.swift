import Foundation
import ImgWarmSupport

/// Why the feeder stops early: an interrupt, or a disk error that makes
/// the cache unusable. Set from signal handlers and workers.
// @unchecked Sendable: both flags only under `lock`.
final class RunFlags: @unchecked Sendable {
    private let lock = NSLock()
    private var interrupted = false
    private var fatalError: ImgWarmError?

    func interrupt() {
        lock.lock()
        interrupted = true
        lock.unlock()
    }

    var isInterrupted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return interrupted
    }

    func setFatal(_ e: ImgWarmError) {
        lock.lock()
        if fatalError == nil { fatalError = e }
        lock.unlock()
    }

    var fatal: ImgWarmError? {
        lock.lock()
        defer { lock.unlock() }
        return fatalError
    }

    var shouldStop: Bool { isInterrupted || fatal != nil }
}
