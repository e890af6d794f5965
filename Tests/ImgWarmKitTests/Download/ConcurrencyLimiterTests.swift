import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The scheduler's pure decisions: the adaptive limit, token buckets, the
/// rate a 429 leaves, `--rate` syntax, and each host's cap.
@Suite("Scheduler limits")
struct ConcurrencyLimiterTests {
    // MARK: adaptive limit

    /// Feeds `rounds` full rounds of samples of `latency` seconds with the
    /// limit in use; returns the limit after each round.
    private func run(_ limiter: inout ConcurrencyLimiter, latency: Double, rounds: Int, inUse: Bool = true) -> [Int] {
        var limits: [Int] = []
        for _ in 0..<rounds {
            let n = max(limiter.parameters.minimumRound, limiter.current)
            for _ in 0..<n { _ = limiter.sample(latency: latency, inFlight: inUse ? limiter.current : 1) }
            limits.append(limiter.current)
        }
        return limits
    }

    /// A near origin (2 ms: under one `rampLatency`): one slot per answer,
    /// the limit doubles per round trip.
    @Test func slowStartDoublesWhileLatencyHolds() {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 128))
        #expect(run(&l, latency: 0.002, rounds: 6) == [16, 32, 64, 128, 128, 128])
        #expect(l.slowStart)
    }

    /// The ramp in round trips by the origin's latency: doubling costs a
    /// far origin four of its long round trips; one slot per 2.5 ms of
    /// latency brings a 40 ms origin to 128 in one.
    @Test(arguments: [
        (0.0003, [16, 32, 64, 128]),    // loopback: doubling, as before
        (0.002, [16, 32, 64, 128]),     // LAN
        (0.010, [40, 128, 128, 128]),   // 4 slots per answer: x5 a round trip
        (0.040, [128, 128, 128, 128]),  // 16 per answer: one round trip
        (0.200, [128, 128, 128, 128]),
    ])
    func theRampTakesAboutOneRoundTripOnAFarOrigin(_ row: (Double, [Int])) {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 128))
        #expect(run(&l, latency: row.0, rounds: 4) == row.1)
        #expect(l.slowStart)
    }

    /// Slots per slow-start answer (rampLatency 2.5 ms). From the
    /// reference, not the answer: queueing on our side never speeds it up.
    @Test(arguments: [
        (0.0001, 1.0), (0.0049, 1.0), (0.005, 2.0), (0.040, 16.0), (0.0399, 15.0), (Double.infinity, 1.0),
    ])
    func slowStartStepGrowsWithTheOriginsLatency(_ row: (Double, Double)) {
        #expect(ConcurrencyLimiter.slowStartStep(reference: row.0, .init()) == row.1)
    }

    /// A far origin's first answers arrive together: the first opens 16
    /// slots, and the seven after it, which saw only the round's own 8 in
    /// flight, still count as use of the round's limit.
    @Test func aFarOriginsFirstAnswersAllOpenSlots() {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 256))
        for left in stride(from: 8, through: 1, by: -1) { _ = l.sample(latency: 0.040, inFlight: left) }
        #expect(l.current == 8 + 8 * 16)
    }

    /// Queueing in a far origin's ramp: the burst's answers come back slow,
    /// open nothing, and the round's mean ends slow start.
    @Test func aRampThatOvershootsShrinksOnTheNextRound() {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 128))
        #expect(run(&l, latency: 0.040, rounds: 1) == [128])
        let after = run(&l, latency: 0.400, rounds: 1)
        #expect(after == [96])
        #expect(!l.slowStart)
    }

    /// Slow start's per-response decision (tolerance 2, slack 5 ms).
    @Test(arguments: [
        // latency, reference, most in flight this round, limit, grows
        (0.040, 0.040, 8, 8, true),     // at the baseline, limit in use
        (0.085, 0.040, 8, 8, true),     // 2 x 40 ms + 5 ms: the edge still holds
        (0.086, 0.040, 8, 8, false),    // past it: queueing, no slot
        (0.040, 0.040, 4, 8, true),     // half the limit in flight is use
        (0.040, 0.040, 3, 8, false),    // less says nothing about a larger limit
        (0.0049, 0.0001, 16, 16, true), // loopback: jitter under the slack
        (0.400, 0.040, 128, 128, false),// a tail response opens nothing
    ])
    func slowStartGrowsPerResponse(_ row: (Double, Double, Int, Int, Bool)) {
        let (latency, reference, peak, limit, grows) = row
        #expect(ConcurrencyLimiter.slowStartGrows(latency: latency, reference: reference, peakInFlight: peak,
                                                  limit: limit, .init()) == grows)
    }

    /// Answers that arrive together are collected one by one before new
    /// requests start: each still opens its slot, though the count in
    /// flight falls with each of them.
    @Test func answersCollectedTogetherEachOpenASlot() {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 128))
        for left in stride(from: 8, through: 1, by: -1) { _ = l.sample(latency: 0.002, inFlight: left) }
        #expect(l.current == 16)
    }

    /// Each response opens its slot at once: the limit does not wait for
    /// the round's slowest answer.
    @Test func slowStartOpensASlotPerResponseWithoutWaitingForTheRound() {
        // One slot per answer whatever the latency (rampLatency 0), so
        // that each answer's own effect shows.
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 128, rampLatency: 0))
        var limits: [Int] = []
        for _ in 0..<7 {
            _ = l.sample(latency: 0.040, inFlight: 8)
            limits.append(l.current)
        }
        #expect(limits == [9, 10, 11, 12, 13, 14, 15])
        // The round's eighth answer is a 400 ms straggler: no slot for it,
        // and the round's mean (85 ms) is within 2 x its own baseline.
        let change = l.sample(latency: 0.400, inFlight: 8)
        #expect(change == nil)
        #expect(l.current == 15)
        #expect(l.slowStart)
        // The next round (15 answers) is compared with that baseline.
        for _ in 0..<15 { _ = l.sample(latency: 0.040, inFlight: 15) }
        #expect(l.current == 30)
    }

    @Test func risingLatencyShrinksInProportionAndEndsSlowStart() {
        var l = ConcurrencyLimiter(.init(initial: 64, maximum: 128))
        _ = run(&l, latency: 0.040, rounds: 1)  // baseline 40 ms, limit 128
        #expect(l.current == 128)
        // Acceptable: 40 ms x 2 + 5 ms = 85 ms; a round at 100 ms: x 0.85.
        _ = run(&l, latency: 0.100, rounds: 1)
        #expect(l.current == 108)
        #expect(!l.slowStart)
        // Never more than a quarter off a round by latency alone ...
        _ = run(&l, latency: 1.0, rounds: 1)
        #expect(l.current == 81)
        // ... and never below the initial limit.
        _ = run(&l, latency: 1.0, rounds: 1)
        #expect(l.current == 64)
        // Back at the baseline: grows by sqrt(limit) per round, not doubling.
        #expect(run(&l, latency: 0.040, rounds: 2) == [72, 80])
    }

    @Test func anUnusedLimitDoesNotGrow() {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 128))
        #expect(run(&l, latency: 0.040, rounds: 3, inUse: false) == [8, 8, 8])
    }

    @Test func throttlingHalvesOncePerRound() {
        var l = ConcurrencyLimiter(.init(initial: 64, maximum: 128))
        let r1 = l.congestion(.throttled)
        #expect(r1 == .init(from: 64, to: 32, reason: .throttled))
        // The other answers of the same round change nothing more.
        let r2 = l.congestion(.throttled)
        #expect(r2 == nil)
        let r3 = l.congestion(.failed)
        #expect(r3 == nil)
        // A round later a timeout or reset may take a quarter off.
        _ = run(&l, latency: 0.040, rounds: 1)
        let before = l.limit
        let r4 = l.congestion(.failed)
        #expect(r4 == .init(from: Int(before), to: Int(before * 0.75), reason: .failed))
    }

    @Test func limitsStayWithinMinimumAndMaximum() {
        var l = ConcurrencyLimiter(.init(initial: 2, minimum: 1, maximum: 4))
        _ = l.congestion(.throttled)
        _ = run(&l, latency: 0.010, rounds: 1)
        _ = l.congestion(.throttled)
        #expect(l.current == 1)
        var m = ConcurrencyLimiter(.init(initial: 2, minimum: 1, maximum: 4))
        #expect(run(&m, latency: 0.010, rounds: 4).last == 4)
    }

    /// Loopback jitter (0.2 ms baseline, 3 ms rounds) is under the slack:
    /// no shrinking on noise.
    @Test func subMillisecondJitterIsNotQueueing() {
        var l = ConcurrencyLimiter(.init(initial: 8, maximum: 64))
        _ = run(&l, latency: 0.0002, rounds: 1)
        #expect(run(&l, latency: 0.003, rounds: 2) == [32, 64])
    }

    // MARK: token bucket

    @Test func bucketHoldsItsRateAfterATenthOfASecondsBurst() {
        // 50/s: a burst of 5, then one token each 20 ms.
        var b = TokenBucket(rate: 50, now: 0)
        var taken = 0
        var t = 0.0
        while t < 20 {
            // (A wait below the clock's resolution at t would never move t.)
            if let wait = b.take(now: t) { t += max(wait, 1e-9) } else { taken += 1 }
        }
        // 20 s x 50/s + the burst of 5 (and the one due at t = 20).
        #expect(abs(taken - 1005) <= 1, "\(taken)")
    }

    @Test func byteBucketGoesIntoDebtAndPausesUntilRepaid() {
        var b = TokenBucket(rate: 1_000_000, now: 0)  // burst 100 kB
        let had = b.spend(300_000, now: 0)
        #expect(had)
        let wait = b.secondsUntilPositive(now: 0)
        #expect(abs(wait - 0.2) < 0.001)
        let later = b.secondsUntilPositive(now: 0.25)
        #expect(later == 0)
        // A lowered rate keeps the debt.
        var c = TokenBucket(rate: 100, now: 0)
        _ = c.spend(110, now: 0)
        c.setRate(10, now: 0)
        let debt = c.secondsUntilPositive(now: 0)
        #expect(abs(debt - 10) < 0.01)
    }

    // MARK: throttling

    @Test func aThrottleCutsToWhatTheOriginLetThroughAndClimbsBack() {
        var t = HostThrottle()
        // One second at 300 starts/s, 200 of them answered 2xx.
        for i in 0..<300 { t.started(now: Double(i) / 300) }
        for i in 0..<200 { t.succeeded(now: Double(i) / 200) }
        let cut = t.throttled(now: 0.999, startedAt: 0.99, current: nil)
        #expect(cut.map { abs($0 - 160) < 1 } == true, "\(String(describing: cut))")
        // In flight before the cut: no second cut.
        let r5 = t.throttled(now: 1.01, startedAt: 0.995, current: 160)
        #expect(r5 == nil)
        // 5% a second back up, compounded: 4 s later 1.2155 x; after 5
        // quiet seconds it doubles a second: 7 s later 1.05^5 x 4.
        #expect(t.rate(now: 4.999).map { abs($0 - 160.16 * 1.215506) < 0.5 } == true)
        #expect(t.rate(now: 7.999).map { abs($0 - 160.16 * 1.276282 * 4) < 1 } == true)
        #expect(t.cuts == 1)
    }

    @Test func aThrottleWithoutAnySuccessSetsNoRate() {
        // No success in the last second: no estimate of what the origin
        // allows (one URL's 503 at the start must not cripple the run).
        var t = HostThrottle()
        for i in 0..<100 { t.started(now: Double(i) / 100) }
        let r6 = t.throttled(now: 0.999, startedAt: 0.99, current: nil)
        #expect(r6 == nil)
        #expect(t.rate(now: 1) == nil)
        // Never above the rate in force, never below the floor.
        var u = HostThrottle()
        u.started(now: 0)
        u.succeeded(now: 4.5)
        let r7 = u.throttled(now: 5, startedAt: 4, current: 0.1)
        #expect(r7 == HostThrottle.minimumRate)
        var v = HostThrottle()
        v.started(now: 0)
        for i in 0..<50 { v.succeeded(now: 4 + Double(i) / 100) }
        let r8 = v.throttled(now: 4.5, startedAt: 4.4, current: 20)
        #expect(r8 == 20)
    }

    // MARK: --rate

    @Test func rateSyntax() throws {
        var r = RequestRates()
        try r.add("50/s")
        try r.add("CDN.example.com=20/s")
        try r.add("slow.example=120/min")
        #expect(r.rate(forHostKey: "https://cdn.example.com:443") == 20)
        #expect(r.rate(forHostKey: "http://slow.example:8080") == 2)
        #expect(r.rate(forHostKey: "https://other.example:443") == 50)
        #expect(RequestRates.hostName(ofKey: "https://[::1]:8443") == "[::1]")
        for bad in ["", "fast", "0/s", "-3/s", "=5/s", "x=y", "5/fortnight"] {
            var s = RequestRates()
            #expect(throws: ImgWarmError.self, "\(bad)") { try s.add(bad) }
        }
    }

    // MARK: host caps

    @Test func hostCapIsTheSmallestOfLimitPerHostAndHTTP1Connections() {
        var adaptive = ConcurrencyLimiter.Parameters()
        adaptive.initial = 8
        adaptive.maximum = 128
        let keys = HostKeys()
        let httpsA = keys.intern("https://a:443"), httpA = keys.intern("http://a:80"), httpsB = keys.intern("https://b:443")
        var slots = HostSlots(perHost: nil, connections: 3, adaptive: adaptive)
        // https: HTTP/2 until a response says otherwise.
        #expect(slots.cap(httpsA) == 8)
        // plain http is HTTP/1.1 from the start: the connection share.
        #expect(slots.cap(httpA) == 3)
        slots.started(httpsA)
        _ = slots.ended(httpsA, latency: 0.01, congestion: nil, http1: true)
        #expect(slots.cap(httpsA) == 3)
        // Another host's key (a higher id) starts with its own figures.
        #expect(slots.cap(httpsB) == 8)
        #expect(slots.inFlight(httpsB) == 0)
        let fixed = HostSlots(perHost: 2, connections: 6, adaptive: nil)
        #expect(fixed.cap(httpsB) == 2)
        #expect(HostSlots(perHost: nil, connections: 6, adaptive: nil).cap(httpsB) == Int.max)
        // The same text is the same key; another text another.
        #expect(keys.intern("https://a:443") == httpsA)
        #expect(keys.intern("https://a:443").id == httpsA.id)
        #expect(httpsA != httpA && httpA != httpsB)
    }
}
