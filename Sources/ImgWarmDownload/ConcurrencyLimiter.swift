/// The adaptive limit of one host on one engine thread (`-j auto`): how
/// many requests to that host may be in flight. A latency-based limiter in
/// the manner of TCP Vegas, with a gradient decrease (Netflix
/// concurrency-limits' Gradient2): requests are grouped in rounds of about
/// `limit` completions (one round trip's worth); at the end of a round its
/// mean latency is compared with the host's no-load latency (`baseline`,
/// the lowest round mean seen):
///
/// - slow start: every response within `tolerance x baseline + slack`,
///   in a round that has had at least half its limit in flight, opens more
///   slots at once (`slowStartGrows`, `slowStartStep`): one on a near
///   origin, so the limit doubles per round trip as in TCP's slow start,
///   and one per `rampLatency` of the origin's latency on a far one, so
///   the ramp costs about one round trip wherever the origin is, without
///   waiting for the round's slowest response (with a long-tailed origin
///   the end of a round of 128 is its 99th percentile);
/// - after slow start, a round whose mean is within that bound and that
///   used at least half the limit grows it by sqrt(limit) (a queue's worth
///   of probing);
/// - mean above it: shrink in proportion (`limit x acceptable / mean`, at
///   most by a quarter a round, never below `initial` on latency alone)
///   and end slow start. Our own thread's stalls on a loaded machine read
///   as latency too: latency alone never takes a host below today's
///   `-j 16`, only the origin's explicit signals do;
/// - a 429 or 503 halves the limit, a timeout or reset takes a quarter off;
///   at most once per round, since every request already in flight when
///   the first answer came may answer the same.
///
/// The latency is the time from the request sent to its first byte
/// (CURLINFO_STARTTRANSFER - PRETRANSFER): server time plus network plus
/// queueing, without connection set-up or body size. Pure: the caller
/// passes samples and gets the changes. docs/download-engine.md explains
/// the parameters.
struct ConcurrencyLimiter: Equatable, Sendable {
    struct Parameters: Equatable, Sendable {
        /// Where a host starts (per engine thread): today's `-j 16` split.
        var initial: Double = 8
        var minimum: Double = 1
        var maximum: Double = 128
        /// How much the round mean may exceed the no-load latency before
        /// the limit shrinks: 2 = twice (1.5, Gradient2's default, read a
        /// loaded client's scheduling stalls as queueing and collapsed).
        var tolerance: Double = 2
        /// The most a round's latency may shrink the limit by.
        var latencyBackoff: Double = 0.75
        /// Seconds added to the acceptable latency, so that the jitter of a
        /// sub-millisecond (loopback, LAN) origin is not read as queueing.
        var slack: Double = 0.005
        /// Factor after a 429 or 503.
        var throttleBackoff: Double = 0.5
        /// Factor after a timeout or a reset.
        var failureBackoff: Double = 0.75
        /// Fewest completions in a round (the mean of fewer is noise).
        var minimumRound: Int = 4
        /// Seconds of the origin's latency per slot a slow-start response
        /// opens (at least one). Doubling per round trip takes four round
        /// trips from 8 to 128: 160 ms of a 40 ms origin, a sixth of a
        /// 4,000-URL run, and 0.8 s of a 200 ms one, while a loopback
        /// origin's four take a millisecond. At 2.5 ms a 40 ms origin's
        /// first 8 answers open 16 each: 128 after one round trip.
        var rampLatency: Double = 0.0025
    }

    enum Reason: String, Sendable {
        case slowStart = "slow start"
        case latencyHeld = "latency held"
        case latencyRose = "latency rose"
        case throttled = "429/503"
        case failed = "timeouts/resets"
    }

    struct Change: Equatable, Sendable {
        let from: Int
        let to: Int
        let reason: Reason
    }

    let parameters: Parameters
    private(set) var limit: Double
    private(set) var slowStart = true
    /// Seconds: the lowest round mean latency seen (no-load latency).
    private(set) var baseline: Double?
    private var roundCount = 0
    /// Completions that make up the current round: the limit when it began
    /// (slow start raises the limit within a round).
    private var roundLength: Int
    /// The whole limit when the current round began.
    private var roundLimit: Int
    private var roundSum = 0.0
    /// The most requests in flight seen during the round: a round that
    /// never came near its limit says nothing about a larger one.
    private var roundPeak = 0
    private var round: UInt64 = 0
    private var lastDecreaseRound: UInt64?

