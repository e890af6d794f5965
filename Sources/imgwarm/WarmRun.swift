import ArgumentParser
import Foundation
import ImgWarmKit
#if canImport(Glibc)
import Glibc
#endif

/// One `warm` invocation: reads the manifests, runs the prefetcher with
/// progress and signals, writes the reports, returns the exit status.
struct WarmRun {
    let command: WarmCommand

    /// Raises the soft `ulimit -n` to what `concurrency` transfers need (up
    /// to the hard limit, which only root may raise); runs fewer transfers,
    /// with a warning, when they do not fit; stops with a clear error when
    /// not even one does (`RunDescriptors`).
    private func fitDescriptors(_ concurrency: Int, dryRun: Bool) throws -> Int {
        let limit = Descriptors.raiseLimit(to: RunDescriptors.wanted(concurrency: dryRun ? 1 : concurrency))
        guard let fit = RunDescriptors.transfers(concurrency: concurrency, limit: limit) else {
            throw ImgWarmError(.tooFewDescriptors(limit: limit, needed: RunDescriptors.wanted(concurrency: 1)))
        }
        if dryRun { return concurrency }
        if fit < concurrency {
            printError("warning: ulimit -n is \(limit): running \(fit) transfer\(fit == 1 ? "" : "s") at once, not \(concurrency) (each may take \(RunDescriptors.perTransfer) open files); raise ulimit -n for more")
        }
        return fit
    }

