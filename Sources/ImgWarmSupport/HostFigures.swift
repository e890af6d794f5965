// Counted by Download, rendered by Report: in the layer both import.

/// One host's traffic over a run (JSON report, metrics, summary).
public struct HostFigures: Sendable, Equatable {
    package init(host: String, requests: Int, throttledResponses: Int, rateCuts: Int, configuredRate: Double? = nil, throttledRate: Double? = nil, lowestRate: Double? = nil, concurrencyLimit: Int? = nil, peakConcurrencyLimit: Int? = nil, peakInFlight: Int) {
        self.host = host
        self.requests = requests
        self.throttledResponses = throttledResponses
        self.rateCuts = rateCuts
        self.configuredRate = configuredRate
        self.throttledRate = throttledRate
        self.lowestRate = lowestRate
        self.concurrencyLimit = concurrencyLimit
        self.peakConcurrencyLimit = peakConcurrencyLimit
        self.peakInFlight = peakInFlight
    }

    /// `scheme://host:port`.
    public var host: String
    /// Attempts started.
    public var requests: Int
    /// Answers 429 or 503.
    public var throttledResponses: Int
    /// Times those answers lowered the host's rate.
    public var rateCuts: Int
    /// `--rate` for the host, requests a second.
    public var configuredRate: Double?
    /// The rate in force at the end because of 429/503 (nil: never throttled).
    public var throttledRate: Double?
    /// The lowest rate a 429/503 set.
    public var lowestRate: Double?
    /// `-j auto`: the adaptive limit at the end and at its highest (all threads).
    public var concurrencyLimit: Int?
    public var peakConcurrencyLimit: Int?
    /// The most requests in flight to the host at once.
    public var peakInFlight: Int

    public var wasThrottled: Bool { throttledResponses > 0 }
}
