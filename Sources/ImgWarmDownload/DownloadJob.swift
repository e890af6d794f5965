/// One transfer's worth of work: a URL (with its validators) and every caller
/// waiting for it. Identical requests share one job (coalescing). Owned by the
/// engine thread only.
final class DownloadJob {
    typealias Completion = @Sendable (DownloadResult) -> Void

    enum State { case queued, waitingRetry, inFlight }

    /// The coalescing key, with its hash.
    let tableKey: JobKey
    var key: String { tableKey.text }
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
    init(tableKey: JobKey, request: DownloadRequest, arrival: UInt64, hostKey: HostKey) {
        self.tableKey = tableKey
        self.url = request.url
        self.validators = request.validators.flatMap { $0.isEmpty ? nil : $0 }
        self.hostKey = hostKey
        self.priority = request.priority
        self.arrival = arrival
    }

    convenience init(key: String, request: DownloadRequest, arrival: UInt64, hostKey: HostKey) {
        self.init(tableKey: JobKey(key), request: request, arrival: arrival, hostKey: hostKey)
    }

    /// Requests that must share a transfer: same URL and same validators (a
    /// conditional request may answer 304 with no body, which a plain caller
    /// cannot use).
    static func coalescingKey(_ request: DownloadRequest) -> String {
        guard let v = request.validators, !v.isEmpty else { return request.url }
        return request.url + "\u{0}" + (v.etag ?? "") + "\u{0}" + (v.lastModified ?? "")
    }
}

/// A coalescing key and its hash, computed once: the job table looks a
/// job up, inserts it and removes it, and hashing its URL each time cost
/// about 1,000 instructions a file.
struct JobKey: Hashable {
    let text: String
    let hash: Int

    init(_ text: String) {
        self.text = text
        hash = text.hashValue
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    static func == (a: JobKey, b: JobKey) -> Bool { a.hash == b.hash && a.text == b.text }
}

/// The jobs not yet completed, by coalescing key.
struct JobTable {
    private var jobs: [JobKey: DownloadJob] = [:]

    var count: Int { jobs.count }

    subscript(key: JobKey) -> DownloadJob? { jobs[key] }

    mutating func insert(_ job: DownloadJob) { jobs[job.tableKey] = job }

    /// One lookup, not two (look up, then remove).
    mutating func remove(_ job: DownloadJob) {
        if let i = jobs.index(forKey: job.tableKey), jobs.values[i] === job { jobs.remove(at: i) }
    }

    /// Empties the table, returning what it held.
    mutating func removeAll() -> [DownloadJob] {
        let all = Array(jobs.values)
        jobs = [:]
        return all
    }
}
