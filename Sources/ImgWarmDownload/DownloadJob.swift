/// One transfer's worth of work: a URL (with its validators) and every caller
/// waiting for it. Identical requests share one job (coalescing). Owned by the
/// engine thread only.
final class DownloadJob {
    typealias Completion = @Sendable (DownloadResult) -> Void

    enum State { case queued, waitingRetry, inFlight }

    let key: String
    let url: String
    let validators: HTTPValidators?
    let hostKey: HostKey
    var priority: RequestPriority
    /// Arrival number; the queue orders by it within a priority.
    var arrival: UInt64
    /// Identifies the queue entry that is current for this job; entries with
    /// another token are stale (lazy deletion from the heaps).
    var queueToken: UInt64 = 0
    var state: State = .queued
    var callers: [Completion] = []
    /// Attempts started so far.
    var attempts = 0
    /// Monotonic nanoseconds when the first attempt started.
    var firstStart: UInt64?

    /// `hostKey`: the request's host key (`DownloadRequest.hostKey`, or
    /// parsed from its URL), interned.
    init(key: String, request: DownloadRequest, arrival: UInt64, hostKey: HostKey) {
        self.key = key
        self.url = request.url
        self.validators = request.validators.flatMap { $0.isEmpty ? nil : $0 }
        self.hostKey = hostKey
        self.priority = request.priority
        self.arrival = arrival
    }

    /// Requests that must share a transfer: same URL and same validators (a
    /// conditional request may answer 304 with no body, which a plain caller
    /// cannot use).
    static func coalescingKey(_ request: DownloadRequest) -> String {
        guard let v = request.validators, !v.isEmpty else { return request.url }
        return request.url + "\u{0}" + (v.etag ?? "") + "\u{0}" + (v.lastModified ?? "")
    }
}

/// The jobs not yet completed, by coalescing key.
struct JobTable {
    private var jobs: [String: DownloadJob] = [:]

    var count: Int { jobs.count }

    subscript(key: String) -> DownloadJob? { jobs[key] }

    mutating func insert(_ job: DownloadJob) { jobs[job.key] = job }

    /// One hash of the URL, not two (look up, then remove).
    mutating func remove(_ job: DownloadJob) {
        if let i = jobs.index(forKey: job.key), jobs.values[i] === job { jobs.remove(at: i) }
    }

    /// Empties the table, returning what it held.
    mutating func removeAll() -> [DownloadJob] {
        let all = Array(jobs.values)
        jobs = [:]
        return all
    }
}
