#if canImport(Glibc)
import Glibc
#endif
import Collections
import Foundation
import Synchronization

// See WorkerPool.swift for why these hand-offs are written by hand.

/// A counting semaphore for one feeding thread: `wait` takes a slot,
/// `signal` gives one back.
///
/// Built so that neither side sleeps or takes a lock per entry. Slots given
/// back are counted in an atomic; the feeder takes every free slot at once
/// and spends them without touching shared state, and when none is left it
/// sleeps until `wakeBatch` slots are free (or every slot is), so a full
/// pipeline wakes it once per batch of finished entries. A signal takes the
/// lock only to wake a sleeping feeder. (perf on a validating warm: with a
/// lock per wait and per signal, this gate made 64% of the run's futex
/// calls, the feeder and the workers queueing on its mutex.)
// @unchecked Sendable: `taken` is the feeding thread's alone; `free` and `feederAsleep` are atomics; the sleep under `monitor`.
public final class SlotGate: @unchecked Sendable {
    private let monitor = Monitor()
    /// Slots given back and not yet taken by the feeder.
    private let free: Atomic<Int>
    /// The feeder is asleep (or about to be) until `wakeBatch` are free.
    private let feederAsleep = Atomic<Bool>(false)
    /// Feeder-only: slots taken at once and not spent yet.
    private var taken = 0
    private let wakeBatch: Int

    /// `slots` at least 1; `wakeBatch` is clamped to 1...slots.
    public init(slots: Int, wakeBatch: Int) {
        let total = max(1, slots)
        free = Atomic(total)
        self.wakeBatch = min(max(1, wakeBatch), total)
    }

    /// Takes a slot; the feeding thread only.
    public func wait() {
        if taken == 0 { taken = takeBatch() }
        taken -= 1
    }

    /// Every free slot, once at least `wakeBatch` are free.
    private func takeBatch() -> Int {
        if free.load(ordering: .sequentiallyConsistent) >= wakeBatch {
            return free.exchange(0, ordering: .sequentiallyConsistent)
        }
        monitor.lock()
        // Published before the count is read again: a signal that raises
        // the count after this read sees the flag and wakes us (both are
        // sequentially consistent), one before it is seen by the read.
        feederAsleep.store(true, ordering: .sequentiallyConsistent)
        while free.load(ordering: .sequentiallyConsistent) < wakeBatch {
            pthread_cond_wait(monitor.first, monitor.mutex)
        }
        feederAsleep.store(false, ordering: .sequentiallyConsistent)
        monitor.unlock()
        return free.exchange(0, ordering: .sequentiallyConsistent)
    }

    /// Gives a slot back; any thread.
    public func signal() {
        let now = free.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        if now >= wakeBatch && feederAsleep.load(ordering: .sequentiallyConsistent) {
            // Passing through the lock orders this after the feeder's check
            // of the count: it either saw this slot, or is inside
            // pthread_cond_wait by now. The signal itself comes after the
            // unlock, so the woken feeder does not block on our mutex.
            monitor.lock()
            monitor.unlock()
            pthread_cond_signal(monitor.first)
        }
    }
}
