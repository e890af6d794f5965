import Collections

/// Decides which queued job starts next: highest priority first, FIFO or LIFO
/// within a priority, at most `concurrency` in flight and at most `perHost`
/// per host. Heaps with lazy deletion keep every operation O(log n), so
/// thousands of queued requests cost a few dozen bytes each.
struct RequestQueue {
    struct Entry: Comparable {
        let priority: Int
        /// Arrival for FIFO, negated arrival for LIFO: smaller runs first.
        let order: Int64
        let token: UInt64
        let job: DownloadJob

        /// `a < b`: a runs before b (the heap's minimum runs next).
        static func < (a: Entry, b: Entry) -> Bool {
            if a.priority != b.priority { return a.priority > b.priority }
            if a.order != b.order { return a.order < b.order }
            return a.token < b.token
        }
        static func == (a: Entry, b: Entry) -> Bool { a.token == b.token }

        var isLive: Bool { job.state == .queued && job.queueToken == token }
    }

    let concurrency: Int
    let perHost: Int?
    let lifo: Bool

    private var ready = Heap<Entry>()
    /// Entries whose host was at its limit when they came up, by host; one
    /// returns to `ready` each time a transfer to that host ends.
    private var parked: [String: Heap<Entry>] = [:]
    private var inFlightByHost: [String: Int] = [:]
    private(set) var inFlight = 0
    private var nextToken: UInt64 = 0

    init(concurrency: Int, perHost: Int?, order: ExecutionOrder) {
        self.concurrency = concurrency
        self.perHost = perHost
        self.lifo = order == .lifo
    }

    /// Queues `job` at its priority and arrival (a retry keeps its arrival,
    /// so it keeps its place in line).
    mutating func push(_ job: DownloadJob) {
        nextToken += 1
        job.queueToken = nextToken
        job.state = .queued
        let order = lifo ? -Int64(truncatingIfNeeded: job.arrival) : Int64(truncatingIfNeeded: job.arrival)
        ready.insert(Entry(priority: job.priority.rawValue, order: order, token: nextToken, job: job))
    }

    /// A queued job joined by a caller of higher priority moves to that
    /// priority as a new arrival; its old entry goes stale.
    mutating func raise(_ job: DownloadJob, to priority: RequestPriority, arrival: UInt64) {
        guard priority > job.priority else { return }
        job.priority = priority
        guard job.state == .queued else { return }
        job.arrival = arrival
        push(job)
    }

    /// The next job allowed to start, now counted in flight; nil when the
    /// limits are reached or nothing startable is queued.
    mutating func popStartable() -> DownloadJob? {
        while inFlight < concurrency, let entry = ready.popMin() {
            guard entry.isLive else { continue }
            let host = entry.job.hostKey
            if let limit = perHost, inFlightByHost[host, default: 0] >= limit {
                parked[host, default: Heap()].insert(entry)
                continue
            }
            inFlight += 1
            if perHost != nil { inFlightByHost[host, default: 0] += 1 }
            entry.job.state = .inFlight
            return entry.job
        }
        return nil
    }

    /// A transfer of `job` ended (whatever the outcome): frees its slots.
    mutating func transferEnded(_ job: DownloadJob) {
        inFlight -= 1
        guard perHost != nil else { return }
        let host = job.hostKey
        let left = inFlightByHost[host, default: 1] - 1
        inFlightByHost[host] = left > 0 ? left : nil
        guard var waiting = parked.removeValue(forKey: host) else { return }
        while let entry = waiting.popMin() {
            if entry.isLive {
                ready.insert(entry)
                break
            }
        }
        if !waiting.isEmpty { parked[host] = waiting }
    }

    /// Forgets every queued entry (cancellation). Slots of transfers still
    /// in flight are released by `transferEnded` or `removeAll`.
    mutating func removeAll() {
        ready = Heap()
        parked = [:]
        inFlightByHost = [:]
        inFlight = 0
    }
}
