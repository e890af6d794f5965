import Foundation
import ImgWarmSupport
import ImgWarmDecode
import ImgWarmDownload
import ImgWarmCache

/// What the prefetcher needs of a download engine (the libcurl
/// `Downloader` in production).
public protocol DownloadEngine: AnyObject {
    func enqueue(_ request: DownloadRequest, completion: @escaping @Sendable (DownloadResult) -> Void)
    var outstandingCount: Int { get }
    func cancelAll()
    func waitUntilIdle()
    func shutdown()
}

extension Downloader: DownloadEngine {}

/// SDWebImageManager + SDWebImagePrefetcher for batch use: runs each entry
/// of a plan, in the plan's order, through the stages of `warm`: lookup
/// (CacheLookups), `Triage`, fetch (the engine, in arrival order), validate
/// (`ValidateStage`), store (`GatedStore`: the budget gate in front of a
/// `CacheStore`) and `Finish`. The coordinator itself only owns what spans
/// stages: back-pressure, cancellation and the engine's lifetime.
// @unchecked Sendable: its vars (`onFailure`, `onEntry`, `failedAtStart`, `recorder`) are set before run() starts the threads that read them; shared state lives in locked types.
public final class Prefetcher: @unchecked Sendable {
    public let plan: WarmPlan
    public let cache: DiskCache
    public let state: StateStore?
    public let engine: DownloadEngine
    public let options: WarmOptions
    public let ledger: RunLedger
    private let store: CacheStore
    private let validator: ValidateStage
    private let validationQueue: WorkerPool
    /// Entries only need their write: no decoding, and no budget gate
    /// whose ticket they would wait for.
    private let writesOnly: Bool
    /// Those writes run on the engine's thread (`RunThreads.storesOnEngine`).
    private let storesInline: Bool
    /// Back-pressure: one slot per requested entry until it is finished,
    /// so bodies in memory are bounded by concurrency, not the manifest.
    private let pipeline: SlotGate
    private let flags = RunFlags()
    private lazy var recorder = StateRecorder(state: state) { [weak self] in self?.onFailure?($0) }
    /// The failed-URL list as the run found it.
    private var failedAtStart = FailedURLSet()

    /// Failure lines go here as they happen (the CLI prints them).
    public var onFailure: (@Sendable (String) -> Void)?
    /// Every finished entry (verbose output).
    public var onEntry: (@Sendable (Int, EntryResult) -> Void)?

    /// `store`: where bodies are written; the cache itself unless a test
    /// puts faults in front of it.
    public init(plan: WarmPlan, cache: DiskCache, store: CacheStore? = nil, state: StateStore?, engine: DownloadEngine,
                options: WarmOptions, validate: @escaping ImageValidation) {
        self.plan = plan
        self.cache = cache
        self.store = store ?? cache
        self.state = state
        self.engine = engine
        self.options = options
        self.validator = ValidateStage(validate: validate, options: options.validation)
        self.ledger = RunLedger(entries: plan.count, problems: plan.problems.count)
        // The feeder is woken once per batch of finished entries, not per
        // entry; the batch leaves the engine enough to run (FeedWindow).
        self.pipeline = SlotGate(slots: max(1, options.pipelineDepth),
                                 wakeBatch: options.pipelineWakeBatch ?? options.pipelineDepth / 2)
        // Not with --budget: a decision of the gate runs the writes of later
        // entries waiting on it, large ones included, on the deciding thread.
        writesOnly = !options.validation.decode && options.budgetBytes == nil
        storesInline = writesOnly && options.storesOnEngine
        validationQueue = WorkerPool(threads: max(1, options.validationWorkers), name: "imgwarm.validation")
    }

    /// The one way a run stops early, from a signal handler (`fatal` nil)
    /// or a worker that hit a disk error: no new entry is fed, and the
    /// engine aborts what it holds (those entries end as skipped).
    public func cancel(fatal: ImgWarmError? = nil) {
        if let fatal { flags.setFatal(fatal) } else { flags.interrupt() }
        engine.cancelAll()
    }

