#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// An engine for the coordinator's tests: starts requests in arrival order
/// with `concurrency` in flight, and completes the ones in flight in a
/// seeded random order on its own thread, like transfers that end as the
/// network pleases. Bodies: `size(url)` bytes.
final class FakeEngine: DownloadEngine, @unchecked Sendable {
    private let condition = NSCondition()
    private var queued: [(DownloadRequest, @Sendable (DownloadResult) -> Void)] = []
    private var inFlight: [(DownloadRequest, @Sendable (DownloadResult) -> Void)] = []
    private var running = 0
    private var stopped = false
    private var cancelled = false
    private(set) var arrivals: [String] = []
    private(set) var cancelCalls = 0
    private(set) var shutdownCalls = 0
    /// The thread that runs the completions.
    private(set) var threadID: pthread_t = 0
    private var rng: UInt64
    let concurrency: Int
    let size: (String) -> Int

    init(concurrency: Int, seed: UInt64, size: @escaping (String) -> Int) {
        self.concurrency = concurrency
        self.rng = seed
        self.size = size
        Thread { [self] in loop() }.start()
    }

    func enqueue(_ request: DownloadRequest, completion: @escaping @Sendable (DownloadResult) -> Void) {
        condition.lock()
        arrivals.append(request.url)
        queued.append((request, completion))
        condition.broadcast()
        condition.unlock()
    }

    var outstandingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queued.count + inFlight.count + running
    }

    func cancelAll() {
        condition.lock()
        cancelled = true
        cancelCalls += 1
        condition.broadcast()
        condition.unlock()
    }

    func waitUntilIdle() {
        condition.lock()
        while !queued.isEmpty || !inFlight.isEmpty || running > 0 { condition.wait() }
        condition.unlock()
    }

    func shutdown() {
        condition.lock()
        stopped = true
        shutdownCalls += 1
        condition.broadcast()
        condition.unlock()
    }

    private func next() -> UInt64 {
        rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return rng >> 33
    }

    private func loop() {
        condition.lock()
        threadID = pthread_self()
        while true {
            while !stopped && queued.isEmpty && inFlight.isEmpty { condition.wait() }
            if stopped && queued.isEmpty && inFlight.isEmpty { break }
            while inFlight.count < concurrency && !queued.isEmpty { inFlight.append(queued.removeFirst()) }
            let (request, completion) = inFlight.remove(at: Int(next() % UInt64(inFlight.count)))
            let result: DownloadResult = cancelled
                ? .failure(DownloadFailure(errorClass: .cancelled, status: nil, message: "cancelled", isTransient: true, attempts: 1, elapsed: 0))
                : .success(DownloadResponse(status: 200, body: [UInt8](repeating: 7, count: size(request.url))))
            running += 1
            condition.unlock()
            if next() % 4 == 0 { usleep(UInt32(next() % 500)) }
            completion(result)
            condition.lock()
            running -= 1
            condition.broadcast()
        }
        condition.unlock()
    }
}

/// A store that records what it writes, and fails from its `failFrom`-th
/// write on with `error` (a fault a test injects through the protocol).
final class RecordingStore: CacheStore, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var written: [String] = []
    /// The thread each write ran on.
    private(set) var threads: [pthread_t] = []
    let failFrom: Int?
    let error: ImgWarmError

    init(failFrom: Int? = nil, error: ImgWarmError = ImgWarmError.cache(path: "/full", reason: "No space left on device", errno: ENOSPC)) {
        self.failFrom = failFrom
        self.error = error
    }

    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?, likelyNew: Bool) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let failFrom, written.count + 1 >= failFrom { throw error }
        written.append(name.storedName)
        threads.append(pthread_self())
        return "/recorded/" + name.storedName
    }

    func renew(_ name: CacheEntryName) -> Int64? { nil }
}

@Suite struct PrefetcherTests {
    /// 120 entries: every third high priority, every fifth low, the rest
    /// normal; sizes between 1 and 4 pages (allocated size = pages).
    static func makePlan(order: ExecutionOrder) -> (WarmPlan, [String: Int]) {
        let plan = WarmPlan(defaultPriority: .normal, order: order)
        _ = plan.addManifestPath("m.txt")
        var sizes: [String: Int] = [:]
        for i in 0..<120 {
            let url = "https://img.example/\(i).png"
            let priority: RequestPriority? = i % 3 == 0 ? .high : i % 5 == 0 ? .low : nil
            plan.add(ManifestEntry(url: url, key: url, priority: priority, source: ManifestSource(fileIndex: 0, line: i + 1)))
            sizes[url] = 4096 * (1 + (i * 7) % 4) - 100
        }
        plan.finalize()
        return (plan, sizes)
    }

