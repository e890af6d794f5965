import Foundation
import ImgWarmSupport

/// `--retry-from REPORT`: the failed entries of an earlier JSON report.
public enum ReportReader {
    /// Entries whose outcome was `failed` and that had a URL (unusable
    /// manifest lines have none and stay unusable), each with the key the
    /// report names. Reports mask credentials, tokens and fragments
    /// (`Redaction`), so an entry whose URL had them cannot be fetched, nor
    /// keyed, as the first run
    /// did: it comes back as a problem naming the entry, never under
    /// another key. "Line" N of the report is its Nth entry.
    public static func failedEntries(reportPath: String, fileIndex: Int, options: ManifestOptions) throws
        -> (entries: [ManifestEntry], problems: [ManifestProblem]) {
        guard let data = FileManager.default.contents(atPath: reportPath) else {
            throw ImgWarmError.report(path: reportPath, reason: "cannot read report")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let entries = root["entries"] as? [[String: Any]] else {
            throw ImgWarmError.report(path: reportPath, reason: "not an imgwarm JSON report (no \"entries\" array)")
        }
        var out: [ManifestEntry] = []
        var problems: [ManifestProblem] = []
        for (i, e) in entries.enumerated() {
            guard e["outcome"] as? String == "failed", let url = e["url"] as? String else { continue }
            let source = ManifestSource(fileIndex: fileIndex, line: i + 1)
            switch ParsedURL.parse(url) {
            case .failure(let p):
                problems.append(ManifestProblem(source: source, reason: "\(p.reason): \(TerminalText.clip(Redaction.url(url)))"))
            case .success(let parsed) where parsed.hasCredentials || Redaction.hasSecrets(parsed.absolute)
                || (e["key"] as? String).map(Redaction.hasSecrets) == true:
                problems.append(ManifestProblem(source: source, reason:
                    "the report has this URL without its credentials, tokens or fragment; warm its manifest line instead: \(TerminalText.clip(parsed.redacted))"))
            case .success(let parsed):
                out.append(ManifestReader.entry(parsed, key: e["key"] as? String, priority: nil, source: source, options: options))
            }
        }
        return (out, problems)
    }
}