    /// A disk error that makes the cache unusable (disk full).
    public var fatalError: ImgWarmError? { flags.fatal }

    /// Runs every entry of the plan to an outcome, then shuts the engine
    /// down. Blocks until done.
    public func run() {
        // Loaded also with --retry-failed: a success then has to take the
        // URL off the list, and only those URLs need that write.
        if let state, let failed = try? state.failedURLSet() { failedAtStart = failed }
        let gate = options.budgetBytes.map { BudgetGate(limit: $0, cacheDirectory: cache.directory) }
        let writer = GatedStore(store: store, gate: gate)
        recorder.start()
        for index in 0..<plan.count where plan.duplicate(of: index) != nil {
            var r = EntryResult()
            r.outcome = .duplicate
            ledger.record(index, r)
        }
        let lookups = CacheLookups(plan: plan, cache: cache, renewingHits: !options.dryRun)
        for position in 0..<plan.order.count {
            if flags.shouldStop { break }
            let index = Int(plan.order[position]), started = DispatchTime.now()
            let lookup = lookups.lookup(at: position)
            let url = plan.url(index), key = plan.key(index, url: url)
            if let refusal = cache.layout.refusal(url: url, key: key) {
                var r = EntryResult()
                r.outcome = .failed
                r.error = .invalidURL
                onFailure?("\(Redaction.url(url)): \(refusal)")
                record(index, r, started: started, reason: refusal)
                continue
            }
            let blocks = failedAtStart.contains(url)
            // A row that no longer blocks still goes once the URL succeeds.
            let wasFailed = blocks || failedAtStart.isListed(url)
            let decision = Triage.decide(existingBytes: lookup.existing?.size, isFailedURL: blocks,
                                         budgetSpent: gate?.isFull ?? false, options: options.triage) {
                (try? self.state?.validators(forKey: key)).flatMap { $0 }
                    .map { HTTPValidators(etag: $0.etag, lastModified: $0.lastModified) }
            }
            guard case .fetch(let validators) = decision else {
                record(index, Finish.triaged(decision) ?? EntryResult(), started: started,
                       path: unplanned(lookup.existing?.path, for: lookup.name))
                continue
            }
            pipeline.wait()
            if flags.shouldStop {
                pipeline.signal()
                break
            }
            let entry = Finish.Entry(url: url, key: key, wasFailed: wasFailed, replacesFile: lookup.existing != nil)
            fetch(index, entry, lookup, validators: validators, writer: writer, started: started)
        }
        lookups.stop()
        engine.waitUntilIdle()
        validationQueue.waitUntilIdle()
        recorder.stop()
        engine.shutdown()
        // Entries never reached (interrupt, disk full) end as skipped.
        for position in 0..<plan.order.count where ledger.result(Int(plan.order[position])).outcome == .pending {
            var r = EntryResult()
            r.outcome = .skipped
            r.error = .cancelled
            ledger.record(Int(plan.order[position]), r)
        }
    }

    private func fetch(_ index: Int, _ entry: Finish.Entry, _ lookup: CacheLookahead.Lookup, validators: HTTPValidators?,
                       writer: GatedStore, started: DispatchTime) {
        let request = DownloadRequest(url: entry.url, priority: plan.priority(index), validators: validators,
                                      hostKey: plan.hostKey(index))
        let ticket = writer.ticket()
        engine.enqueue(request) { [self] result in
            // The engine's thread. Decoding and writing go to the workers
            // so transfers never stall behind them; without decoding
            // (`--no-validate`) the rest is one file write, done right here
            // when the engine's threads fill the cores (`RunThreads`).
            if writesOnly {
                if storesInline { return finishWrite(index, entry, lookup, result, writer: writer, started: started) }
                return validationQueue.submit { [self] in
                    finishWrite(index, entry, lookup, result, writer: writer, started: started)
                }
            }
            let finishEntry = { [self] in
                let done = { [self] (verdict: Result<ImageInfo, ValidationFailure>?, stored: StoreResult?) in
                    finished(index, entry, lookup, result, verdict: verdict, stored: stored, started: started)
                }
                switch result {
                case .success(let response):
                    let verdict = validator.check(response.bodyBytes)
                    guard case .success = verdict else {
                        writer.pass(ticket)
                        return done(verdict, nil)
                    }
                    writer.write(response.bodyBytes, to: lookup, ticket: ticket, response: storedFacts(response, entry)) {
                        done(verdict, $0)
                    }
                case .notModified:
                    done(nil, writer.renew(lookup.name, ticket: ticket))
                case .failure:
                    writer.pass(ticket)
                    done(nil, nil)
                }
            }
            validationQueue.submit(finishEntry)
        }
    }

