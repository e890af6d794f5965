#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What the prefetcher needs of a download engine (the libcurl
/// `Downloader` in production).
public protocol DownloadEngine: AnyObject {
    func enqueue(_ request: DownloadRequest, completion: @escaping @Sendable (DownloadResult) -> Void)
    var outstandingCount: Int { get }
    func cancelAll()
    func waitUntilIdle()
    func shutdown()
}

public typealias ImageValidation = (UnsafeRawBufferPointer, ValidationOptions) -> Result<ImageInfo, ValidationFailure>

/// The flow options of `warm` (PRODUCT.md), independent of the CLI.
public struct WarmOptions: Sendable {
    public var refresh = false
    public var retryFailed = false
    public var validation = ValidationOptions()
    /// `--dry-run`: decide, never request or write.
    public var dryRun = false
    /// `--budget`: stop fetching new entries once the cache would pass it.
    public var budgetBytes: UInt64?
    /// Entries handed to the engine and not yet finished, at most; keeps
    /// memory bounded by concurrency, not by the manifest.
    public var pipelineDepth = 64
    /// Validation workers (off the network thread).
    public var validationWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)
    public init() {}
}

/// SDWebImageManager + SDWebImagePrefetcher for batch use: takes a plan of
/// manifest entries and turns each into an outcome — cached (no request),
/// blocked (failed-URL list), or downloaded, validated and stored
/// atomically — with state changes recorded in the state store.
public final class Prefetcher: @unchecked Sendable {
    public let plan: WarmPlan
    public let cache: DiskCache
    public let state: StateStore?
    public let engine: DownloadEngine
    public let options: WarmOptions
    public let ledger: RunLedger
    private let validate: ImageValidation

    private let validationQueue = OperationQueue()
    private let pipeline: DispatchSemaphore
    private let stateBatch = StateBatch()
    private let flags = RunFlags()
    /// The failed-URL list as the run found it.
    private var failedAtStart: Set<String> = []
    /// `--budget`: decides in feed order whether each new file fits.
    private var budgetGate: BudgetGate?

    /// Failure lines go here as they happen (the CLI prints them).
    public var onFailure: (@Sendable (String) -> Void)?
    /// Every finished entry (verbose output).
    public var onEntry: (@Sendable (Int, EntryResult) -> Void)?

    public init(plan: WarmPlan, cache: DiskCache, state: StateStore?, engine: DownloadEngine,
                options: WarmOptions, validate: @escaping ImageValidation) {
        self.plan = plan
        self.cache = cache
        self.state = state
        self.engine = engine
        self.options = options
        self.validate = validate
        self.ledger = RunLedger(entries: plan.count, problems: plan.problems.count)
        self.pipeline = DispatchSemaphore(value: max(1, options.pipelineDepth))
        validationQueue.maxConcurrentOperationCount = max(1, options.validationWorkers)
        validationQueue.name = "imgwarm.validation"
    }

    /// Stops feeding new entries; the caller also cancels the engine.
    public func interrupt() { flags.interrupt() }
    public var wasInterrupted: Bool { flags.isInterrupted }
    /// A disk error that makes the cache unusable (disk full).
    public var fatalError: CacheError? { flags.fatal }