    init(_ parameters: Parameters) {
        self.parameters = parameters
        limit = min(max(parameters.initial, parameters.minimum), parameters.maximum)
        roundLength = max(parameters.minimumRound, max(1, Int(limit)))
        roundLimit = max(1, Int(limit))
    }

    /// Slow start's decision for one response: whether it opens one more
    /// slot. `reference`: the host's baseline, or before the first round
    /// ended the mean of the responses so far (the first answers are the
    /// probe of the origin's no-load latency). `peakInFlight`: the most in
    /// flight this round, not now: answers that arrive together are
    /// collected one by one before new requests start, so the count now
    /// falls with each of them. Pure.
    static func slowStartGrows(latency: Double, reference: Double, peakInFlight: Int, limit: Int,
                               _ parameters: Parameters) -> Bool {
        latency <= reference * parameters.tolerance + parameters.slack && peakInFlight * 2 >= limit
    }

    /// How many slots one slow-start response opens: one per `rampLatency`
    /// of `reference` (the baseline, or the answers so far), at least one.
    /// The reference, not the response's own latency, so that queueing on
    /// our side never speeds the ramp up. Pure.
    static func slowStartStep(reference: Double, _ parameters: Parameters) -> Double {
        guard parameters.rampLatency > 0, reference.isFinite else { return 1 }
        return max(1, (reference / parameters.rampLatency).rounded(.down))
    }

    /// The whole number of requests allowed in flight.
    var current: Int { max(1, Int(limit)) }

    /// One completed request's latency (seconds), with `inFlight` requests
    /// to the host in flight when it ended (itself included). Returns the
    /// change when the round ended with one.
    mutating func sample(latency: Double, inFlight: Int) -> Change? {
        roundCount += 1
        roundSum += latency
        roundPeak = max(roundPeak, inFlight)
        var grown: Change?
        let reference = baseline ?? roundSum / Double(roundCount)
        // The use is judged against the limit the round began with: a far
        // origin's first answer may open 16 slots, and the rest of the
        // answers that arrive with it saw only the round's own requests.
        if slowStart, Self.slowStartGrows(latency: latency, reference: reference,
                                          peakInFlight: roundPeak, limit: roundLimit, parameters) {
            grown = set(limit + Self.slowStartStep(reference: reference, parameters), .slowStart)
        }
        guard roundCount >= roundLength else { return grown }
        let mean = roundSum / Double(roundCount)
        let used = roundPeak * 2 >= current
        roundCount = 0
        roundSum = 0
        roundPeak = 0
        round += 1
        let base = min(baseline ?? mean, mean)
        baseline = base
        let acceptable = base * parameters.tolerance + parameters.slack
        defer {
            roundLength = max(parameters.minimumRound, current)
            roundLimit = current
        }
        if mean <= acceptable {
            // Slow start grew per response.
            guard used, !slowStart else { return grown }
            return set(limit + max(1, limit.squareRoot()), .latencyHeld)
        }
        slowStart = false
        lastDecreaseRound = round
        let floor = min(limit, parameters.initial)
        return set(max(floor, limit * max(parameters.latencyBackoff, acceptable / mean)), .latencyRose)
    }

    /// A 429/503 (`.throttled`) or a timeout/reset (`.failed`).
    mutating func congestion(_ reason: Reason) -> Change? {
        if let lastDecreaseRound, lastDecreaseRound == round { return nil }
        lastDecreaseRound = round
        slowStart = false
        let factor = reason == .throttled ? parameters.throttleBackoff : parameters.failureBackoff
        let change = set(limit * factor, reason)
        // A round is about one round trip at the limit: a cut shortens it.
        roundLength = min(roundLength, max(parameters.minimumRound, current))
        return change
    }

    private mutating func set(_ value: Double, _ reason: Reason) -> Change? {
        let before = current
        limit = min(max(value, parameters.minimum), parameters.maximum)
        let after = current
        return before == after ? nil : Change(from: before, to: after, reason: reason)
    }
}
