import ImgWarmSupport
import ImgWarmCache
import ImgWarmReport
// In Warm, not in Report: a row joins the plan, the ledger and the cache's
// names; the reports only render rows.

extension RunReport {
    public init(plan: WarmPlan, ledger: RunLedger, cache: DiskCache, dryRun: Bool = false) {
        self.init(rows: PlanRows(plan: plan, ledger: ledger, cache: cache), totals: ledger,
                  cacheDirectory: cache.directory, dryRun: dryRun)
    }

    /// The failed-URL list's rows, for the JUnit failures of blocked
    /// entries (looked up by `StateStore.storedForm` of the URL).
    public mutating func useEarlierFailures(_ failed: [StateStore.FailedURL]) {
        let byURL = Dictionary(failed.map { ($0.url, $0) }, uniquingKeysWith: { a, _ in a })
        earlierFailure = { url in
            byURL[StateStore.storedForm(url)].map {
                EarlierFailure(failedAt: $0.failedAt, errorClass: $0.errorClass, status: $0.status, reason: $0.reason)
            }
        }
    }
}

/// The report's rows of a run: every plan entry with its result, and the
/// manifest lines that could not be used.
struct PlanRows: RunRows {
    let plan: WarmPlan
    let ledger: RunLedger
    let cache: DiskCache

    /// Calls `body` for each row: entries and unusable lines, by manifest
    /// and line number.
    func forEachRow(_ body: (RunReport.Row) throws -> Void) rethrows {
        var problemIndex = 0
        let problems = plan.problems.sorted { ($0.source.fileIndex, $0.source.line) < ($1.source.fileIndex, $1.source.line) }
        func emitProblems(before source: ManifestSource?) throws {
            while problemIndex < problems.count {
                let p = problems[problemIndex]
                if let s = source, (p.source.fileIndex, p.source.line) > (s.fileIndex, s.line) { return }
                try body(RunReport.Row(url: nil, key: nil, file: nil, outcome: "failed", error: "invalid-url", status: nil, bytes: 0,
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
                file = ledger.path(winner) ?? cache.path(for: plan.entryName(index, in: cache))
            } else if r.outcome == .wouldDownload {
                file = cache.path(for: plan.entryName(index, in: cache))
            }
            let outcome = r.outcome == .pending ? "skipped" : r.outcome.name
            let dims = ledger.dimensions(winner)
            try body(RunReport.Row(
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

    private func manifestName(_ s: ManifestSource) -> String {
        let p = s.fileIndex < plan.manifestPaths.count ? plan.manifestPaths[s.fileIndex] : "?"
        return p == "-" ? "<stdin>" : p
    }
}
