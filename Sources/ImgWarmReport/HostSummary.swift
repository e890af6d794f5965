import Foundation
import ImgWarmSupport

/// The per-host lines of the end-of-run summary, and the progress line's
/// request figures.
public enum HostSummary {
    /// One line per host that answered 429 or 503:
    /// `throttled: https://cdn.example:443: 37 answers 429/503, rate 180/s (lowest 150/s), 12 in flight`.
    public static func throttledLines(_ hosts: [HostFigures]) -> [String] {
        hosts.filter(\.wasThrottled).map { h in
            var line = "throttled: \(h.host): \(h.throttledResponses) answer\(h.throttledResponses == 1 ? "" : "s") 429/503"
            if let rate = h.throttledRate {
                line += ", rate \(rateText(rate))"
                if let lowest = h.lowestRate, lowest < rate * 0.99 { line += " (lowest \(rateText(lowest)))" }
            }
            if let limit = h.concurrencyLimit { line += ", \(limit) in flight" }
            return line
        }
    }

    static func rateText(_ r: Double) -> String {
        r >= 10 ? String(format: "%.0f/s", r) : String(format: "%.2f/s", r)
    }
}

/// Requests a second for the progress line, from the engine's count of
/// started requests, over the last second or more (a 0.2 s bar tick alone
/// would flicker).
public final class RequestRateMeter: @unchecked Sendable {  // state behind `lock`
    private let lock = NSLock()
    private var last: (time: Double, started: Int)?
    private var rate = 0.0

    /// Counts from now (the run's start).
    public init() { last = (Self.seconds(), 0) }

    private static func seconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// `48 in flight, 812 req/s`.
    public func text(_ gauge: (inFlight: Int, started: Int)) -> String {
        let now = Self.seconds()
        lock.lock()
        defer { lock.unlock() }
        if let last {
            if now - last.time >= 1 {
                rate = Double(gauge.started - last.started) / (now - last.time)
                self.last = (now, gauge.started)
            }
        } else {
            last = (now, gauge.started)
        }
        return "\(gauge.inFlight) in flight, \(String(format: "%.0f", rate)) req/s"
    }
}
