import Foundation

/// Everything about a finished run that reports are made of: one row per
/// manifest entry (usable or not), in manifest order, and the totals.
public struct RunReport {
    public let plan: WarmPlan
    public let ledger: RunLedger
    public let cache: DiskCache
    public let dryRun: Bool
    /// Each host's traffic (`Downloader.hostFigures()`); empty on a dry run.
    public var hosts: [HostFigures] = []
    /// The run did not verify TLS certificates (`--insecure`): the JSON
    /// report says so at its top level.
    public var insecure = false
    /// The bodies' memory and spill figures (`"bodies"`); nil in a dry run.
    public var bodies: BodyFigures?

    /// What the bodies of a run held: the budget (`--memory` less
    /// `--decode-memory`), the most charged at once, the transfers that
    /// paused for want of it, and what went to spill files (`mode`: "disk", "memory-filesystem"
    /// when `.imgwarm/tmp` is on tmpfs, "unsupported" without O_TMPFILE).
    public struct BodyFigures: Sendable, Equatable {
        public var memoryLimit: Int
        public var memoryPeak: Int
        public var memoryPausedTransfers: Int
        public var spill: String
        public var spillThreshold: Int
        public var spilled: Int
        public var spilledBytes: Int
        public init(memory: BodyMemory, spill: BodySpill?) {
            memoryLimit = memory.limit
            memoryPeak = memory.figures.peak
            memoryPausedTransfers = memory.pausedTransfers
            self.spill = spill?.mode ?? "none"
            spillThreshold = spill?.threshold ?? 0
            spilled = spill?.figures.bodies ?? 0
            spilledBytes = spill?.figures.bytes ?? 0
        }
    }
    /// The failed-URL list's rows by `StateStore.storedForm` of the URL:
    /// when and why a blocked entry failed before (JUnit).
    public var earlierFailures: [String: StateStore.FailedURL] = [:]

    public init(plan: WarmPlan, ledger: RunLedger, cache: DiskCache, dryRun: Bool = false) {
        self.plan = plan
        self.ledger = ledger
        self.cache = cache
        self.dryRun = dryRun
    }

    /// One report row.
    public struct Row {
        public var url: String?
        public var key: String?
        public var file: String?
        public var outcome: String
        public var error: String?
        public var status: Int?
        public var bytes: Int
        public var format: String?
        public var width: Int?
        public var height: Int?
        /// Frames of the image (1 for stills), nil when unknown.
        public var frames: Int?
        /// The response's Content-Type, as the server sent it.
        public var contentType: String?
        public var attempts: Int
        public var milliseconds: Int
        public var source: String
        public var reason: String?
        /// Which manifest the row came from (JUnit suites).
        public var manifest: String
        /// The manifest text had characters the app's `URL(string:)`
        /// percent-encodes (or a non-ASCII host): `url` is the encoded URL.
        public var reencoded = false
    }

    /// Calls `body` for each row: entries and unusable lines, by manifest
    /// and line number.
    public func forEachRow(_ body: (Row) throws -> Void) rethrows {
        var problemIndex = 0
        let problems = plan.problems.sorted { ($0.source.fileIndex, $0.source.line) < ($1.source.fileIndex, $1.source.line) }
        func emitProblems(before source: ManifestSource?) throws {
            while problemIndex < problems.count {
                let p = problems[problemIndex]
                if let s = source, (p.source.fileIndex, p.source.line) > (s.fileIndex, s.line) { return }
                try body(Row(url: nil, key: nil, file: nil, outcome: "failed", error: "invalid-url", status: nil, bytes: 0,
                             format: nil, width: nil, height: nil, frames: nil, contentType: nil, attempts: 0, milliseconds: 0,
                             source: plan.describe(p.source), reason: p.reason, manifest: manifestName(p.source)))
                problemIndex += 1
            }
        }
        for index in 0..<plan.count {
            let source = plan.source(index)
            try emitProblems(before: source)
            let winner = plan.duplicate(of: index) ?? index
            let r = ledger.result(index)
            let wr = winner == index ? r : ledger.result(winner)
            let key = plan.key(index)
            // The key is the URL itself for nearly every entry: redacted once.
            let url = plan.url(index), shownURL = Redaction.url(url)
            var file: String?
            // The name from the plan's MD5: the report hashes no key again.
            if wr.fileExists {
                file = cache.existingPath(for: plan.entryName(index, in: cache))
            } else if r.outcome == .wouldDownload {
                file = cache.path(for: plan.entryName(index, in: cache))
            }
            let outcome = r.outcome == .pending ? "skipped" : r.outcome.name
            let dims = ledger.dimensions(winner)
            try body(Row(
                url: shownURL, key: key == url ? shownURL : Redaction.url(key), file: file,
                outcome: outcome, error: r.error.name, status: r.status == 0 ? nil : Int(r.status),
                bytes: Int(wr.bytes), format: wr.format?.rawValue,
                width: dims?.0, height: dims?.1, frames: ledger.frames(winner),
                contentType: ledger.response(winner)?.contentType,
                attempts: Int(r.attempts), milliseconds: Int(r.milliseconds), source: plan.describe(source),
                reason: ledger.reason(index), manifest: manifestName(source), reencoded: plan.reencoded(index)))
        }
        try emitProblems(before: nil)
    }

