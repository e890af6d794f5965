import Foundation
import ImgWarmCache

/// State changes waiting to be committed together.
// @unchecked Sendable: `changes` only under `lock`.
final class StateBatch: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [StateStore.Change] = []

    func add(_ c: [StateStore.Change]) {
        guard !c.isEmpty else { return }
        lock.lock()
        changes += c
        lock.unlock()
    }

    func drain() -> [StateStore.Change] {
        lock.lock()
        defer { lock.unlock() }
        let c = changes
        changes = []
        return c
    }
}

/// Commits a run's state changes in one transaction a second (a
/// transaction per entry would cost an fsync each), and once more at the
/// end, so a kill loses at most the last second of them.
// @unchecked Sendable: `timer` is set and cancelled by the run's thread only (start, stop); flushes are serialized by `flushLock`.
final class StateRecorder: @unchecked Sendable {
    let batch = StateBatch()
    private let state: StateStore?
    private let onError: (String) -> Void
    private let flushLock = NSLock()
    private var timer: DispatchSourceTimer?

    init(state: StateStore?, onError: @escaping (String) -> Void) {
        self.state = state
        self.onError = onError
    }

    func start(every seconds: Double = 1) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + seconds, repeating: seconds)
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
        self.timer = timer
    }

    /// Stops the timer and commits what is left.
    func stop() {
        timer?.cancel()
        timer = nil
        flush()
    }

    func flush() {
        flushLock.lock()
        defer { flushLock.unlock() }
        let changes = batch.drain()
        guard let state, !changes.isEmpty else { return }
        do {
            try state.apply(changes)
        } catch {
            onError("\(state.path): cannot record state: \(error)")
        }
    }
}