    func execute() throws -> Int32 {
        let c = command
        // First: nothing may open a descriptor before the limit is checked.
        var config = DownloaderConfiguration()
        try c.applyLimits(to: &config)
        config.concurrency = try fitDescriptors(config.concurrency, dryRun: c.dryRun)
        ErrorOutput.divertLibraryOutput(verbose: c.verbose)
        // Before any thread reads the list.
        Redaction.addQueryNames(c.redactQuery)
        if c.insecure {
            printError("warning: --insecure: TLS certificates and host names are not verified; anyone on the network path can serve these images (the report records it)")
        }
        BufferAllocator.tuneForBulkBuffers()
        let cache = try c.cacheOptions.existingCache(layout: c.layout(), writer: SlowWrites.writer(ProcessInfo.processInfo.environment))
        // A folder that holds something else (a home, a project) does not
        // become a cache by a warm into it.
        if !c.dryRun { try c.cacheOptions.requireRecognised(cache, force: c.force, purpose: .write) }
        // Prepare and check the folders, read the layout's index, lock,
        // clean, open the state: nothing in the cache changes before this
        // has passed.
        let session = try CacheSession(cache, for: c.dryRun ? .warmDryRun : .warm)
        defer { withExtendedLifetime(session) {} }
        let state = session.state
        // What later runs detect the layout by.
        if !c.dryRun, let folder = cache.stateFolder, let kind = cache.layout.builtInKind { LayoutRecord.recordIfMissing(kind, in: folder) }

        // Manifests → plan.
        let plan = WarmPlan(defaultPriority: c.priority.priority,
                            order: c.order,
                            shard: try c.shardSelection())
        var manifestOptions = ManifestOptions()
        manifestOptions.stripQueryFromKeys = c.keyStripQuery
        if let urlKeys = cache.layout.manifestKeyRule {
            if c.keyStripQuery { throw ImgWarmError.usage("--key-strip-query has no meaning under --layout \(cache.layout.name): \(urlKeys.why)") }
            manifestOptions.urlKeys = urlKeys
        }
        let inputs = c.inputs
        try PlanLoader(manifests: inputs.files, retryFrom: c.retryFrom, options: manifestOptions, urlArguments: inputs.urls)
            .load(into: plan, problem: { printError($0) })

        config.loops = c.downloadThreads
        let threads = RunThreads(cores: ProcessInfo.processInfo.activeProcessorCount, decode: !c.noValidate,
                                 requestedLoops: c.downloadThreads)
        config.cores = threads.engineCores
        config.timeout = c.timeout
        config.connectTimeout = c.connectTimeout
        config.maxBodyBytes = Int(clamping: c.maxBytes)
        config.retries = c.retries
        config.headerRules = try c.headerRules()
        if let ua = c.userAgent { config.userAgent = ua }
        config.insecure = c.insecure
        config.recordsResponseDetail = cache.layout.keepsResponseDetail
        config.allowHTTPRedirect = c.allowHTTPRedirect
        c.network.apply(to: &config, environment: ProcessInfo.processInfo.environment)

        var options = WarmOptions()
        options.refresh = c.refresh
        // --retry-from names entries that failed: fetching them is its point.
        options.retryFailed = c.retryFailed || !c.retryFrom.isEmpty
        options.validation.maxPixels = c.maxPixels
        let budget = RunMemory.split(memory: c.memory, decodeMemory: c.decodeMemory, defaultDecodeMemory: DecodeMemoryDefault.current())
        options.validation.decodeMemory = DecodeMemoryGate(limit: budget.decoders)
        config.bodyMemory = BodyMemory(limit: Int(clamping: budget.bodies))
        // Bodies past the threshold go to unnamed files in `.imgwarm/tmp`.
        if !c.dryRun, let temp = cache.tempFolder {
            config.bodySpill = BodySpill(folder: temp.fd, path: temp.path,
                                         threshold: SpillRule.threshold(bodiesBudget: Int(clamping: budget.bodies)))
        }
        options.validation.decodeTimeout = c.decodeTimeout
        options.validation.strictFormats = c.strictFormats
        options.validation.decode = !c.noValidate
        options.validationWorkers = threads.workers
        options.storesOnEngine = threads.storesOnEngine
        options.dryRun = c.dryRun
        options.budgetBytes = c.budget
        // Entries between the feeder and the end of validation, and when the
        // feeder wakes (FeedWindow says why).
        let window = FeedWindow(adaptive: config.adaptive, concurrency: config.concurrency,
                                validationWorkers: options.validationWorkers)
        options.pipelineDepth = window.depth
        options.pipelineWakeBatch = window.wakeBatch

        // -v: each host's limit and rate changes (set before the engine starts).
        let limitLog = LimitLog()
        if c.verbose && !c.quiet { config.onLimitChange = { line in limitLog.print(line) } }
        let warningLog = LimitLog()
        config.onWarning = { line in warningLog.print(line) }
        let downloader = c.dryRun ? nil : try Downloader(configuration: config)
        let engine: DownloadEngine = downloader ?? NoNetwork()
        let prefetcher = Prefetcher(plan: plan, cache: cache, store: cache, state: state, engine: engine,
                                    options: options, validate: ImageValidator.validate)
        let mode = c.quiet ? .none : c.progress
        let progress = ProgressPrinter(mode: mode, ledger: prefetcher.ledger)
        if let downloader {
            let meter = RequestRateMeter()
            progress.engineStatus = { meter.text(downloader.gauge()) }
        }
        limitLog.sink = { line in progress.printLine("imgwarm: " + line) }
        warningLog.sink = { line in progress.printLine("imgwarm: " + line) }
        prefetcher.onFailure = { line in progress.printLine("imgwarm: " + line) }
        if c.verbose && !c.quiet {
            let ledger = prefetcher.ledger
            prefetcher.onEntry = { index, r in
                var line = "\(r.outcome.name) \(Redaction.url(plan.url(index)))"
                if let e = r.error.name { line += " (\(e))" }
                if r.outcome == .downloaded {
                    line += ProgressPrinter.entryDetails(format: r.format, dimensions: ledger.dimensions(index),
                                                         frames: ledger.frames(index), response: ledger.response(index))
                }
                // The manifest text had characters the app's URL(string:)
                // percent-encodes: this is the URL it requests and keys by.
                if plan.reencoded(index) { line += " (re-encoded from \(plan.describe(plan.source(index))))" }
                progress.printLine(line)
            }
        }

        // A second signal exits at once: the bar is erased first, so the
        // shell's prompt does not land on a stale bar.
        let signals = SignalWatcher(onSignal: { _ in prefetcher.cancel() }, beforeExit: { progress.stop() })
        progress.start()
        prefetcher.run()  // shuts the engine down when done
        // The READ lines and touched dates still buffered.
        do { try cache.closeBackend() } catch { printError("\(error)") }
        progress.stop()
        signals.stop()

        var report = RunReport(plan: plan, ledger: prefetcher.ledger, cache: cache, dryRun: c.dryRun)
        report.hosts = downloader?.hostFigures() ?? []
        report.insecure = c.insecure
        if downloader != nil, let memory = config.bodyMemory {
            let spill = config.bodySpill, spilled = spill?.figures
            report.bodies = .init(memoryLimit: memory.limit, memoryPeak: memory.figures.peak,
                                  memoryPausedTransfers: memory.pausedTransfers, spill: spill?.mode ?? "none",
                                  spillThreshold: spill?.threshold ?? 0, spilled: spilled?.bodies ?? 0,
                                  spilledBytes: spilled?.bytes ?? 0)
        }
        if c.junit != nil, prefetcher.ledger.snapshot()[.blocked] > 0, let rows = try? state?.failedURLs() {
            report.useEarlierFailures(rows)
        }
        let snap = prefetcher.ledger.snapshot()
        var ending = WarmEnding(fatal: prefetcher.fatalError, signal: signals.received,
                                uniqueCount: plan.uniqueCount, outsideShard: plan.outsideShard,
                                hadProblems: !plan.problems.isEmpty, failed: snap[.failed], blocked: snap[.blocked], maxFailures: c.maxFailures,
                                done: snap.done - snap.errors[.cancelled, default: 0], total: snap.total)
        // The metrics say whether the run succeeded, before any report is written.
        let succeeded = WarmExit.decide(ending).status == ExitStatus.success
        var writeFailed = false
        func write(_ path: String?, _ body: (String) throws -> Void) {
            guard let path else { return }
            do { try body(path) } catch {
                printError("\(error)")
                writeFailed = true
            }
        }
        write(c.report) { try report.writeJSON(to: $0) }
        write(c.junit) { try report.writeJUnit(to: $0) }
        if !c.dryRun { write(c.metrics) { try report.writePrometheus(to: $0, succeeded: succeeded) } }
        if !c.quiet {
            print(ProgressPrinter.summary(snap, dryRun: c.dryRun))
            for line in HostSummary.throttledLines(report.hosts) { print(line) }
            if let shard = plan.shard {
                print("shard \(shard.index)/\(shard.count): \(plan.count) \(plan.count == 1 ? "entry" : "entries") here, \(plan.outsideShard) in other shards")
            }
            if let next = ProgressPrinter.whereToLook(report: c.report, failed: snap[.failed] + snap[.blocked], dryRun: c.dryRun,
                                                          cacheArguments: c.cacheOptions.explicitArguments) {
                print(TerminalText.escaped(next))
            }
        }
        if c.dryRun {
            // Dry runs list what they would fetch.
            if c.verbose { report.forEachRow { row in print(TerminalText.escaped("\(row.outcome) \(row.url ?? row.source)")) } }
        }

        ending.reportWriteFailed = writeFailed
        let warmExit = WarmExit.decide(ending)
        if let message = warmExit.message { printError(message) }
        return warmExit.status
    }
}

