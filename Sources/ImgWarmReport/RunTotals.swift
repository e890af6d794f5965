import ImgWarmSupport
/// A run's totals so far, as the progress line, the summary and the
/// reports show them.
public struct RunSnapshot: Sendable {
    public var counts: [Outcome: Int]
    public var errors: [EntryError: Int]
    public var bytesDownloaded: UInt64
    public var bytesTotal: UInt64
    public var total: Int
    public var elapsed: Double
    public init(counts: [Outcome: Int], errors: [EntryError: Int], bytesDownloaded: UInt64, bytesTotal: UInt64,
                total: Int, elapsed: Double) {
        self.counts = counts
        self.errors = errors
        self.bytesDownloaded = bytesDownloaded
        self.bytesTotal = bytesTotal
        self.total = total
        self.elapsed = elapsed
    }
    public var done: Int { counts.filter { $0.key != .pending }.values.reduce(0, +) }
    public subscript(_ o: Outcome) -> Int { counts[o] ?? 0 }
}

/// What counts a run's entries (Warm's RunLedger): the progress printer and
/// the reports read its totals through this.
public protocol RunTotals: AnyObject, Sendable {
    func snapshot() -> RunSnapshot
}