    /// `finishEntry` of an entry that only needs its write (no decoding,
    /// no budget gate, so no ticket to wait for), on the engine's thread or
    /// a worker: the same stages as methods, without the closures' contexts
    /// and copies of the result (about 3,500 instructions a file).
    private func finishWrite(_ index: Int, _ entry: Finish.Entry, _ lookup: CacheLookahead.Lookup,
                             _ result: DownloadResult, writer: GatedStore, started: DispatchTime) {
        switch result {
        case .success(let response):
            let verdict = validator.check(response.bodyBytes)
            guard case .success = verdict else {
                return finished(index, entry, lookup, result, verdict: verdict, stored: nil, started: started)
            }
            let stored = writer.writeNow(response.bodyBytes, to: lookup, response: storedFacts(response, entry))
            finished(index, entry, lookup, result, verdict: verdict, stored: stored, started: started)
        case .notModified:
            finished(index, entry, lookup, result, verdict: nil, stored: writer.renew(lookup.name, ticket: nil),
                     started: started)
        case .failure:
            finished(index, entry, lookup, result, verdict: nil, stored: nil, started: started)
        }
    }

    /// What a backend that keeps responses (OkHttp's cache) stores beside
    /// the body; nil for the others.
    private func storedFacts(_ response: DownloadResponse, _ entry: Finish.Entry) -> StoredResponse? {
        guard cache.backend.keepsResponses else { return nil }
        return StoredResponse.received(response, url: cache.layout.storedURL(url: entry.url, key: entry.key),
                                       now: Date().timeIntervalSince1970)
    }

    /// The last stage of every entry that was fetched: its outcome recorded.
    private func finished(_ index: Int, _ entry: Finish.Entry, _ lookup: CacheLookahead.Lookup, _ result: DownloadResult,
                          verdict: Result<ImageInfo, ValidationFailure>?, stored: StoreResult?, started: DispatchTime) {
        let out = Finish.outcome(of: entry, download: result, validation: verdict, store: stored,
                                 now: Date().timeIntervalSince1970)
        recorder.batch.add(out.changes)
        if let fatal = out.fatal { cancel(fatal: fatal) }
        if out.announce, let reason = out.reason { onFailure?("\(Redaction.url(entry.url)): \(reason)") }
        var path = lookup.existing?.path
        if case .stored(let written)? = stored { path = written }
        record(index, out.entry, started: started, reason: out.reason, image: out.image, response: out.response,
               path: out.entry.fileExists ? unplanned(path, for: lookup.name) : nil)
        // The slot is freed only when the entry is done, so bodies waiting
        // on the budget gate stay bounded.
        pipeline.signal()
    }

    /// `path` when it is not the one the cache plans for `name` (the
    /// ledger keeps only those).
    private func unplanned(_ path: String?, for name: CacheEntryName) -> String? {
        guard let path, path != cache.path(for: name) else { return nil }
        return path
    }

    private func record(_ index: Int, _ result: EntryResult, started: DispatchTime, reason: String? = nil,
                        image: ImageInfo? = nil, response: ResponseFacts? = nil, path: String? = nil) {
        var r = result
        r.milliseconds = UInt32(clamping: (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000)
        ledger.record(index, r, reason: reason, image: image, response: response, path: path)
        onEntry?(index, r)
    }
}
