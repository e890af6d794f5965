import Foundation
import Synchronization
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The thread hand-offs of `warm` (Support/HandOff.swift): no slot or item
/// lost or handed out twice when many threads give back at once, and the
/// feeder's batching never lets more than `slots` entries be outstanding.
@Suite struct SlotGateTests {
    /// One feeder takes 20,000 slots of a 34-slot gate while four threads
    /// give them back in random bursts: every take is matched by a give,
    /// and at no moment are more than 34 taken and not given back.
    @Test(.timeLimit(.minutes(1))) func slotGateNeverHandsOutMoreThanItsSlots() {
        let slots = 34, total = 20_000
        let gate = SlotGate(slots: slots, wakeBatch: slots / 2)
        let outstanding = Atomic<Int>(0)
        let maxSeen = Atomic<Int>(0)
        let given = Atomic<Int>(0)
        let pool = WorkerPool(threads: 4, name: "test.release")
        for _ in 0..<total {
            gate.wait()
            let now = outstanding.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
            var seen = maxSeen.load(ordering: .relaxed)
            while now > seen {
                let (exchanged, original) = maxSeen.compareExchange(expected: seen, desired: now, ordering: .relaxed)
                if exchanged { break }
                seen = original
            }
            pool.submit {
                if Int.random(in: 0..<8) == 0 { usleep(50) }
                outstanding.wrappingSubtract(1, ordering: .sequentiallyConsistent)
                given.wrappingAdd(1, ordering: .relaxed)
                gate.signal()
            }
        }
        pool.waitUntilIdle()
        #expect(given.load(ordering: .relaxed) == total)
        #expect(maxSeen.load(ordering: .relaxed) <= slots)
        #expect(outstanding.load(ordering: .relaxed) == 0)
    }

    /// A gate of one slot alternates strictly: a lost wakeup would hang
    /// here (the test's time limit fails it).
    @Test(.timeLimit(.minutes(1))) func slotGateOfOneSlotWakesTheFeederEveryTime() {
        let gate = SlotGate(slots: 1, wakeBatch: 1)
        let pool = WorkerPool(threads: 2, name: "test.one")
        let order = Mutex<[Int]>([])
        for i in 0..<5_000 {
            gate.wait()
            pool.submit {
                order.withLock { $0.append(i) }
                gate.signal()
            }
        }
        pool.waitUntilIdle()
        #expect(order.withLock { $0 } == Array(0..<5_000))
    }

    /// Bursts of submits to sleeping workers (each burst wakes each sleeper
    /// at most once) still run every item exactly once.
    @Test(.timeLimit(.minutes(1))) func workerPoolRunsEveryItemOfEveryBurst() {
        let pool = WorkerPool(threads: 3, name: "test.burst")
        let ran = Atomic<Int>(0)
        for burst in 0..<2_000 {
            for _ in 0..<(burst % 7) { pool.submit { ran.wrappingAdd(1, ordering: .relaxed) } }
            if burst % 50 == 0 { pool.waitUntilIdle() }  // let the workers fall asleep again
        }
        pool.waitUntilIdle()
        #expect(ran.load(ordering: .relaxed) == (0..<2_000).reduce(0) { $0 + $1 % 7 })
    }
}
