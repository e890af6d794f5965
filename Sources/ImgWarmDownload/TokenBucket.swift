/// A token bucket: `rate` tokens a second, at most `burst` saved up. The
/// request rate (`--rate`, one token a request) and the bandwidth cap
/// (`--limit-rate`, one token a byte) are both one. The burst is a tenth of
/// a second's worth (`burstSeconds`), so the longest stretch above the rate
/// is that tenth: a 20-second run holds the rate within 0.5% plus what one
/// chunk adds. Times are seconds on any monotonic clock; pure.
struct TokenBucket: Equatable, Sendable {
    static let burstSeconds = 0.1

    private(set) var rate: Double
    private(set) var burst: Double
    private(set) var tokens: Double
    private var last: Double

    /// Starts full: the first tenth of a second may go at once.
    init(rate: Double, now: Double, minimumBurst: Double = 1) {
        self.rate = rate
        burst = max(minimumBurst, rate * Self.burstSeconds)
        tokens = burst
        last = now
    }

    private mutating func refill(_ now: Double) {
        if now > last {
            tokens = min(burst, tokens + (now - last) * rate)
            last = now
        }
    }

    /// A new rate from now on; tokens already saved stay (capped by the
    /// new burst), so a lowered rate does not forgive a debt.
    mutating func setRate(_ newRate: Double, now: Double, minimumBurst: Double = 1) {
        refill(now)
        rate = newRate
        burst = max(minimumBurst, newRate * Self.burstSeconds)
        tokens = min(tokens, burst)
    }

    /// Takes `count` tokens if there are that many: nil. Else the seconds
    /// until there will be, and nothing is taken.
    mutating func take(_ count: Double = 1, now: Double) -> Double? {
        refill(now)
        if tokens >= count {
            tokens -= count
            return nil
        }
        return (count - tokens) / rate
    }

    /// Spends `count` tokens even into debt (bytes already received cannot
    /// be refused: curl has them). Returns whether anything was left before.
    @discardableResult
    mutating func spend(_ count: Double, now: Double) -> Bool {
        refill(now)
        let had = tokens > 0
        tokens -= count
        return had
    }

    /// Seconds until the bucket holds a positive amount again; 0 when it does.
    mutating func secondsUntilPositive(now: Double) -> Double {
        refill(now)
        return tokens > 0 ? 0 : (-tokens) / rate + 1e-6
    }
}
