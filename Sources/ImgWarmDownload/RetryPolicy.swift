import CCurl
import Foundation

/// When to try a transient failure again: exponential backoff with jitter,
/// or the server's Retry-After, never longer than the configured cap.
struct RetryPolicy {
    let maxRetries: Int
    let backoffBase: Double
    let maxDelay: Double
    /// A uniform number in 0..<1 (injectable so tests can pin the jitter).
    var random: () -> Double = { Double.random(in: 0..<1) }

    init(configuration: DownloaderConfiguration) {
        maxRetries = configuration.retries
        backoffBase = configuration.backoffBase
        maxDelay = configuration.maxRetryDelay
    }

    /// Whether a job that failed transiently after `attempts` attempts gets
    /// another one.
    func allowsRetry(afterAttempts attempts: Int) -> Bool {
        attempts <= maxRetries
    }

    /// Seconds to wait after attempt number `attempt` (1-based) failed.
    /// Retry-After wins over backoff, clamped to the cap: the server knows
    /// better than our formula, but a run must not stall on a huge value.
    /// Backoff uses "equal jitter": half the exponential delay fixed, half
    /// random, so synchronized failures spread out but never retry at once.
    func delay(afterAttempt attempt: Int, retryAfter: Double?) -> Double {
        if let retryAfter {
            return min(max(retryAfter, 0), maxDelay)
        }
        let exponent = Double(max(attempt - 1, 0))
        let raw = min(backoffBase * pow(2, min(exponent, 62)), maxDelay)
        return raw / 2 + random() * raw / 2
    }

    /// Retry-After as seconds from now: delta-seconds or an HTTP date
    /// (parsed by curl_getdate, which knows all three RFC 9110 formats).
    static func parseRetryAfter(_ value: String, now: time_t = time(nil)) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return Double(text)
        }
        let date = curl_getdate(text, nil)
        guard date != -1 else { return nil }
        return max(0, Double(date - now))
    }
}
