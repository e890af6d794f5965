import Foundation

/// `--retry-from REPORT`: the failed entries of an earlier JSON report.
public enum ReportReader {
    public struct ReadError: Error, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Entries whose outcome was `failed` and that had a URL (unusable
    /// manifest lines have none and stay unusable). URLs in reports have
    /// their credentials removed, so such URLs come back without them.
    public static func failedEntries(reportPath: String, fileIndex: Int, options: ManifestOptions) throws -> [ManifestEntry] {
        guard let data = FileManager.default.contents(atPath: reportPath) else {
            throw ReadError(path: reportPath, reason: "cannot read report")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let entries = root["entries"] as? [[String: Any]] else {
            throw ReadError(path: reportPath, reason: "not an imgwarm JSON report (no \"entries\" array)")
        }
        var out: [ManifestEntry] = []
        for (i, e) in entries.enumerated() {
            guard e["outcome"] as? String == "failed", let url = e["url"] as? String else { continue }
            let key = (e["key"] as? String) ?? (options.stripQueryFromKeys ? ManifestReader.strippingQuery(url) : url)
            out.append(ManifestEntry(url: url, key: key, priority: nil, source: ManifestSource(fileIndex: fileIndex, line: i + 1)))
        }
        return out
    }
}
