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
        /// Brought back from its host's parked heap (`unparkedWaiting`).
        var unparked = false

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
    /// Entries whose host could not start when they came up, by
    /// `HostKey.id` (an array: a dictionary of heaps cost a hash, a removal
    /// and a reinsertion of the heap at every park and unpark).
    private var parked: [Heap<Entry>] = []
    /// By `HostKey.id`: entries `unpark` moved into `ready` that have not
    /// come up yet. Each stands for a slot of its host expected free.
    private var unparkedWaiting: [Int] = []
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
    /// parked job back when the host has more free slots (`freeSlots`,
    /// counted after this start) than unparked entries already waiting in
    /// line for them, so a host keeps flowing until it is full, and a full
    /// host's jobs stay parked until `unpark`. (Bringing one back on every
    /// start had it refused and parked again whenever a pass started
    /// several jobs of a host: about 1,500 instructions a file with one
    /// host at its cap.)
    mutating func popStartable(admit: (DownloadJob) -> Bool,
                               freeSlots: (HostKey) -> Int = { _ in .max }) -> DownloadJob? {
        while let entry = ready.popMin() {
            let host = entry.job.hostKey
            if entry.unparked { unparkedWaiting[host.id] -= 1 }
            guard entry.isLive else {
                // Its slot goes to the host's next parked entry.
                if entry.unparked { unpark(host) }
                continue
            }
            guard admit(entry.job) else {
                park(entry, host)
                continue
            }
            entry.job.state = .inFlight
            if host.id < parked.count, !parked[host.id].isEmpty, freeSlots(host) > unparkedWaiting[host.id] {
                unpark(host)
            }
            return entry.job
        }
        return nil
    }

    private mutating func park(_ entry: Entry, _ host: HostKey) {
        if host.id >= parked.count {
            let added = host.id + 1 - parked.count
            parked += [Heap<Entry>](repeating: Heap(), count: added)
            unparkedWaiting += [Int](repeating: 0, count: added)
        }
        var entry = entry
        entry.unparked = false
        parked[host.id].insert(entry)
    }

    /// Brings `host`'s next parked job back into line.
    mutating func unpark(_ host: HostKey) {
        guard host.id < parked.count else { return }
        // In place: the heap is not copied out of the array.
        while var entry = parked[host.id].popMin() {
            if entry.isLive {
                entry.unparked = true
                unparkedWaiting[host.id] += 1
                ready.insert(entry)
                break
            }
        }
    }

    /// Whether jobs of `host` wait in the parked heap.
    func hasParked(_ host: HostKey) -> Bool { host.id < parked.count && !parked[host.id].isEmpty }

    /// Forgets every queued entry (cancellation).
    mutating func removeAll() {
        ready = Heap()
        parked = []
        unparkedWaiting = []
    }
}