/// The engine of a dry run: never asked for anything.
final class NoNetwork: DownloadEngine {
    func enqueue(_ request: DownloadRequest, completion: @escaping @Sendable (DownloadResult) -> Void) {
        completion(.failure(DownloadFailure(errorClass: .cancelled, status: nil, message: "dry run", isTransient: true, attempts: 0, elapsed: 0)))
    }
    var outstandingCount: Int { 0 }
    func cancelAll() {}
    func waitUntilIdle() {}
    func shutdown() {}
}

/// SIGINT/SIGTERM: the first one stops the run cleanly (reports are still
/// written); a second one exits at once.
// @unchecked Sendable: `_received` only under `lock`; `sources` changes only in init and stop(), on the run's thread.
final class SignalWatcher: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let lock = NSLock()
    private var _received: Int32?
    var received: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return _received
    }

    init(onSignal: @escaping @Sendable (Int32) -> Void, beforeExit: @escaping @Sendable () -> Void = {}) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: DispatchQueue.global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                self.lock.lock()
                let first = self._received == nil
                if first { self._received = sig }
                self.lock.unlock()
                if first {
                    onSignal(sig)
                } else {
                    beforeExit()
                    Glibc.exit(128 + sig)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    func stop() {
        for s in sources { s.cancel() }
    }
}

/// `-v` lines of the engine's limit changes: printed above the progress
/// bar once it exists, on stderr before.
final class LimitLog: @unchecked Sendable {  // `sink` behind `lock`
    private let lock = NSLock()
    private var _sink: (@Sendable (String) -> Void)?
    var sink: (@Sendable (String) -> Void)? {
        get { lock.lock(); defer { lock.unlock() }; return _sink }
        set { lock.lock(); _sink = newValue; lock.unlock() }
    }

    func print(_ line: String) {
        if let sink { sink(line) } else { printError(line) }
    }
}
