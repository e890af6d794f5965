import Foundation

/// What a host's 429 and 503 answers did to its request rate: the rate it
/// was cut to, and how it climbs back. Pure; `HostTraffic` keeps one per
/// host behind its lock.
///
/// A cut sets the rate to `cutFactor` x the host's successful responses
/// of the last second (what the origin let through is the best estimate
/// of what it allows; over the run's first second, per time run so far,
/// at least `minimumWindow`); never above the rate in force. With no
/// success in that second there is no estimate and no cut (the adaptive
/// limit still halves, and the answered request waits for its retry).
/// The rate then climbs back by `recoveryPerSecond` a second, compounded,
/// so the next probe above the origin's limit comes about five seconds
/// later and costs a few 429s, not a burst; after `quietSeconds` without
/// a cut it doubles each second, so a cut that was a mistake (an early
/// estimate from a few responses, one URL's 503) is undone in seconds.
/// Only a request started after the last cut can cut again: those in
/// flight at the cut answer the old rate.
struct HostThrottle: Equatable, Sendable {
    static let cutFactor = 0.8
    static let recoveryPerSecond = 0.05
    static let quietSeconds = 5.0
    static let minimumRate = 0.5
    static let minimumWindow = 0.25
    /// Successes and starts are counted in `slots` slots of `slotSeconds`.
    static let slots = 10
    static let slotSeconds = 0.1

    private(set) var cutRate: Double?
    private(set) var cutAt = -Double.infinity
    private(set) var lowestRate: Double?
    private(set) var cuts = 0
    private var successes = SlidingCount()
    private var firstStart: Double?

    /// The rate in force at `now` because of throttling; nil when never throttled.
    func rate(now: Double) -> Double? {
        guard let cutRate else { return nil }
        let t = max(0, now - cutAt)
        return cutRate * pow(1 + Self.recoveryPerSecond, min(t, Self.quietSeconds)) * pow(2, max(0, t - Self.quietSeconds))
    }

    mutating func started(now: Double) {
        if firstStart == nil { firstStart = now }
    }

    mutating func succeeded(now: Double) { successes.add(now: now) }

    /// A 429/503 to a request started at `startedAt`; `current` is the rate
    /// in force (user's or throttled), if any. Returns the new rate when
    /// this answer cut it.
    mutating func throttled(now: Double, startedAt: Double, current: Double?) -> Double? {
        guard startedAt > cutAt else { return nil }
        let window = min(Self.slotSeconds * Double(Self.slots), max(Self.minimumWindow, now - (firstStart ?? now)))
        let ok = Double(successes.total(now: now)) / window
        guard ok > 0 else { return nil }
        var next = ok * Self.cutFactor
        if let current { next = min(next, current) }
        next = max(Self.minimumRate, next)
        cutRate = next
        cutAt = now
        cuts += 1
        lowestRate = min(lowestRate ?? next, next)
        return next
    }
}

/// Events in the last second, in tenths of a second (a ring of counters).
struct SlidingCount: Equatable, Sendable {
    private var counts = [Int](repeating: 0, count: HostThrottle.slots)
    private var newestSlot: Int64 = 0

    private mutating func advance(to slot: Int64) {
        guard slot > newestSlot else { return }
        let steps = min(Int64(counts.count), slot - newestSlot)
        for s in 1...steps {
            counts[Int((newestSlot + s) % Int64(counts.count))] = 0
        }
        newestSlot = slot
    }

    private static func slot(_ now: Double) -> Int64 { Int64((now / HostThrottle.slotSeconds).rounded(.down)) }

    mutating func add(now: Double) {
        let slot = Self.slot(now)
        advance(to: slot)
        counts[Int(slot % Int64(counts.count))] += 1
    }

    mutating func total(now: Double) -> Int {
        advance(to: Self.slot(now))
        return counts.reduce(0, +)
    }
}