    /// Runs every entry of the plan to an outcome. Blocks until done.
    public func run() {
        // Loaded also with --retry-failed: a success then has to take the
        // URL off the list, and only those URLs need that write.
        if let state, let failed = try? state.failedURLSet() { failedAtStart = failed }
        if let budget = options.budgetBytes {
            var used: UInt64 = 0
            CacheScanner.scan(cache.directory) { used += UInt64(max(0, $0.allocatedSize)) }
            budgetGate = BudgetGate(limit: budget, used: used)
        }
        let flusher = startStateFlusher()
        for index in 0..<plan.count {
            if plan.duplicate(of: index) != nil {
                var r = EntryResult()
                r.outcome = .duplicate
                ledger.record(index, r)
            }
        }

        // Only an existing cache has cached files to find.
        let lookahead = cache.holdsEntries() ? CacheLookahead(plan: plan, cache: cache) : nil
        lookahead?.start(threads: ProcessInfo.processInfo.activeProcessorCount)
        var chunk: [CacheLookahead.Lookup]?

        for position in 0..<plan.order.count {
            if flags.shouldStop { break }
            let index = Int(plan.order[position])
            let started = DispatchTime.now()
            let key = plan.key(index)
            let url = plan.url(index)
            let within = position % CacheLookahead.chunkSize
            if within == 0 { chunk = lookahead?.take(chunk: position / CacheLookahead.chunkSize) }
            let lookup = chunk?[within] ?? CacheLookahead.lookup(key, in: cache)
            let name = lookup.name
            let existing = lookup.existing

            if let existing, !options.refresh {
                var r = EntryResult()
                r.outcome = .cached
                r.bytes = UInt32(clamping: existing.size)
                r.fileExists = true
                finish(index, r, started: started)
                continue
            }
            if existing == nil && !options.retryFailed && failedAtStart.contains(url) {
                var r = EntryResult()
                r.outcome = .blocked
                finish(index, r, started: started)
                continue
            }
            if let gate = budgetGate, existing == nil {
                if gate.isFull {
                    var r = EntryResult()
                    r.outcome = .skipped
                    r.error = .budget
                    finish(index, r, started: started)
                    continue
                }
            }
            if options.dryRun {
                // Recorded as what would happen: the CLI reports it as such.
                var r = EntryResult()
                r.outcome = existing == nil ? .downloaded : .revalidated
                r.fileExists = existing != nil
                finish(index, r, started: started)
                continue
            }

            var validators: HTTPValidators?
            if existing != nil, let v = try? state?.validators(forKey: key) {
                validators = HTTPValidators(etag: v.etag, lastModified: v.lastModified)
            }
            pipeline.wait()
            if flags.shouldStop {
                pipeline.signal()
                break
            }
            let request = DownloadRequest(url: url, priority: plan.priority(index), validators: validators)
            let previousPath = existing?.path
            let ticket = budgetGate?.issue()
            engine.enqueue(request) { [self] result in
                // The engine's thread: decoding and disk writes go to the
                // validation workers so transfers never stall.
                validationQueue.addOperation { [self] in
                    // The pipeline slot is freed only when the entry is
                    // done, so bodies waiting on the budget gate stay bounded.
                    complete(index: index, key: key, url: url, name: name, previousPath: previousPath, result: result,
                             started: started, ticket: ticket) { [self] in pipeline.signal() }
                }
            }
        }
        lookahead?.stop()
        if flags.fatal != nil { engine.cancelAll() }
        engine.waitUntilIdle()
        validationQueue.waitUntilAllOperationsAreFinished()
        flusher.cancel()
        flushState()
        // Entries never reached (interrupt, disk full) end as skipped.
        for position in 0..<plan.order.count {
            let index = Int(plan.order[position])
            if ledger.result(index).outcome == .pending {
                var r = EntryResult()
                r.outcome = .skipped
                r.error = .cancelled
                ledger.record(index, r)
            }
        }
    }

