import Foundation
import ImgWarmCache

/// The lookup stage: each plan position's cache file name and existing
/// file, from the lookahead's workers when the cache held files at the
/// start.
///
/// A cache with no entry at the start (one listing: `holdsEntries`) is
/// not looked into per file at all: every entry is a miss, and two failing
/// `stat` calls per file were most of a new cache's file-system work. The
/// case this gives up is a concurrent writer: another run storing the same
/// keys into the same cache at the same time. Its files are then not seen
/// here, so this run fetches them too; such a lookup is marked `unchecked`
/// and its store links an unnamed file in, or, when a file is at the name
/// by then, replaces it atomically: the name then holds the bytes this run
/// wrote and reports as downloaded, never a file someone else put there
/// while it downloaded. The cost is only the transfer.
///
/// Names come from the MD5 the plan computed for each key (SDWebImage's
/// names are that MD5), so a run hashes each key once.
final class CacheLookups {
    private let plan: WarmPlan
    private let cache: DiskCache
    private let lookahead: CacheLookahead?
    private let knownEmpty: Bool
    private var chunk: [CacheLookahead.Lookup]?
    private let renewingHits: Bool

    /// `renewingHits`: a hit renews the file's access time (off for dry runs).
    init(plan: WarmPlan, cache: DiskCache, renewingHits: Bool) {
        self.plan = plan
        self.cache = cache
        self.renewingHits = renewingHits
        knownEmpty = !cache.holdsEntries()
        // Only an existing cache has cached files to find.
        lookahead = knownEmpty ? nil : CacheLookahead(plan: plan, cache: cache, renewingHits: renewingHits)
        lookahead?.start(threads: ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Positions are asked for in order, each once.
    func lookup(at position: Int) -> CacheLookahead.Lookup {
        let name = { [plan, cache] in plan.entryName(Int(plan.order[position]), in: cache) }
        if knownEmpty { return CacheLookahead.Lookup(name: name(), existing: nil, unchecked: true) }
        let within = position % CacheLookahead.chunkSize
        if within == 0 { chunk = lookahead?.take(chunk: position / CacheLookahead.chunkSize) }
        return chunk?[within] ?? CacheLookahead.lookup(name(), in: cache, renewingHits: renewingHits)
    }

    func stop() { lookahead?.stop() }
}

/// The feed loop's cache lookups (file name and existing entry), done ahead
/// of it, a chunk of plan positions at a time, on one thread per core.
///
/// Why: on a cold page cache (a cron run, a cache volume just mounted) each
/// lookup of a cached file reads directory and inode-table blocks, and a
/// single feeder does them one after another. Measured here (ext4, 100,000
/// cached names, after drop_caches): stat from one thread 0.89 s, from two
/// 0.55 s. When everything is cached the name work also spreads over the
/// cores. Used only when
/// the cache folder held files at the start: in a new cache every lookup
/// misses, and looking ahead would only widen the gap between a lookup and
/// its use.
///
/// A lookup can be older than the feeder's use of it by at most
/// `chunksAhead` chunks; a file that a concurrent run writes in that gap is
/// downloaded again (the atomic store makes that harmless), as before.
// @unchecked Sendable: every mutable field only under `condition`; the rest is immutable.
final class CacheLookahead: @unchecked Sendable {
    struct Lookup {
        let name: CacheEntryName
        let existing: DiskCache.ExistingEntry?
        /// Not looked up (a cache empty at the start): `existing` is
        /// assumed nil, and the name most likely free at store time.
        var unchecked = false
    }

    static let chunkSize = 1024
    private let chunksAhead: Int
    private let plan: WarmPlan
    private let cache: DiskCache
    private let renewingHits: Bool
    private let chunkCount: Int

    private let condition = NSCondition()
    // Guarded by `condition`:
    private var nextChunk = 0
    private var feederChunk = 0
    private var inProgress = Set<Int>()
    private var ready: [Int: [Lookup]] = [:]
    private var stopped = false
    private var running = 0

    init(plan: WarmPlan, cache: DiskCache, renewingHits: Bool, chunksAhead: Int = 4) {
        self.plan = plan
        self.cache = cache
        self.renewingHits = renewingHits
        self.chunksAhead = max(1, chunksAhead)
        chunkCount = (plan.order.count + Self.chunkSize - 1) / Self.chunkSize
    }

    /// The one place where a `cached` hit is found. With `renewingHits`
    /// the hit renews the file's access time as the app's own disk hit does
    /// (off for dry runs, which touch nothing). The lookahead's workers
    /// renew ahead of the feeder, at most `chunksAhead` chunks early; an
    /// interrupted run may so have renewed entries it did not reach.
    static func lookup(_ name: CacheEntryName, in cache: DiskCache, renewingHits: Bool) -> Lookup {
        let existing = cache.existingEntry(for: name)
        if renewingHits, let existing { cache.recordHit(name, entry: existing) }
        return Lookup(name: name, existing: existing)
    }

    func start(threads: Int) {
        condition.lock()
        running = max(1, threads)
        condition.unlock()
        for _ in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "imgwarm.lookahead"
            thread.start()
        }
    }

    /// The lookups for chunk `chunk` (positions chunk*chunkSize ...), or nil
    /// when no worker has started on it: the feeder then looks up itself.
    func take(chunk: Int) -> [Lookup]? {
        condition.lock()
        defer {
            condition.broadcast()  // the window moved
            condition.unlock()
        }
        feederChunk = chunk
        while true {
            if let lookups = ready.removeValue(forKey: chunk) { return lookups }
            if inProgress.contains(chunk) {
                condition.wait()
                continue
            }
            // Not started: the workers must not start it now.
            if nextChunk <= chunk { nextChunk = chunk + 1 }
            return nil
        }
    }

    /// Stops the workers and waits for them.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        ready.removeAll()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            while !stopped && nextChunk < chunkCount && nextChunk > feederChunk + chunksAhead {
                condition.wait()
            }
            if stopped || nextChunk >= chunkCount { break }
            let chunk = nextChunk
            nextChunk += 1
            inProgress.insert(chunk)
            condition.unlock()

            let start = chunk * Self.chunkSize
            let end = min(start + Self.chunkSize, plan.order.count)
            var lookups: [Lookup] = []
            lookups.reserveCapacity(end - start)
            for position in start..<end {
                lookups.append(Self.lookup(plan.entryName(Int(plan.order[position]), in: cache), in: cache,
                                           renewingHits: renewingHits))
            }

            condition.lock()
            inProgress.remove(chunk)
            // A chunk the feeder has passed (it stopped early) is dropped.
            if chunk >= feederChunk { ready[chunk] = lookups }
            condition.broadcast()
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}
