import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The rows of `--report`: one per entry and per unusable line, in
/// manifest order; what each row takes from its own result and what from
/// the entry it duplicates; secrets masked; the JSON file's shape.
@Suite struct RunReportTests {
    /// One manifest `m.txt` of six entries and two unusable lines, with the
    /// results a run left, over a cache holding the downloaded entry.
    final class Run {
        let dir: String
        let plan: WarmPlan
        let ledger: RunLedger
        let cache: DiskCache
        let storedPath: String

        init() throws {
            let dir = makeTempDirectory("imgwarm-report")
            let plan = WarmPlan()
            let cache = DiskCache(directory: dir + "/cache")
            try cache.prepare()
            _ = plan.addManifestPath("m.txt")
            func entry(_ url: String, key: String? = nil, line: Int) -> ManifestEntry {
                ManifestEntry(url: url, key: key ?? url, priority: nil, source: ManifestSource(fileIndex: 0, line: line))
            }
            plan.add(entry("https://alice:pw@h.example/a.png?token=T", line: 1))
            plan.add(ManifestProblem(source: ManifestSource(fileIndex: 0, line: 2), reason: "unsupported scheme 'ftp'"))
            plan.add(entry("https://h.example/b.jpg", key: "custom-key", line: 3))
            plan.add(entry("https://alice:pw@h.example/a.png?token=T", line: 4))
            plan.add(entry("https://h.example/c.gif", line: 5))
            plan.add(entry("https://h.example/d.webp", line: 6))
            plan.add(entry("https://h.example/e.avif", line: 7))
            plan.add(ManifestProblem(source: ManifestSource(fileIndex: 0, line: 9), reason: "no host"))
            plan.finalize()
            let ledger = RunLedger(entries: plan.count, problems: plan.problems.count)

            var downloaded = EntryResult()
            downloaded.outcome = .downloaded
            downloaded.status = 200
            downloaded.bytes = 3
            downloaded.format = .png
            downloaded.fileExists = true
            downloaded.width = 4
            downloaded.height = 2
            downloaded.attempts = 1
            let storedPath = try cache.store([1, 2, 3], for: plan.entryName(0, in: cache))
            ledger.record(0, downloaded, image: ImageInfo(format: .png, width: 4, height: 2, frames: 1),
                          response: ResponseFacts(contentType: "image/png", vary: nil))

            var failed = EntryResult()
            failed.outcome = .failed
            failed.error = .httpStatus
            failed.status = 404
            failed.attempts = 1
            ledger.record(1, failed, reason: "HTTP 404")

            var duplicate = EntryResult()
            duplicate.outcome = .duplicate
            ledger.record(2, duplicate)

            // Entry 3 stays pending: the run was interrupted before it.

            var would = EntryResult()
            would.outcome = .wouldDownload
            ledger.record(4, would)

            var blocked = EntryResult()
            blocked.outcome = .blocked
            blocked.error = .badImage
            ledger.record(5, blocked)
            self.dir = dir
            self.plan = plan
            self.ledger = ledger
            self.cache = cache
            self.storedPath = storedPath
        }

        deinit { try? FileManager.default.removeItem(atPath: dir) }

        var rows: [RunReport.Row] {
            var rows: [RunReport.Row] = []
            RunReport(plan: plan, ledger: ledger, cache: cache).forEachRow { rows.append($0) }
            return rows
        }
    }

    /// Expected per row: source, outcome, error, status, url, key, file,
    /// bytes, format, reason.
    struct Expected: Sendable, CustomTestStringConvertible {
        let source: String, outcome: String, error: String?, status: Int?
        let url: String?, key: String?, file: File, bytes: Int, format: String?, reason: String?
        enum File: Sendable { case none, stored, planned }
        var testDescription: String { "\(source) \(outcome)" }
    }