    private func complete(index: Int, key: String, url: String, name: CacheEntryName, previousPath: String?,
                          result: DownloadResult, started: DispatchTime, ticket: Int?, done: @escaping () -> Void) {
        var r = EntryResult()
        var deferred = false
        defer {
            if !deferred {
                // Nothing to store: later entries need not wait for this one.
                if let ticket { budgetGate?.decide(ticket, size: nil) { _ in } }
                done()
            }
        }
        switch result {
        case .failure(let failure):
            r.outcome = failure.errorClass == .cancelled ? .skipped : .failed
            r.error = EntryError(failure.errorClass)
            r.status = UInt16(clamping: failure.status ?? 0)
            r.attempts = UInt8(clamping: failure.attempts)
            if failure.errorClass != .cancelled {
                report(index, url: url, reason: failure.message)
                if !failure.isTransient {
                    stateBatch.add(.failed(.init(url: url, key: key, errorClass: r.error.name ?? "", status: failure.status,
                                                 reason: failure.message, failedAt: Date().timeIntervalSince1970)))
                }
            }
            finish(index, r, started: started, reason: failure.message)

        case .notModified(let response):
            r.status = UInt16(clamping: response.status)
            r.attempts = UInt8(clamping: response.attempts)
            if let path = cache.existingPath(for: name) {
                cache.touch(path: path)
                r.outcome = .revalidated
                r.fileExists = true
                var st = stat()
                if stat(path, &st) == 0 { r.bytes = UInt32(clamping: Int64(st.st_size)) }
                recordSuccess(url: url, key: key, response: response, replacedFile: previousPath != nil)
                finish(index, r, started: started)
            } else {
                // The file went away between the check and the answer
                // (a concurrent prune); nothing to keep.
                r.outcome = .failed
                r.error = .httpStatus
                let reason = "304 Not Modified but the cached file was removed meanwhile"
                report(index, url: url, reason: reason)
                finish(index, r, started: started, reason: reason)
            }

        case .success(let response):
            r.status = UInt16(clamping: response.status)
            r.attempts = UInt8(clamping: response.attempts)
            let body = response.body
            let verdict: Result<ImageInfo, ValidationFailure> = body.withUnsafeBytes { raw in
                if raw.isEmpty { return .failure(ValidationFailure("empty body")) }
                return validate(raw, options.validation)
            }
            switch verdict {
            case .failure(let why):
                r.outcome = .failed
                r.error = .badImage
                r.bytes = UInt32(clamping: body.count)
                let reason = why.reason
                report(index, url: url, reason: reason)
                stateBatch.add(.failed(.init(url: url, key: key, errorClass: "bad-image", status: response.status,
                                             reason: reason, failedAt: Date().timeIntervalSince1970)))
                finish(index, r, started: started, reason: reason)
            case .success(let info):
                r.format = info.format
                r.width = UInt32(clamping: info.width ?? 0)
                r.height = UInt32(clamping: info.height ?? 0)
                r.bytes = UInt32(clamping: body.count)
                let facts = ResponseFacts(contentType: response.contentType, vary: response.vary)
                let store = { [self] in
                    do {
                        try cache.store(body, for: name, replacing: previousPath)
                        r.outcome = .downloaded
                        r.fileExists = true
                        recordSuccess(url: url, key: key, response: response, replacedFile: previousPath != nil)
                        finish(index, r, started: started, image: info, response: facts)
                    } catch let error as CacheError {
                        r.outcome = .failed
                        r.error = .disk
                        report(index, url: url, reason: error.description)
                        if error.isDiskFull || error.errno == EROFS || error.errno == EACCES { flags.setFatal(error) }
                        finish(index, r, started: started, reason: error.description)
                    } catch {
                        r.outcome = .failed
                        r.error = .disk
                        finish(index, r, started: started, reason: "\(error)")
                    }
                }
                guard let gate = budgetGate, let ticket else {
                    store()
                    return
                }
                // Replacing a cached file (--refresh) is not new room.
                let allocated: UInt64? = previousPath == nil ? UInt64((body.count + 4095) / 4096 * 4096) : nil
                deferred = true
                gate.decide(ticket, size: allocated) { [self] fits in
                    if fits {
                        store()
                    } else {
                        r.outcome = .skipped
                        r.error = .budget
                        finish(index, r, started: started, reason: "would pass the budget of \(gate.limit) bytes")
                    }
                    done()
                }
            }
        }
    }

    /// Only the state writes a success needs: most downloads are new,
    /// never failed, and carry no validators, so they write nothing.
    private func recordSuccess(url: String, key: String, response: DownloadResponse, replacedFile: Bool) {
        let validators = StateStore.Validators(key: key, etag: response.etag, lastModified: response.lastModified)
        let wasFailed = failedAtStart.contains(url)
        let hasValidators = validators.etag != nil || validators.lastModified != nil
        if wasFailed || hasValidators || replacedFile {
            stateBatch.add(.succeeded(url: url, validators: validators))
        }
    }