    static func emptyCache() -> DiskCache {
        let dir = NSTemporaryDirectory() + "imgwarm-prefetcher-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return DiskCache(directory: dir)
    }

    /// `--budget` with `-j 8` and `--order lifo`: bodies finish in any
    /// order, yet what is stored is exactly what fits taking entries in
    /// the plan's order (high first, newest first within a priority).
    @Test(arguments: [1, 2, 3]) func budgetIsSpentInPlanOrderWithEightTransfersAndLIFO(seed: UInt64) throws {
        let (plan, sizes) = Self.makePlan(order: .lifo)
        let cache = Self.emptyCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let engine = FakeEngine(concurrency: 8, seed: seed) { sizes[$0]! }
        let store = RecordingStore()
        var options = WarmOptions()
        options.budgetBytes = 40 * 4096
        options.pipelineDepth = 2 * 8 + 2
        options.validationWorkers = 4
        let prefetcher = Prefetcher(plan: plan, cache: cache, store: store, state: nil, engine: engine, options: options,
                                    validate: { _, _ in .success(ImageInfo(format: .png, width: 1, height: 1)) })
        prefetcher.run()

        // Plan order: priority, then newest first.
        let planURLs = plan.order.map { plan.url(Int($0)) }
        let priorities = plan.order.map { plan.priority(Int($0)).rawValue }
        #expect(priorities == priorities.sorted(by: >))
        #expect(planURLs.first == "https://img.example/117.png")  // the last high-priority line
        // The engine got requests in exactly that order (a prefix of it:
        // once the budget is spent, later entries are not requested).
        #expect(engine.arrivals == Array(planURLs.prefix(engine.arrivals.count)))
        #expect(engine.shutdownCalls == 1)

        // What fits, deciding in plan order.
        var used: UInt64 = 0
        var expected: [String] = []
        for url in planURLs {
            let allocated = UInt64((sizes[url]! + 4095) / 4096 * 4096)
            if used + allocated <= options.budgetBytes! {
                used += allocated
                expected.append(url)
            }
        }
        #expect(expected.count < planURLs.count && expected.count > 10)
        let storedNames = Set(store.written)
        #expect(storedNames == Set(expected.map { SDWebImageLayout().entryName(forKey: $0).storedName }))
        for (position, url) in planURLs.enumerated() {
            let r = prefetcher.ledger.result(Int(plan.order[position]))
            if expected.contains(url) {
                #expect(r.outcome == .downloaded, "\(url)")
            } else {
                #expect(r.outcome == .skipped && r.error == .budget, "\(url)")
            }
        }
    }

    /// A disk-full write (injected through the store protocol) stops the
    /// run: fatal error set, one cancel of the engine, nothing left pending.
    @Test func aFullDiskStopsTheRunThroughOneCancel() throws {
        let (plan, sizes) = Self.makePlan(order: .fifo)
        let cache = Self.emptyCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let engine = FakeEngine(concurrency: 8, seed: 9) { sizes[$0]! }
        let store = RecordingStore(failFrom: 10)
        var options = WarmOptions()
        options.pipelineDepth = 4
        let prefetcher = Prefetcher(plan: plan, cache: cache, store: store, state: nil, engine: engine, options: options,
                                    validate: { _, _ in .success(ImageInfo(format: .png)) })
        prefetcher.run()
        #expect(prefetcher.fatalError?.isDiskFull == true)
        #expect(engine.cancelCalls >= 1)
        #expect(store.written.count == 9)
        let snap = prefetcher.ledger.snapshot()
        #expect(snap[.downloaded] == 9)
        #expect(snap.errors[.disk, default: 0] >= 1)
        #expect(snap.done == plan.count)
        // Most entries were never requested: the feeder stopped.
        #expect(engine.arrivals.count < plan.count / 2)
    }

