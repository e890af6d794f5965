#if canImport(Glibc)
import Glibc
#endif
import Collections
import Foundation
import Synchronization

// Hand-offs between the run's threads, built so that a thread sleeps and is
// woken (a futex round trip each way) once per batch of files rather than
// once per file. strace -f -c counted 5.6 futex calls per file with
// OperationQueue and DispatchSemaphore in these two places (CHANGELOG.md,
// 0.1.0, Performance). Hand-written: Foundation's OperationQueue pays a
// dispatch_async plus per-operation locks for each item, and neither it nor
// DispatchSemaphore can wake a waiter once per batch.

/// A mutex with two condition variables, at stable addresses (pthread
/// objects must not move, which Swift values may).
final class Monitor {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    let first = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    let second = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(first, nil)
        pthread_cond_init(second, nil)
    }

    deinit {
        pthread_cond_destroy(second)
        pthread_cond_destroy(first)
        pthread_mutex_destroy(mutex)
        second.deallocate()
        first.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// A fixed set of worker threads taking closures from one FIFO queue.
///
/// A submit wakes a worker only when one is asleep; a worker that finds the
/// queue non-empty runs the next item without sleeping. So a burst of
/// completions (one engine loop iteration finishes several transfers) costs
/// at most one wakeup per idle worker, and none while all are busy.
public final class WorkerPool: Sendable {
    // @unchecked Sendable: every field only under `monitor`.
    private final class State: @unchecked Sendable {
        let monitor = Monitor()
        var queue = Deque<() -> Void>()
        /// Submitted and not yet finished (queued + running).
        var pending = 0
        var sleeping = 0
        /// Signals sent to sleepers that have not woken yet: a burst of
        /// submits wakes each sleeper once, not once per item.
        var wakingUp = 0
        var stopping = false
        var idleWaiters = 0
    }

    private let state = State()

    /// Starts `threads` workers (at least one) named `name`.
    public init(threads: Int, name: String) {
        for index in 0..<max(1, threads) {
            let state = self.state
            let thread = Thread { WorkerPool.work(state) }
            thread.name = "\(name).\(index)"
            thread.start()
        }
    }

    /// The workers end once the queue is empty.
    deinit {
        let s = state
        s.monitor.lock()
        s.stopping = true
        pthread_cond_broadcast(s.monitor.first)
        s.monitor.unlock()
    }

    public func submit(_ work: @escaping () -> Void) {
        let s = state
        s.monitor.lock()
        s.queue.append(work)
        s.pending += 1
        let wake = s.sleeping > s.wakingUp
        if wake { s.wakingUp += 1 }
        s.monitor.unlock()
        // After the unlock: a worker woken while we still held the mutex
        // would only block on it again (a second futex round trip). No
        // wakeup is lost: a sleeper counted above is inside
        // pthread_cond_wait, and a worker awake takes the item itself.
        if wake { pthread_cond_signal(s.monitor.first) }
    }

    /// Blocks until everything submitted so far (and anything it submits)
    /// has run. Never call it from a worker.
    public func waitUntilIdle() {
        let s = state
        s.monitor.lock()
        while s.pending > 0 {
            s.idleWaiters += 1
            pthread_cond_wait(s.monitor.second, s.monitor.mutex)
            s.idleWaiters -= 1
        }
        s.monitor.unlock()
    }

    private static func work(_ s: State) {
        s.monitor.lock()
        while true {
            guard let next = s.queue.popFirst() else {
                if s.stopping { break }
                s.sleeping += 1
                pthread_cond_wait(s.monitor.first, s.monitor.mutex)
                s.sleeping -= 1
                if s.wakingUp > 0 { s.wakingUp -= 1 }
                continue
            }
            s.monitor.unlock()
            next()
            s.monitor.lock()
            s.pending -= 1
            if s.pending == 0 && s.idleWaiters > 0 { pthread_cond_broadcast(s.monitor.second) }
        }
        s.monitor.unlock()
    }
}
