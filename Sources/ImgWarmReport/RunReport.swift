import Foundation
import ImgWarmSupport

/// Everything about a finished run that reports are made of: one row per
/// manifest entry (usable or not), in manifest order, and the totals.
public struct RunReport {
    /// The rows, in manifest order (Warm joins its plan, its ledger and the
    /// cache's names into them).
    public let rows: any RunRows
    public let totals: any RunTotals
    /// The cache folder (the metrics' label).
    public let cacheDirectory: String
    public let dryRun: Bool
    /// Each host's traffic (`Downloader.hostFigures()`); empty on a dry run.
    public var hosts: [HostFigures] = []
    /// The run did not verify TLS certificates (`--insecure`): the JSON
    /// report says so at its top level.
    public var insecure = false
    /// When and why a blocked entry's URL failed before (the failed-URL
    /// list's row, JUnit); nil when not known.
    public var earlierFailure: (String) -> EarlierFailure? = { _ in nil }
    /// The bodies' memory and spill figures (`"bodies"`); nil in a dry run.
    public var bodies: BodyFigures?

    /// What the bodies of a run held: the budget (`--memory` less
    /// `--decode-memory`), the most charged at once, the transfers that
    /// paused for want of it, and what went to spill files (`spill`:
    /// "disk", "memory-filesystem" when `.imgwarm/tmp` is on tmpfs,
    /// "unsupported" without O_TMPFILE, "none").
    public struct BodyFigures: Sendable, Equatable {
        public var memoryLimit: Int
        public var memoryPeak: Int
        public var memoryPausedTransfers: Int
        public var spill: String
        public var spillThreshold: Int
        public var spilled: Int
        public var spilledBytes: Int
        public init(memoryLimit: Int, memoryPeak: Int, memoryPausedTransfers: Int, spill: String, spillThreshold: Int,
                    spilled: Int, spilledBytes: Int) {
            self.memoryLimit = memoryLimit
            self.memoryPeak = memoryPeak
            self.memoryPausedTransfers = memoryPausedTransfers
            self.spill = spill
            self.spillThreshold = spillThreshold
            self.spilled = spilled
            self.spilledBytes = spilledBytes
        }
    }

    public init(rows: any RunRows, totals: any RunTotals, cacheDirectory: String, dryRun: Bool = false) {
        self.rows = rows
        self.totals = totals
        self.cacheDirectory = cacheDirectory
        self.dryRun = dryRun
    }

    /// A row of the failed-URL list, as a blocked entry's JUnit failure
    /// tells it.
    public struct EarlierFailure: Sendable {
        public var failedAt: Double
        public var errorClass: String
        public var status: Int?
        public var reason: String
        public init(failedAt: Double, errorClass: String, status: Int?, reason: String) {
            self.failedAt = failedAt
            self.errorClass = errorClass
            self.status = status
            self.reason = reason
        }
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

        public init(url: String?, key: String?, file: String?, outcome: String, error: String?, status: Int?,
                    bytes: Int, format: String?, width: Int?, height: Int?, frames: Int?, contentType: String?,
                    attempts: Int, milliseconds: Int, source: String, reason: String?, manifest: String,
                    reencoded: Bool = false) {
            self.url = url
            self.key = key
            self.file = file
            self.outcome = outcome
            self.error = error
            self.status = status
            self.bytes = bytes
            self.format = format
            self.width = width
            self.height = height
            self.frames = frames
            self.contentType = contentType
            self.attempts = attempts
            self.milliseconds = milliseconds
            self.source = source
            self.reason = reason
            self.manifest = manifest
            self.reencoded = reencoded
        }
    }

    /// Calls `body` for each row: entries and unusable lines, by manifest
    /// and line number.
    public func forEachRow(_ body: (Row) throws -> Void) rethrows {
        try rows.forEachRow(body)
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
        let snap = totals.snapshot()
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

/// The rows of a run's report, in manifest order.
public protocol RunRows {
    func forEachRow(_ body: (RunReport.Row) throws -> Void) rethrows
}