    /// Without decoding, each entry's write runs on a store worker, or on
    /// the engine's thread that completed it when `RunThreads` says the
    /// engine fills the cores; either way every entry is stored once.
    @Test(arguments: [false, true]) func noValidateStoresOnAWorkerOrOnTheEngine(onEngine: Bool) throws {
        let (plan, sizes) = Self.makePlan(order: .fifo)
        let cache = Self.emptyCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let engine = FakeEngine(concurrency: 8, seed: 5) { sizes[$0]! }
        let store = RecordingStore()
        var options = WarmOptions()
        options.validation.decode = false
        options.validationWorkers = 1
        options.storesOnEngine = onEngine
        options.pipelineDepth = 2 * 8 + 1
        let prefetcher = Prefetcher(plan: plan, cache: cache, store: store, state: nil, engine: engine, options: options,
                                    validate: { _, _ in .success(ImageInfo(format: .png)) })
        prefetcher.run()
        #expect(prefetcher.ledger.snapshot()[.downloaded] == plan.count)
        #expect(Set(store.written).count == plan.count && store.written.count == plan.count)
        let onEngineThread = store.threads.filter { $0 == engine.threadID }.count
        #expect(onEngineThread == (onEngine ? plan.count : 0))
    }

    @Test func dryRunRequestsNothingAndRecordsNoDownload() throws {
        let (plan, _) = Self.makePlan(order: .fifo)
        let cache = Self.emptyCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        let engine = FakeEngine(concurrency: 8, seed: 1) { _ in 1 }
        var options = WarmOptions()
        options.dryRun = true
        let prefetcher = Prefetcher(plan: plan, cache: cache, store: RecordingStore(), state: nil, engine: engine,
                                    options: options, validate: { _, _ in .success(ImageInfo(format: .png)) })
        prefetcher.run()
        let snap = prefetcher.ledger.snapshot()
        #expect(engine.arrivals.isEmpty)
        #expect(snap[.wouldDownload] == plan.count && snap[.downloaded] == 0 && snap.bytesDownloaded == 0)
    }
}

/// A process that warms again and again (a service, a test runner) keeps
/// nothing of a finished run open: after each run, with large bodies
/// spilled to unnamed files and mapped, no descriptor names anything under
/// the cache folder (the lock, the journal or database, the state
/// database, the spill files, the folders), and the server sees every
/// connection closed. Counted by what each descriptor names, so the other
/// tests of this process do not count.
@Suite struct PrefetcherDescriptorTests {
    @Test(arguments: CacheLayoutKind.allCases)
    func runsOneAfterAnotherLeaveNoDescriptorOpen(_ kind: CacheLayoutKind) throws {
        let dir = makeTempDirectory("imgwarm-descriptors")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        server.setFile("/big.png", bytes: TinyPNG.make(width: 720, height: 720, seed: 3), contentType: "image/png")
        for i in 0..<4 { server.setFile("/\(i).png", bytes: TinyPNG.make(seed: i), contentType: "image/png") }
        let urls = ["/0.png", "/1.png", "/2.png", "/3.png", "/big.png", "/gzip/big.png", "/status/404", "/huge-length/1500000"]
            .map(server.url)
        for round in 0..<5 {
            let spilled = try warm(urls, into: dir, kind: kind, refresh: round > 0)
            #expect(spilled >= 2, "round \(round)")
            #expect(openDescriptors(under: dir).isEmpty, "round \(round): \(openDescriptors(under: dir))")
            let deadline = Date().addingTimeInterval(5)
            while server.openConnections > 0 && Date() < deadline { usleep(10_000) }
            #expect(server.openConnections == 0, "round \(round)")
        }
    }

    /// One warm as `imgwarm warm` runs it, every object released on
    /// return; the number of bodies that went to a file.
    private func warm(_ urls: [String], into dir: String, kind: CacheLayoutKind, refresh: Bool) throws -> Int {
        let cache = DiskCache(directory: dir, layout: kind.layout())
        let plan = WarmPlan(defaultPriority: .normal, order: .fifo)
        _ = plan.addManifestPath("manifest.txt")
        for (i, url) in urls.enumerated() {
            plan.add(ManifestEntry(url: url, key: url, priority: nil, source: ManifestSource(fileIndex: 0, line: i + 1)))
        }
        plan.finalize()
        let session = try CacheSession(cache, for: .warm)
        let temp = try #require(cache.tempFolder)
        let spill = try #require(BodySpill(folder: temp.fd, path: temp.path, threshold: SpillRule.largestThreshold))
        let downloader = try Downloader(configuration: testConfiguration {
            $0.bodySpill = spill
            $0.retries = 0
        })
        var options = WarmOptions()
        options.refresh = refresh
        options.retryFailed = true
        let prefetcher = Prefetcher(plan: plan, cache: cache, state: session.state, engine: downloader, options: options,
                                    validate: ImageValidator.validate)
        prefetcher.run()
        try cache.closeBackend()
        withExtendedLifetime(session) {}
        let snap = prefetcher.ledger.snapshot()
        #expect(snap[.downloaded] == 6 && snap[.failed] == 2, "\(kind)")
        return spill.figures.bodies
    }
}