    /// `{"host": ..., "requests": 812, "throttled_responses": 3, "rate_cuts": 1,
    /// "configured_rate": null, "throttled_rate": 180.0, "lowest_rate": 180.0,
    /// "concurrency_limit": 24, "peak_concurrency_limit": 64, "peak_in_flight": 64}`
    static func json(_ h: HostFigures) -> String {
        func num(_ d: Double?) -> String { d.map { String(format: "%.2f", $0) } ?? "null" }
        func int(_ i: Int?) -> String { i.map(String.init) ?? "null" }
        return "{\"host\": \(JSON.string(h.host)), \"requests\": \(h.requests), \"throttled_responses\": \(h.throttledResponses)"
            + ", \"rate_cuts\": \(h.rateCuts), \"configured_rate\": \(num(h.configuredRate))"
            + ", \"throttled_rate\": \(num(h.throttledRate)), \"lowest_rate\": \(num(h.lowestRate))"
            + ", \"concurrency_limit\": \(int(h.concurrencyLimit)), \"peak_concurrency_limit\": \(int(h.peakConcurrencyLimit))"
            + ", \"peak_in_flight\": \(h.peakInFlight)}"
    }

    private func manifestName(_ s: ManifestSource) -> String {
        let p = s.fileIndex < plan.manifestPaths.count ? plan.manifestPaths[s.fileIndex] : "?"
        return p == "-" ? "<stdin>" : p
    }

    /// `--report FILE`: `{"entries": [...], "totals": {...}}`.
    public func writeJSON(to path: String) throws {
        let w = try AtomicFileWriter(path: path)
        w.write("{\n  \"insecure\": \(insecure),\n  \"entries\": [")
        var first = true
        forEachRow { row in
            w.write(first ? "\n    " : ",\n    ")
            first = false
            var s = "{\"url\": \(JSON.optional(row.url)), \"key\": \(JSON.optional(row.key)), \"file\": \(JSON.optional(row.file))"
            s += ", \"outcome\": \(JSON.string(row.outcome)), \"error\": \(JSON.optional(row.error))"
            s += ", \"status\": \(row.status.map(String.init) ?? "null"), \"bytes\": \(row.bytes)"
            s += ", \"format\": \(JSON.optional(row.format)), \"width\": \(row.width.map(String.init) ?? "null")"
            s += ", \"height\": \(row.height.map(String.init) ?? "null"), \"frames\": \(row.frames.map(String.init) ?? "null")"
            s += ", \"content_type\": \(JSON.optional(row.contentType))"
            s += ", \"attempts\": \(row.attempts), \"ms\": \(row.milliseconds)"
            s += ", \"source\": \(JSON.string(row.source)), \"reason\": \(JSON.optional(row.reason))"
            s += ", \"reencoded\": \(row.reencoded)}"
            w.write(s)
        }
        let snap = ledger.snapshot()
        w.write(first ? "],\n" : "\n  ],\n")
        w.write("  \"hosts\": [" + hosts.map { "\n    " + Self.json($0) }.joined(separator: ",") + (hosts.isEmpty ? "],\n" : "\n  ],\n"))
        if let b = bodies {
            w.write("  \"bodies\": {\"memory_limit\": \(b.memoryLimit), \"memory_peak\": \(b.memoryPeak), "
                + "\"memory_paused_transfers\": \(b.memoryPausedTransfers), \"spill\": \(JSON.string(b.spill)), "
                + "\"spill_threshold\": \(b.spillThreshold), \"spilled\": \(b.spilled), \"spilled_bytes\": \(b.spilledBytes)},\n")
        }
        var totals = "  \"totals\": {\"entries\": \(snap.total)"
        for o in Outcome.allCases where o != .pending && (dryRun || !o.isDryRun) {
            totals += ", \(JSON.string(o.name)): \(snap[o])"
        }
        let errors = snap.errors.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\(JSON.string($0.key.name ?? "")): \($0.value)" }.joined(separator: ", ")
        totals += ", \"errors\": {\(errors)}"
        totals += ", \"bytes\": \(snap.bytesTotal), \"bytes_downloaded\": \(snap.bytesDownloaded)"
        totals += ", \"seconds\": \(String(format: "%.3f", snap.elapsed)), \"dry_run\": \(dryRun)}\n}\n"
        w.write(totals)
        try w.commit()
    }
}
