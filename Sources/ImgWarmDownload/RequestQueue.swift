import Collections

/// Decides which queued job starts next: highest priority first, then in
/// arrival order. The caller (the engine thread's scheduler) says whether a
/// job's host may start one more now; a job whose host may not is parked
/// under its host, and `unpark` brings that host's next job back when the
/// host may start again (a transfer ended, its limit rose, its rate has a
/// token). Heaps with lazy deletion keep every operation O(log n), so
/// thousands of queued requests cost a few dozen bytes each.
///
/// The order of entries is the caller's (`WarmPlan` feeds them in the
/// plan's order, FIFO or LIFO); the queue never reverses it.
struct RequestQueue {
    struct Entry: Comparable {
        let priority: Int
        let arrival: UInt64
        let token: UInt64
        let job: DownloadJob

        /// `a < b`: a runs before b (the heap's minimum runs next).
        static func < (a: Entry, b: Entry) -> Bool {
            if a.priority != b.priority { return a.priority > b.priority }
            if a.arrival != b.arrival { return a.arrival < b.arrival }
            return a.token < b.token
        }
        static func == (a: Entry, b: Entry) -> Bool { a.token == b.token }

        var isLive: Bool { job.state == .queued && job.queueToken == token }
    }

    private var ready = Heap<Entry>()
    /// Entries whose host could not start when they came up, by host.
    private var parked: [HostKey: Heap<Entry>] = [:]
    private var nextToken: UInt64 = 0

    /// Queues `job` at its priority and arrival (a retry keeps its arrival,
    /// so it keeps its place in line).
    mutating func push(_ job: DownloadJob) {
        nextToken += 1
        job.queueToken = nextToken
        job.state = .queued
        ready.insert(Entry(priority: job.priority.rawValue, arrival: job.arrival, token: nextToken, job: job))
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

    /// The next job whose host `admit` lets start (it is then counted by
    /// the caller and marked in flight); nil when nothing startable is
    /// queued. `admit` is asked once per entry that comes up; entries of a
    /// refused host are parked. A job that starts brings its host's next
    /// parked job back, so a host keeps flowing until it refuses.
    mutating func popStartable(admit: (DownloadJob) -> Bool) -> DownloadJob? {
        while let entry = ready.popMin() {
            guard entry.isLive else { continue }
            let host = entry.job.hostKey
            guard admit(entry.job) else {
                parked[host, default: Heap()].insert(entry)
                continue
            }
            entry.job.state = .inFlight
            unpark(host)
            return entry.job
        }
        return nil
    }

    /// Brings `host`'s next parked job back into line.
    mutating func unpark(_ host: HostKey) {
        // Most runs park nothing: no hashing of the host then.
        guard !parked.isEmpty, var waiting = parked.removeValue(forKey: host) else { return }
        while let entry = waiting.popMin() {
            if entry.isLive {
                ready.insert(entry)
                break
            }
        }
        if !waiting.isEmpty { parked[host] = waiting }
    }

    /// Whether jobs of `host` wait in the parked heap.
    func hasParked(_ host: HostKey) -> Bool { parked[host] != nil }

    /// Forgets every queued entry (cancellation).
    mutating func removeAll() {
        ready = Heap()
        parked = [:]
    }
}