    private func finish(_ index: Int, _ result: EntryResult, started: DispatchTime, reason: String? = nil,
                        image: ImageInfo? = nil, response: ResponseFacts? = nil) {
        var r = result
        r.milliseconds = UInt32(clamping: (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000)
        ledger.record(index, r, reason: reason, image: image, response: response)
        onEntry?(index, r)
    }

    private func report(_ index: Int, url: String, reason: String) {
        onFailure?("\(Redaction.url(url)): \(reason)")
    }

    private func startStateFlusher() -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.flushState() }
        timer.resume()
        return timer
    }

    private let flushLock = NSLock()
    /// Commits pending state changes in one transaction.
    public func flushState() {
        flushLock.lock()
        defer { flushLock.unlock() }
        let changes = stateBatch.drain()
        guard let state, !changes.isEmpty else { return }
        do {
            try state.apply(changes)
        } catch {
            onFailure?("\(state.path): cannot record state: \(error)")
        }
    }
}

/// State changes waiting to be committed together.
final class StateBatch: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [StateStore.Change] = []
    func add(_ c: StateStore.Change) {
        lock.lock()
        changes.append(c)
        lock.unlock()
    }
    func drain() -> [StateStore.Change] {
        lock.lock()
        defer { lock.unlock() }
        let c = changes
        changes = []
        return c
    }
}

/// Why the feeder stops early: an interrupt, or a disk error that makes
/// the cache unusable. Set from signal handlers and workers.
final class RunFlags: @unchecked Sendable {
    private let lock = NSLock()
    private var interrupted = false
    private var fatalError: CacheError?

    func interrupt() {
        lock.lock()
        interrupted = true
        lock.unlock()
    }

    var isInterrupted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return interrupted
    }

    func setFatal(_ e: CacheError) {
        lock.lock()
        if fatalError == nil { fatalError = e }
        lock.unlock()
    }

    var fatal: CacheError? {
        lock.lock()
        defer { lock.unlock() }
        return fatalError
    }

    var shouldStop: Bool { isInterrupted || fatal != nil }
}

extension Downloader: DownloadEngine {}

/// `--budget` in priority order. Entries are fed highest priority first but
/// finish downloading and validating in any order; the gate decides whether
/// each new file fits strictly in feed order, so a low-priority image never
/// takes the room of a higher-priority one fed before it.
final class BudgetGate: @unchecked Sendable {
    let limit: UInt64
    private var used: UInt64
    private let lock = NSLock()
    private var issued = 0
    private var next = 0
    private var waiting: [Int: (size: UInt64?, then: (Bool) -> Void)] = [:]

    init(limit: UInt64, used: UInt64) {
        self.limit = limit
        self.used = used
    }

    /// A place in feed order, for an entry about to be requested.
    func issue() -> Int {
        lock.lock()
        defer { lock.unlock() }
        issued += 1
        return issued - 1
    }

    var isFull: Bool {
        lock.lock()
        defer { lock.unlock() }
        return used >= limit
    }

    /// Decides `ticket` once every earlier ticket is decided: `size` nil
    /// means nothing to store. `then` runs with whether it fits, possibly
    /// on the thread that decides a later-finishing earlier ticket.
    func decide(_ ticket: Int, size: UInt64?, _ then: @escaping (Bool) -> Void) {
        var ready: [((Bool) -> Void, Bool)] = []
        lock.lock()
        waiting[ticket] = (size, then)
        while let item = waiting.removeValue(forKey: next) {
            var fits = true
            if let s = item.size {
                fits = used + s <= limit
                if fits { used += s }
            }
            ready.append((item.then, fits))
            next += 1
        }
        lock.unlock()
        for (then, fits) in ready { then(fits) }
    }
}