    static let expected: [Expected] = [
        // Userinfo and token masked; the key is the URL: the same text.
        .init(source: "m.txt:1", outcome: "downloaded", error: nil, status: 200,
              url: "https://***@h.example/a.png?token=***", key: "https://***@h.example/a.png?token=***",
              file: .stored, bytes: 3, format: "png", reason: nil),
        // An unusable line: a failed row of its own, between the entries.
        .init(source: "m.txt:2", outcome: "failed", error: "invalid-url", status: nil, url: nil, key: nil,
              file: .none, bytes: 0, format: nil, reason: "unsupported scheme 'ftp'"),
        .init(source: "m.txt:3", outcome: "failed", error: "http-status", status: 404,
              url: "https://h.example/b.jpg", key: "custom-key", file: .none, bytes: 0, format: nil, reason: "HTTP 404"),
        // A duplicate shows the file, bytes and format of the entry it repeats.
        .init(source: "m.txt:4", outcome: "duplicate", error: nil, status: nil,
              url: "https://***@h.example/a.png?token=***", key: "https://***@h.example/a.png?token=***",
              file: .stored, bytes: 3, format: "png", reason: nil),
        // Never reached: reported as skipped, not pending.
        .init(source: "m.txt:5", outcome: "skipped", error: nil, status: nil,
              url: "https://h.example/c.gif", key: "https://h.example/c.gif", file: .none, bytes: 0, format: nil, reason: nil),
        // A dry run names where the file would go.
        .init(source: "m.txt:6", outcome: "would-download", error: nil, status: nil,
              url: "https://h.example/d.webp", key: "https://h.example/d.webp", file: .planned, bytes: 0, format: nil, reason: nil),
        .init(source: "m.txt:7", outcome: "blocked", error: "bad-image", status: nil,
              url: "https://h.example/e.avif", key: "https://h.example/e.avif", file: .none, bytes: 0, format: nil, reason: nil),
        // An unusable line after the last entry still comes out.
        .init(source: "m.txt:9", outcome: "failed", error: "invalid-url", status: nil, url: nil, key: nil,
              file: .none, bytes: 0, format: nil, reason: "no host"),
    ]

    @Test func rowsInManifestOrder() throws {
        let run = try Run()
        let rows = run.rows
        #expect(rows.map(\.source) == Self.expected.map(\.source))
        for (row, e) in zip(rows, Self.expected) {
            #expect(row.outcome == e.outcome, "\(e.source)")
            #expect(row.error == e.error, "\(e.source)")
            #expect(row.status == e.status, "\(e.source)")
            #expect(row.url == e.url, "\(e.source)")
            #expect(row.key == e.key, "\(e.source)")
            #expect(row.bytes == e.bytes, "\(e.source)")
            #expect(row.format == e.format, "\(e.source)")
            #expect(row.reason == e.reason, "\(e.source)")
            #expect(row.manifest == "m.txt", "\(e.source)")
            switch e.file {
            case .none: #expect(row.file == nil, "\(e.source)")
            case .stored: #expect(row.file == run.storedPath, "\(e.source)")
            case .planned: #expect(row.file == run.cache.path(for: run.plan.entryName(4, in: run.cache)), "\(e.source)")
            }
        }
        #expect(rows[0].width == 4 && rows[0].height == 2 && rows[0].frames == 1 && rows[0].contentType == "image/png")
    }

    /// The file is one JSON object: the rows as `entries`, `hosts`, and
    /// `totals` counting each outcome (unusable lines as failed), with no
    /// secret anywhere in it.
    @Test func jsonFileHoldsTheRowsAndTotals() throws {
        let run = try Run()
        let path = run.dir + "/report.json"
        try RunReport(plan: run.plan, ledger: run.ledger, cache: run.cache).writeJSON(to: path)
        let data = try #require(FileManager.default.contents(atPath: path))
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("alice") && !text.contains("pw@") && !text.contains("token=T"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require(json["entries"] as? [[String: Any]])
        #expect(entries.compactMap { $0["source"] as? String } == Self.expected.map(\.source))
        #expect(entries[2]["status"] as? Int == 404)
        #expect(entries[1]["url"] is NSNull)
        #expect((json["hosts"] as? [Any])?.isEmpty == true)
        #expect(json["insecure"] as? Bool == false)
        let totals = try #require(json["totals"] as? [String: Any])
        #expect(totals["entries"] as? Int == 8)
        #expect(totals["downloaded"] as? Int == 1)
        #expect(totals["failed"] as? Int == 3)
        #expect(totals["duplicate"] as? Int == 1)
        #expect(totals["blocked"] as? Int == 1)
        // Dry-run outcomes are counted only in a dry run's report.
        #expect(totals["would-download"] == nil)
        #expect(totals["bytes"] as? Int == 3)
        #expect(totals["dry_run"] as? Bool == false)
        let errors = try #require(totals["errors"] as? [String: Int])
        #expect(errors["invalid-url"] == 2 && errors["http-status"] == 1 && errors["bad-image"] == 1)
    }
}
